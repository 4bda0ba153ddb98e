"""Read check suites (``checks/*.yaml``) into checks, with errors that name file, line and field.

A suite is validated whole before any query runs; every problem found is reported at once. A folder
stands for every ``*.yaml`` / ``*.yml`` file below it (:func:`expand_suite_paths`), and a set of suites
that holds no check at all is refused unless allowed, so a CI gate cannot pass by checking nothing.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, get_type_hints

import yaml

import watchdog.scan.incremental  # noqa: F401  (registers the `incremental` table option)
from watchdog.errors import ConfigError, did_you_mean
from watchdog.scan.anomaly_series import suite_problems
from watchdog.scan.check_types import Check, check_types
from watchdog.scan.check_types.fields import OptionsError
from watchdog.scan.column_globs import ColumnsProblem, as_template, per_column
from watchdog.scan.sqlbuild import split_name
from watchdog.scan.table_options import CHECKS_KEY, NO_OPTIONS, conflicts, frozen, names, table_options
from watchdog.yaml_lines import DuplicateKeyError, YamlLines, dotted, load_with_lines

TOP_LEVEL_KEYS = ("tables", "custom_sql", "allow_empty", "owner", "owners", "tags")
#: options that have fields of their own in a finding, so they are not repeated in ``params``
NOT_PARAMS = {"name", "description", "severity", "column", "columns"}


@dataclass
class Suite:
    path: Path
    checks: list[Check] = field(default_factory=list)
    #: the suite says ``allow_empty: true`` (it may hold no check)
    allow_empty: bool = False


@dataclass(frozen=True)
class SuiteSource:
    """A suite that is not a file: YAML ``text`` or an already parsed mapping (``data``), called ``name`` in
    error messages and in findings.json's ``suites`` (a mapping's problems have no line number)."""

    name: str
    text: str | None = None
    data: Any = None


@dataclass
class SuiteProblem:
    path: Path | None  #: None: a problem of the set of suites, not of one file
    line: int | None
    where: str
    message: str

    def __str__(self) -> str:
        location = f"{self.path}:{self.line}" if self.line else str(self.path or "")
        parts = [p for p in (location, self.where, self.message) if p]
        return ": ".join(parts)


class SuiteError(ConfigError):
    """One or more problems in check suites; ``problems`` lists them all."""

    def __init__(self, problems: Sequence[SuiteProblem]):
        self.problems = list(problems)
        head = f"{len(self.problems)} problem(s) in check suites:" if len(self.problems) > 1 else "invalid check suite:"
        super().__init__(head + "".join(f"\n  {p}" for p in self.problems))


SUITE_SUFFIXES = (".yaml", ".yml")


def expand_suite_paths(paths: Iterable[str | Path]) -> list[Path]:
    """Files as given; a folder stands for every ``*.yaml`` / ``*.yml`` file below it, at any depth, in
    the order of their paths relative to the folder, compared as text (``a.yaml``, ``sales/orders.yaml``,
    ``z.yaml``). Names starting with ``.`` (``.git``, editor files) are skipped, and so are links to
    folders (a link to a file is read). A file reached twice is read once."""
    out: dict[Path, None] = {}
    for item in paths:
        path = Path(item)
        if not path.is_dir():
            out.setdefault(path, None)
            continue
        found: list[tuple[str, Path]] = []
        for folder, dirs, files in os.walk(path):
            dirs[:] = [d for d in dirs if not d.startswith(".")]
            for name in files:
                if name.endswith(SUITE_SUFFIXES) and not name.startswith("."):
                    full = Path(folder) / name
                    found.append((full.relative_to(path).as_posix(), full))
        for _, full in sorted(found):
            out.setdefault(full, None)
    seen: set[Path] = set()
    unique = []
    for path in out:
        key = path.resolve() if path.exists() else path
        if key not in seen:
            seen.add(key)
            unique.append(path)
    return unique


def load_suites(paths: Iterable[str | Path | SuiteSource], *, allow_empty: bool = False) -> list[Suite]:
    """Load every suite (folders expanded by :func:`expand_suite_paths`; :class:`SuiteSource` text and
    mappings read as given); raise :class:`SuiteError` listing all problems, duplicate check names across
    files included. Suites that hold no check at all are refused unless ``allow_empty`` (or every suite says
    ``allow_empty: true``)."""
    given = list(paths)
    sources = [g for g in given if isinstance(g, SuiteSource)]
    suites: list[Suite] = []
    problems: list[SuiteProblem] = []
    items: list[Path | SuiteSource] = [*expand_suite_paths([g for g in given if not isinstance(g, SuiteSource)]),
                                       *sources]
    for path in items:
        suite, found = _load_source(path) if isinstance(path, SuiteSource) else _load_one(path)
        problems.extend(found)
        if suite:
            suites.append(suite)
    seen: dict[str, Check] = {}
    for suite in suites:
        for check in suite.checks:
            first = seen.get(check.name)
            if first is not None:
                problems.append(SuiteProblem(suite.path, check.line, check.name,
                                             f"two checks are named {check.name!r} (the other one is at "
                                             f"{_place(first)}); give one a different `name`"))
            else:
                seen[check.name] = check
    if not problems and not seen and not allow_empty and not (suites and all(s.allow_empty for s in suites)):
        problems.append(_nothing_to_check(given, suites))
    if problems:
        raise SuiteError(problems)
    return suites


def load_suite(path: str | Path | SuiteSource) -> Suite:
    return load_suites([path])[0]


def _place(check: Check) -> str:
    return f"{check.source}:{check.line}" if check.line else str(check.source)


def _nothing_to_check(given: list[str | Path | SuiteSource], suites: list[Suite]) -> SuiteProblem:
    """The problem of a set of suites without a single check (an empty folder, or empty suites)."""
    empty = [str(p) for p in given if not isinstance(p, SuiteSource) and Path(p).is_dir() and not any(
        s.path.is_relative_to(Path(p)) for s in suites)]
    if empty:
        why = f"no *.yaml or *.yml file in {', '.join(empty)} (folders are searched at any depth)"
    else:
        why = f"{len(suites)} suite file(s) but not one check" if suites else "no suite file given"
    return SuiteProblem(None, None, "",
                        f"nothing to check: {why}; a scan without checks would pass without checking anything. "
                        "Give suites that hold checks, or allow it: `--allow-empty` on the command line, "
                        "`allow_empty: true` on an audit")


def _load_one(path: Path) -> tuple[Suite | None, list[SuiteProblem]]:
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as exc:
        return None, [SuiteProblem(path, None, "", f"cannot read the file: {exc.strerror or exc}")]
    return _load_text(path, text)


def _load_source(source: SuiteSource) -> tuple[Suite | None, list[SuiteProblem]]:
    if source.text is not None:
        return _load_text(Path(source.name), source.text)
    return _SuiteReader(Path(source.name), YamlLines()).read(source.data)


def _load_text(path: Path, text: str) -> tuple[Suite | None, list[SuiteProblem]]:
    try:
        data, lines = load_with_lines(text)
    except DuplicateKeyError as exc:
        return None, [SuiteProblem(path, exc.line, "", str(exc))]
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        reason = getattr(exc, "problem", None) or str(exc)
        return None, [SuiteProblem(path, mark.line + 1 if mark else None, "", f"not valid YAML: {reason}")]
    return _SuiteReader(path, lines).read(data)


class _SuiteReader:
    def __init__(self, path: Path, lines: YamlLines):
        self.path = path
        self.lines = lines
        self.problems: list[SuiteProblem] = []
        self.types = check_types()

    def problem(self, at: tuple[Any, ...], message: str) -> None:
        self.problems.append(SuiteProblem(self.path, self.lines.line(at), dotted(at), message))

    def read(self, data: Any) -> tuple[Suite | None, list[SuiteProblem]]:
        suite = Suite(self.path)
        if data is None:
            self.problem((), "the suite is empty; expected `tables:` and/or `custom_sql:`")
            return None, self.problems
        if not isinstance(data, dict):
            self.problem((), f"expected a mapping with `tables:` and/or `custom_sql:`, got {_kind(data)}")
            return None, self.problems
        for key in data:
            if key not in TOP_LEVEL_KEYS:
                self.problem((key,), f"unknown section{did_you_mean(key, TOP_LEVEL_KEYS)}; "
                                     f"expected one of {', '.join(TOP_LEVEL_KEYS)}")
        suite.checks.extend(self.read_tables(data.get("tables") or {}))
        suite.checks.extend(self.read_custom_sql(data.get("custom_sql") or []))
        self.assign_owners(data, suite.checks)
        self.check_not_empty(suite, data.get("allow_empty", False))
        suite.allow_empty = data.get("allow_empty") is True
        return (suite if not self.problems else None), self.problems

    def assign_owners(self, data: dict[str, Any], checks: list[Check]) -> None:
        """Owners and tags, inherited suite -> table -> check: the most specific owners win, tags add up."""
        top: dict[str, tuple[str, ...]] = {}
        for key, what in (("owner", "an owner"), ("owners", "an owner"), ("tags", "a tag")):
            if key in data:
                try:
                    top[key] = names(data[key], what)
                except ValueError as exc:
                    self.problem((key,), str(exc))
        suite_owners = top.get("owner", ()) + top.get("owners", ())
        for check in checks:
            options = check.options
            own = ((options.owner,) if getattr(options, "owner", None) else ()) + tuple(
                getattr(options, "owners", None) or ())
            table = check.table_options.get("owner", ()) + check.table_options.get("owners", ())
            check.owners = tuple(dict.fromkeys(own or table or suite_owners))
            check.tags = tuple(dict.fromkeys(top.get("tags", ()) + check.table_options.get("tags", ())
                                             + tuple(getattr(options, "tags", None) or ())))

    def check_not_empty(self, suite: Suite, allow_empty: Any) -> None:
        """A suite without checks would pass a CI gate without checking anything: refused unless allowed."""
        if not isinstance(allow_empty, bool):
            self.problem(("allow_empty",), f"expected true or false, got {_kind(allow_empty)}")
        elif not suite.checks and not self.problems and not allow_empty:
            self.problem((), "the suite has no checks, so it would pass without checking anything; add checks "
                             "under `tables:` or `custom_sql:`, or set `allow_empty: true` if that is intended")

    def read_tables(self, tables: Any) -> list[Check]:
        """The checks under ``tables:``, a mapping of table name to a list of checks, or to a mapping of
        table options (:mod:`watchdog.scan.table_options`) and ``checks:``."""
        if not isinstance(tables, dict):
            self.problem(("tables",), f"expected a mapping of table name to a list of checks, got {_kind(tables)}")
            return []
        checks: list[Check] = []
        for table, entries in tables.items():
            try:
                split_name(str(table))
            except ValueError as exc:
                self.problem(("tables", table), f"invalid table name: {exc}")
                continue
            at: tuple[Any, ...] = ("tables", table)
            options = NO_OPTIONS
            if isinstance(entries, dict):
                options = self.read_table_options(at, entries)
                entries = entries.get(CHECKS_KEY)
                at = at + (CHECKS_KEY,)
                if entries is None:
                    entries = []
            if not isinstance(entries, list):
                self.problem(at, f"expected a list of checks (or a mapping of table options and `checks:`), "
                                 f"got {_kind(entries)}")
                continue
            for i, entry in enumerate(entries):
                for check in self.read_check(str(table), entry, at + (i,)):
                    check.table_options = options
                    checks.append(check)
        return checks

    def read_table_options(self, at: tuple[Any, ...], mapping: dict[Any, Any]) -> Any:
        """The table options of a table written as a mapping (every problem recorded with its line)."""
        known = table_options()
        values: dict[str, Any] = {}
        for key, value in mapping.items():
            if key == CHECKS_KEY:
                continue
            option = known.get(str(key))
            if option is None:
                names = [CHECKS_KEY, *known]
                self.problem(at + (key,), f"unknown table option {key!r}{did_you_mean(key, names)}; "
                                          f"expected `checks:` and any of {', '.join(sorted(known))}")
                continue
            try:
                values[option.name] = option.parse(value)
            except ValueError as exc:
                self.problem(at + (key,), f"{exc} ({option.name}: {option.help})")
        for name, message in conflicts(values):
            self.problem(at + (name,), message)
        return frozen(values)

    def read_custom_sql(self, customs: Any) -> list[Check]:
        """The checks under ``custom_sql:``, a list of mappings with a name and a query."""
        if not isinstance(customs, list):
            self.problem(("custom_sql",), f"expected a list of queries, got {_kind(customs)}")
            return []
        checks: list[Check] = []
        for i, entry in enumerate(customs):
            at = ("custom_sql", i)
            if not isinstance(entry, dict):
                self.problem(at, f"expected a mapping with name and sql, got {_kind(entry)}")
                continue
            check = self.build("custom_sql", None, dict(entry), at, {k: at + (k,) for k in entry})
            if check:
                checks.append(check)
        return checks

    def read_check(self, table: str, entry: Any, at: tuple[Any, ...]) -> list[Check]:
        """The checks of one list item: one, or one per column of a list of columns (a glob stays a template to
        expand against the table's columns: :mod:`watchdog.scan.column_globs`)."""
        found = self.read_entry(table, entry, at)
        if found is None:
            return []
        kind, options, at, origin = found
        hint = get_type_hints(self.types[kind].Options).get("column")
        try:
            written = per_column(options, takes_lists=hint is None or "list" in str(hint))
        except ColumnsProblem as exc:
            self.problem(origin.get(exc.option, at), str(exc))
            return []
        checks = []
        for own in written:
            check = self.build(kind, table, own, at, origin)
            if check is None:
                return []
            checks.append(as_template(check, options))
        return checks

    def read_entry(self, table: str, entry: Any, at: tuple[Any, ...]
                   ) -> tuple[str, dict[str, Any], tuple[Any, ...], dict[str, tuple[Any, ...]]] | None:
        known = [k for k in self.types if k != "custom_sql"]
        if isinstance(entry, str):
            entry = {entry: None}
        if not isinstance(entry, dict):
            self.problem(at, f"expected a check such as `not_null: column`, got {_kind(entry)}")
            return None
        kinds = [k for k in entry if k in known]
        if len(kinds) != 1:
            if not kinds:
                first = next(iter(entry), "")
                self.problem(at + (first,), f"unknown check type {first!r}{did_you_mean(first, known)}; "
                                            f"known: {', '.join(sorted(known))}")
            else:
                self.problem(at, f"one check per list item, found {', '.join(kinds)}")
            return None
        kind = kinds[0]
        value = entry[kind]
        options: dict[str, Any] = {}
        origin: dict[str, tuple[Any, ...]] = {}
        short = self.types[kind].short_form
        if isinstance(value, dict):
            options.update(value)
            origin.update({k: at + (kind, k) for k in value})
        elif value is not None:
            if short is None:
                self.problem(at + (kind,), f"{kind} takes a mapping of options, e.g. `{kind}: {{min: 1}}`")
                return None
            options[short] = value
            origin[short] = at + (kind,)
        for key, extra in entry.items():
            if key == kind:
                continue
            if key in options:
                self.problem(at + (key,), f"{key!r} is given twice")
                return None
            options[key] = extra
            origin[key] = at + (key,)
        return kind, options, at + (kind,), origin

    def build(self, kind: str, table: str | None, options: dict[str, Any], at: tuple[Any, ...],
              origin: dict[str, tuple[Any, ...]]) -> Check | None:
        cls = self.types[kind]
        try:
            parsed = cls.Options.parse(options)
        except OptionsError as exc:
            for found in exc.problems:
                field_name = str(found.loc[0]) if found.loc else ""
                where = origin.get(field_name, at + ((field_name,) if field_name else ()))
                self.problem(where + found.loc[1:], found.message)
            return None
        if getattr(parsed, "group_by", None) and not cls.groupable:
            self.problem(origin.get("group_by", at), f"{kind} cannot be judged per group; group_by works on the "
                         "checks that count failing rows one by one (not_null, pattern, range, accepted_values, "
                         "expression) and on metric: drop group_by, or write one check per group with `where:`")
            return None
        params = {k: v for k, v in options.items() if k not in NOT_PARAMS}
        check = cls(table, parsed, params, source=str(self.path))
        check.line = self.lines.line(at)
        problems = suite_problems(check)
        for message in problems:
            self.problem(origin.get("anomaly", at), message)
        return None if problems else check


_KIND_NAMES: dict[type, str] = {dict: "a mapping", list: "a list", str: "a string", type(None): "nothing"}


def _kind(value: Any) -> str:
    return _KIND_NAMES.get(type(value), type(value).__name__)

