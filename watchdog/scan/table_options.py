"""Options a suite sets for a whole table, beside its checks.

A table in a suite is either a plain list of checks or a mapping of table options plus ``checks:``::

    tables:
      contacts:
        segments: [source, country]      # columns the diagnosis groups failing rows by
        timestamp_column: created_at     # the column that says when a row arrived
        diagnose: {timeout_s: 120}       # or false: no diagnosis for this table
        null_values: ['', '?', 'N/A']    # text values the column checks count as NULL
        trim_blanks: true                # whitespace-only values count as '' (NULL when '' is listed)
        checks:
          - not_null: email

Each option is registered here by name with a parser that turns the YAML value into what the stages read
(or raises :class:`ValueError` saying what is wrong); the suite reader reports an unknown option with its
file, line and the closest known name (:func:`conflicts` holds the rules across options). The parsed options
ride on every check of the table as ``check.table_options`` (a read-only mapping; an option not written is
absent), so any stage reads them from the check it handles. To add an option, register one more parser below.
"""

from __future__ import annotations

import difflib
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from types import MappingProxyType
from typing import Any

Parser = Callable[[Any], Any]

#: the key under which a table mapping lists its checks (not an option)
CHECKS_KEY = "checks"


@dataclass(frozen=True)
class TableOption:
    name: str
    parse: Parser
    help: str


_OPTIONS: dict[str, TableOption] = {}


def table_option(name: str, help: str) -> Callable[[Parser], Parser]:
    """Register ``parse`` as table option ``name`` (``help`` is one line for error messages and docs)."""
    def register(parse: Parser) -> Parser:
        assert name != CHECKS_KEY and name not in _OPTIONS, name
        _OPTIONS[name] = TableOption(name, parse, help)
        return parse
    return register


def table_options() -> Mapping[str, TableOption]:
    """Every table option by name."""
    return MappingProxyType(_OPTIONS)


#: the table options of a check whose table sets none
NO_OPTIONS: Mapping[str, Any] = MappingProxyType({})


def frozen(values: dict[str, Any]) -> Mapping[str, Any]:
    return MappingProxyType(dict(values)) if values else NO_OPTIONS


def _column_name(value: Any) -> str:
    if not isinstance(value, str) or not value.strip():
        raise ValueError(f"expected a column name, got {value!r}")
    return value


def names(value: Any, what: str) -> tuple[str, ...]:
    """An owner or tag list as written (one string or a list of them)."""
    if isinstance(value, str):
        value = [value]
    if not isinstance(value, list) or not value or not all(isinstance(v, str) and v.strip() for v in value):
        raise ValueError(f"expected {what} or a list of them")
    return tuple(dict.fromkeys(v.strip() for v in value))


@table_option("owner", "who answers for the table's checks, e.g. \"@data-platform\" (a check's own owner wins)")
def _owner(value: Any) -> tuple[str, ...]:
    return names(value, "an owner such as \"@data-platform\"")


@table_option("owners", "several owners of the table's checks, e.g. [\"@alice\", \"@bob\"]")
def _owners(value: Any) -> tuple[str, ...]:
    return names(value, "an owner such as \"@alice\"")


@table_option("tags", "tags of every check of the table, e.g. [pii, finance] (added to the suite's and the check's)")
def _tags(value: Any) -> tuple[str, ...]:
    return names(value, "a tag such as finance")


@table_option("segments", "columns the diagnosis groups a failing check's rows by (a list of column names)")
def _segments(value: Any) -> tuple[str, ...]:
    if isinstance(value, str):
        value = [value]
    if not isinstance(value, list) or not value:
        raise ValueError("expected a list of column names, e.g. `segments: [source, country]`")
    names = tuple(_column_name(v) for v in value)
    if len(set(names)) != len(names):
        raise ValueError("a column is listed twice")
    return names


@table_option("timestamp_column", "the column that says when a row arrived (the diagnosis's onset)")
def _timestamp_column(value: Any) -> str:
    return _column_name(value)


@dataclass(frozen=True)
class DiagnoseOptions:
    """``diagnose:`` of a table: whether its failing checks are diagnosed, and the budget of its diagnosis."""

    enabled: bool = True
    #: also diagnose passing checks that have failing rows (tolerated by their thresholds)
    passing: bool = False
    #: statements and seconds the table's diagnosis may use (None: the defaults)
    statements: int | None = None
    timeout_s: float | None = None


_DIAGNOSE_KEYS = ("passing", "statements", "timeout_s")


@table_option("diagnose", "false, or {passing: true|false, statements: N, timeout_s: S} for the table's diagnosis")
def _diagnose(value: Any) -> DiagnoseOptions:
    if isinstance(value, bool):
        return DiagnoseOptions(enabled=value)
    if not isinstance(value, dict):
        raise ValueError("expected true, false or a mapping such as `{timeout_s: 120}`")
    for key in value:
        if key not in _DIAGNOSE_KEYS:
            close = difflib.get_close_matches(str(key), _DIAGNOSE_KEYS, n=1)
            hint = f" (did you mean {close[0]!r}?)" if close else ""
            raise ValueError(f"unknown diagnose option {key!r}{hint}; expected {', '.join(_DIAGNOSE_KEYS)}")
    passing = value.get("passing", False)
    statements = value.get("statements")
    timeout_s = value.get("timeout_s")
    if not isinstance(passing, bool):
        raise ValueError("diagnose.passing: expected true or false")
    if statements is not None and (isinstance(statements, bool) or not isinstance(statements, int)
                                   or statements < 1):
        raise ValueError("diagnose.statements: expected a whole number of at least 1")
    if timeout_s is not None and (isinstance(timeout_s, bool) or not isinstance(timeout_s, (int, float))
                                  or timeout_s <= 0):
        raise ValueError("diagnose.timeout_s: expected a number of seconds above 0")
    return DiagnoseOptions(True, passing, statements, None if timeout_s is None else float(timeout_s))


def null_values_of(value: Any) -> tuple[str, ...]:
    """A list of null markers (``null_values:`` of a table or a check): text values compared exactly."""
    if isinstance(value, str):
        value = [value]
    if not isinstance(value, list):
        raise ValueError("expected a list of text values, e.g. `null_values: ['', '?', 'N/A']`")
    for item in value:
        if not isinstance(item, str):
            raise ValueError(f"expected text values (quote numbers and words like '-' or 'null'), got {item!r}")
    return tuple(dict.fromkeys(value))


@table_option("null_values", "text values the table's not_null, pattern, range and accepted_values checks count "
                             "as NULL, e.g. ['', '?', 'N/A'] (compared exactly)")
def _null_values(value: Any) -> tuple[str, ...]:
    return null_values_of(value)


@table_option("trim_blanks", "true: values of only blanks (spaces, tabs, line breaks) count as '', so as NULL "
                             "when '' is among null_values")
def _trim_blanks(value: Any) -> bool:
    if not isinstance(value, bool):
        raise ValueError("expected true or false")
    return value


def conflicts(values: Mapping[str, Any]) -> list[tuple[str, str]]:
    """Problems across a table's parsed options, as (option, message)."""
    if values.get("trim_blanks") and "" not in values.get("null_values", ()):
        return [("trim_blanks", "trim_blanks: true makes blank values count as '', which does nothing unless '' "
                                "is among the table's null_values; add '' to null_values (e.g. "
                                "`null_values: ['']`) or drop trim_blanks")]
    return []
