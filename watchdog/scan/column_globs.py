"""Column globs: one check written for many columns (``column: '*'``, ``column: 'code_*'``, ``column: [a, 'b_*']``).

The suite reader builds a list of plain names into one check per name at once; a name with ``*`` or ``?`` (shell
wildcards, matched case-sensitively against the whole column name; ``[abc]`` is a character class inside one) stays
one *template* check until the table's columns are known: :func:`expand` then makes one check per matching column,
in the catalogue's order, named as a check written for that column would be (a ``name:`` must say where the column
goes, with ``{column}``). A glob that matches no column is an error naming the suite's file and line and listing
the table's columns; so is an expanded check whose name another check already has. The scan reports such a check
as ``error`` and runs the others; ``check-config --db`` reports the same problems.
"""

from __future__ import annotations

import copy
import dataclasses
import fnmatch
from collections.abc import Callable
from typing import Any

from watchdog.errors import ConfigError, WatchdogError
from watchdog.scan.check_types import Check
from watchdog.scan.sqlbuild import split_name

#: the placeholder of the column in the ``name:`` of a check written for several columns
COLUMN_PLACEHOLDER = "{column}"
WILDCARDS = ("*", "?")


def is_glob(value: Any) -> bool:
    """``*``, ``?`` or a character class ``[...]`` in a column name written in a suite."""
    if not isinstance(value, str):
        return False
    return any(w in value for w in WILDCARDS) or ("[" in value and "]" in value[value.index("[") + 1:])


def named(name: str | None, column: str) -> str | None:
    """A check's own ``name:`` for one of its columns (``{column}`` replaced)."""
    return name.replace(COLUMN_PLACEHOLDER, column) if name else name


def for_column(template: Check, column: str) -> Check:
    """The check ``template`` (written with a glob or a list) made for ``column``."""
    check = copy.copy(template)
    changes: dict[str, Any] = {"column": column}
    if template.options.name:
        changes["name"] = named(template.options.name, column)
    check.options = dataclasses.replace(template.options, **changes)
    check.params = {**template.params, "column": column}
    check.column_glob = None
    return check


class ColumnsProblem(ConfigError):
    """The columns a check is written for are not right; ``option`` is the option to point at."""

    def __init__(self, message: str, option: str):
        super().__init__(message)
        self.option = option


def per_column(options: dict[str, Any], takes_lists: bool) -> list[dict[str, Any]]:
    """The options of each check a list item stands for: itself, or one per name of its ``column`` list (a glob
    stays one template, see :func:`as_template`). ``takes_lists``: the type reads a list as one compound column."""
    column = options.get("column")
    if not is_glob(column) and not (isinstance(column, list) and not takes_lists):
        return [options]
    names: list[str] = column if isinstance(column, list) else [str(column)]
    if not names or not all(isinstance(n, str) and n for n in names):
        raise ColumnsProblem("expected column names or globs, e.g. `column: [a, b]` or `column: 'code_*'`", "column")
    if len(set(names)) != len(names):
        raise ColumnsProblem("a column is listed twice", "column")
    name = options.get("name")
    if (len(names) > 1 or is_glob(names[0])) and isinstance(name, str) and COLUMN_PLACEHOLDER not in name:
        raise ColumnsProblem(f"this check is written for several columns, so its name must say where the column "
                             f"goes: write {COLUMN_PLACEHOLDER} in it, e.g. `name: '{name}_{COLUMN_PLACEHOLDER}'`",
                             "name")
    out = []
    for item in names:
        own = {**options, "column": item}
        if isinstance(name, str):
            own["name"] = named(name, item)
        out.append(own)
    return out


def as_template(check: Check, written: dict[str, Any]) -> Check:
    """``check`` as read; one built for a glob becomes the template :func:`expand` makes its checks from."""
    if is_glob(check.column):
        check.column_glob = check.column
        name = written.get("name")
        if isinstance(name, str):  # its own name keeps the placeholder, filled per column
            check.options = dataclasses.replace(check.options, name=name)
    return check


def place(check: Check) -> str:
    return f"{check.source}:{check.line}" if check.line else str(check.source)


def expand(checks: list[Check], columns_of: Callable[[str], list[str]]) -> tuple[list[Check], dict[str, str]]:
    """``checks`` with every glob template replaced by its checks, and the templates that could not be expanded,
    by name, with why (they stay in the list, in their place). ``columns_of(table)`` lists a table's columns
    (empty: none could be read)."""
    if not any(c.column_glob for c in checks):
        return checks, {}
    taken = {c.name: c for c in checks if not c.column_glob}
    out: list[Check] = []
    errors: dict[str, str] = {}
    for check in checks:
        if not check.column_glob:
            out.append(check)
            continue
        try:
            made = _expand_one(check, columns_of(check.table or ""), taken)
        except ValueError as exc:
            errors[check.name] = f"{place(check)}: {exc}"
            out.append(check)
            continue
        taken.update((c.name, c) for c in made)
        out.extend(made)
    return out, errors


def _expand_one(check: Check, columns: list[str], taken: dict[str, Check]) -> list[Check]:
    pattern = check.column_glob or ""
    if not columns:
        raise ValueError(f"column glob {pattern!r}: the columns of table {check.table!r} cannot be read (does the "
                         f"table exist?)")
    matching = [c for c in columns if fnmatch.fnmatchcase(c, pattern)]
    if not matching:
        raise ValueError(f"column glob {pattern!r} matches no column of table {check.table!r}; its columns: "
                         f"{', '.join(columns)}. Fix the glob (matched case-sensitively, '*' for any run of "
                         f"characters), or remove the check")
    made = [for_column(check, c) for c in matching]
    for one in made:
        other = taken.get(one.name)
        if other is not None:
            raise ValueError(f"column glob {pattern!r} makes the check {one.name!r} for column {one.column!r}, but "
                             f"a check of that name is also at {place(other)}; narrow the glob, or give it "
                             f"`name: '...{COLUMN_PLACEHOLDER}...'` so its checks are named apart")
    return made


def sandbox_columns(sandbox: Any) -> Callable[[str], list[str]]:
    """``columns_of`` reading a table's columns from the catalogue through ``sandbox`` (cached there)."""
    def columns_of(table: str) -> list[str]:
        try:
            return list(sandbox.column_types(split_name(table)))
        except (ValueError, WatchdogError):
            return []
    return columns_of


def expand_for(sandbox: Any, checks: list[Check]) -> tuple[list[Check], dict[str, str]]:
    """:func:`expand` against the tables of ``sandbox``'s database."""
    return expand(checks, sandbox_columns(sandbox))
