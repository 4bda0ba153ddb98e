"""Options a suite sets for a whole table, beside its checks.

A table in a suite is either a plain list of checks or a mapping of table options plus ``checks:``::

    tables:
      contacts:
        segments: [source, country]      # columns the diagnosis groups failing rows by
        timestamp_column: created_at     # the column that says when a row arrived
        checks:
          - not_null: email

Each option is registered here by name with a parser that turns the YAML value into what the stages read
(or raises :class:`ValueError` saying what is wrong); the suite reader reports an unknown option with its
file, line and the closest known name. The parsed options ride on every check of the table as
``check.table_options`` (a read-only mapping; an option not written is absent), so any stage reads them
from the check it handles. To add an option, register one more parser below.
"""

from __future__ import annotations

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
