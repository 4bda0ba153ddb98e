"""Incremental tables: row-level checks that judge only the rows past the last successful run's high-water mark.

A table opts in with the table option ``incremental``::

    tables:
      events:
        incremental: {column: created_at, lookback: 1h}
        checks:
          - not_null: user_id

The *window* of a run is every row whose high-water column is at or past ``mark - lookback`` (``mark``: the
largest value the last successful run saw), plus every row whose high-water column is NULL: such rows have
no place on the axis, so they are checked on every run rather than skipped silently. ``>=`` (not ``>``) keeps
rows that arrive later with exactly the mark's value. The first run (no mark) reads everything.

Only checks whose verdict over a subset of the rows means the same as over those rows alone take the window
(:data:`WINDOWED_KINDS`); the others (``unique``, ``foreign_key``, ``row_count``, ``freshness``, …) keep
judging the whole table.
"""

from __future__ import annotations

import copy
import dataclasses
from dataclasses import dataclass
from datetime import date, datetime, timedelta
from typing import Any

from sqlglot import exp

from watchdog.sandbox import Sandbox
from watchdog.scan import sqlbuild
from watchdog.scan.check_types import Check
from watchdog.scan.check_types.freshness import parse_duration
from watchdog.scan.table_options import table_option

#: check kinds whose verdict is judged over the window's rows alone
WINDOWED_KINDS = frozenset({"not_null", "pattern", "accepted_values", "range", "expression", "numeric_text",
                            "field_types", "null_markers"})


@dataclass(frozen=True)
class IncrementalOptions:
    column: str
    #: seconds subtracted from the mark (late rows); for an integer column, the number of ids
    lookback: float = 0.0


@table_option("incremental", "check only rows past the last successful run's mark, e.g. "
                             "`incremental: {column: created_at, lookback: 1h}`")
def _incremental(value: Any) -> IncrementalOptions:
    if not isinstance(value, dict) or not isinstance(value.get("column"), str) or not value["column"].strip():
        raise ValueError("expected a mapping with the high-water column, e.g. "
                         "`incremental: {column: created_at, lookback: 1h}`")
    unknown = sorted(set(value) - {"column", "lookback"})
    if unknown:
        raise ValueError(f"unknown key {unknown[0]!r}: incremental takes `column` and `lookback`")
    lookback = value.get("lookback", 0)
    if isinstance(lookback, bool) or not isinstance(lookback, (int, str)):
        raise ValueError("lookback: expected a duration such as 1h (or a number of ids for an integer column)")
    seconds = float(lookback) if isinstance(lookback, int) else parse_duration(lookback)
    if seconds < 0:
        raise ValueError("lookback: must not be negative")
    return IncrementalOptions(value["column"], seconds)


@dataclass(frozen=True)
class Window:
    """The rows a run judges: ``column >= start`` (or NULL); ``start`` None = every row (a first or full run)."""

    column: str
    start: Any
    end: Any

    def to_json(self) -> dict[str, Any]:
        return {"column": self.column, "from": _text(self.start), "to": _text(self.end)}


def _text(value: Any) -> Any:
    return value.isoformat(sep=" ") if isinstance(value, datetime) else (
        value.isoformat() if isinstance(value, date) else value)


def window_start(mark: Any, lookback: float) -> Any:
    """``mark - lookback`` in the mark's own type (an integer id, a date, a timestamp)."""
    if mark is None:
        return None
    if isinstance(mark, str):  # SQLite keeps dates and timestamps as ISO text
        mark = date.fromisoformat(mark) if len(mark) == 10 else datetime.fromisoformat(mark)
    if isinstance(mark, bool):
        raise ValueError("a boolean cannot be a high-water mark")
    if isinstance(mark, int):
        return mark - int(lookback)
    if isinstance(mark, datetime):
        return mark - timedelta(seconds=lookback)
    if isinstance(mark, date):
        return mark - timedelta(days=int(lookback // 86400))
    raise ValueError(f"unsupported high-water value {mark!r}: use an integer, date or timestamp column")


def high_water(sandbox: Sandbox, table: str, column: str) -> Any:
    """The largest value of the high-water column (one aggregate read, index-backed where the column is)."""
    query = exp.select(exp.Max(this=sqlbuild.column(column))).from_(sqlbuild.table(table))
    return sandbox.query(query.sql(dialect=sandbox.dialect)).scalar()


def condition(window: Window, dialect: str) -> exp.Expr | None:
    """``(column >= start OR column IS NULL)``; None for a window over every row."""
    if window.start is None:
        return None
    col = sqlbuild.column(window.column)
    value: exp.Expr
    if isinstance(window.start, int):
        value = exp.Literal.number(window.start)
    else:
        declared = "date" if not isinstance(window.start, datetime) else "timestamp"
        value = sqlbuild.temporal_literal(_text(window.start), declared, dialect)
    return exp.paren(exp.or_(exp.GTE(this=col, expression=value),
                             exp.Is(this=sqlbuild.column(window.column), expression=exp.Null()), copy=False),
                     copy=False)


def windowed(check: Check, window: Window, dialect: str) -> Check:
    """``check`` judging only the window's rows (its own ``where`` kept), or ``check`` itself when it is not
    of a windowed kind or the window covers every row."""
    cond = condition(window, dialect)
    if cond is None or check.kind not in WINDOWED_KINDS:
        return check
    own = getattr(check.options, "where", None)
    where = sqlbuild.and_all(sqlbuild.condition(own, dialect), cond) if own else cond
    narrowed = copy.copy(check)
    narrowed.options = dataclasses.replace(check.options, where=where.sql(dialect=dialect))
    return narrowed
