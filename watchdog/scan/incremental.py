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
(:data:`WINDOWED_KINDS`; ``foreign_key`` narrows its child rows and still looks them up in the whole parent).
``metric`` takes the window's rows unless it says ``window: false``. ``unique`` judges the window's rows against
the whole table: its keys are looked up among the older rows (``column < start``) through the key's index (see
:func:`key_span`). ``row_count`` counts the window's rows where it says ``window: true``; the others
(``row_count`` without it, ``freshness``, ``functional_dependency``, ``distribution``, …) keep judging the whole
table.
"""

from __future__ import annotations

import copy
import dataclasses
from dataclasses import dataclass
from datetime import date, datetime, timedelta
from typing import Any

from sqlglot import exp

from watchdog.errors import SandboxError
from watchdog.sandbox import Sandbox
from watchdog.scan import sqlbuild
from watchdog.scan.check_types import Check
from watchdog.scan.check_types.freshness import parse_duration
from watchdog.scan.indexes import covered, index_prefixes
from watchdog.scan.table_options import table_option

#: check kinds whose verdict is judged over the window's rows alone
WINDOWED_KINDS = frozenset({"not_null", "pattern", "accepted_values", "range", "expression", "numeric_text",
                            "field_types", "null_markers",
                            # the window narrows the child rows only: new children against the whole parent
                            "foreign_key",
                            # the window's keys against the whole table (see watchdog/scan/check_types/unique.py)
                            "unique"})


def takes_window(check: Check) -> bool:
    """Whether ``check`` judges only the window on an incremental table (``row_count`` where it says
    ``window: true``; ``metric`` unless it says ``window: false``)."""
    if check.kind in ("row_count", "metric"):  # each says it with its own option (and its own default)
        return bool(check.options.window)
    return check.kind in WINDOWED_KINDS


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
    #: the table may hold rows whose high-water column is NULL (False: an indexed probe found none, so the
    #: window is a plain range, which the column's index answers on its own)
    nulls: bool = True

    def to_json(self) -> dict[str, Any]:
        return {"column": self.column, "from": _text(self.start), "to": _text(self.end)}


def _text(value: Any) -> Any:
    return value.isoformat(sep=" ") if isinstance(value, datetime) else (
        value.isoformat() if isinstance(value, date) else value)


def parse_mark(mark: Any) -> Any:
    """A mark as recorded (ISO text from the history or SQLite) in its own type: date, datetime or integer."""
    if isinstance(mark, str):
        return date.fromisoformat(mark) if len(mark) == 10 else datetime.fromisoformat(mark)
    return mark


def moved_backwards(mark: Any, now: Any) -> bool:
    """The column's largest value is below the recorded mark (rows deleted, values rewritten, a clock reset)."""
    mark, now = parse_mark(mark), parse_mark(now)
    if mark is None or now is None:
        return False
    try:
        return bool(now < mark)
    except TypeError:  # the column's type changed (say, to a zoned timestamp): not comparable, start again
        return True


def window_start(mark: Any, lookback: float) -> Any:
    """``mark - lookback`` in the mark's own type (an integer id, a date, a timestamp)."""
    mark = parse_mark(mark)
    if mark is None:
        return None
    if isinstance(mark, bool):
        raise ValueError("a boolean cannot be a high-water mark")
    if isinstance(mark, int):
        return mark - int(lookback)
    if isinstance(mark, datetime):
        return mark - timedelta(seconds=lookback)
    if isinstance(mark, date):
        return mark - timedelta(days=int(lookback // 86400))
    raise ValueError(f"unsupported high-water value {mark!r}: use an integer, date or timestamp column")


def has_nulls(sandbox: Sandbox, table: str, column: str) -> bool:
    """Whether some row's high-water column is NULL (one ``LIMIT 1`` probe, which the column's index answers)."""
    query = (exp.select(exp.Literal.number(1)).from_(sqlbuild.table(table))
             .where(exp.Is(this=sqlbuild.column(column), expression=exp.Null())).limit(1))
    return bool(sandbox.query(query.sql(dialect=sandbox.dialect)).rows)


def high_water(sandbox: Sandbox, table: str, column: str) -> Any:
    """The largest value of the high-water column (one aggregate read, index-backed where the column is)."""
    query = exp.select(exp.Max(this=sqlbuild.column(column))).from_(sqlbuild.table(table))
    return sandbox.query(query.sql(dialect=sandbox.dialect)).scalar()


def condition(window: Window, dialect: str) -> exp.Expr | None:
    """``(column >= start OR column IS NULL)``; None for a window over every row."""
    if window.start is None:
        return None
    if not window.nulls:
        return exp.GTE(this=sqlbuild.column(window.column), expression=_start(window, dialect))
    return exp.paren(exp.or_(exp.GTE(this=sqlbuild.column(window.column), expression=_start(window, dialect)),
                             exp.Is(this=sqlbuild.column(window.column), expression=exp.Null()), copy=False),
                     copy=False)


def before(window: Window, dialect: str) -> exp.Expr | None:
    """``column < start``: the rows outside the window (its complement; NULL-marked rows are inside)."""
    if window.start is None:
        return None
    return exp.LT(this=sqlbuild.column(window.column), expression=_start(window, dialect))


def _start(window: Window, dialect: str) -> exp.Expr:
    if isinstance(window.start, int):
        return exp.Literal.number(window.start)
    declared = "date" if not isinstance(window.start, datetime) else "timestamp"
    return sqlbuild.temporal_literal(_text(window.start), declared, dialect)


def windowed(check: Check, window: Window, dialect: str) -> Check:
    """``check`` judging only the window's rows (its own ``where`` kept), or ``check`` itself when it is not
    of a windowed kind or the window covers every row."""
    cond = condition(window, dialect)
    if cond is None or not takes_window(check):
        return check
    own = getattr(check.options, "where", None)
    where = sqlbuild.and_all(sqlbuild.condition(own, dialect), cond) if own else cond
    narrowed = copy.copy(check)
    narrowed.options = dataclasses.replace(check.options, where=where.sql(dialect=dialect))
    if check.kind == "unique":  # the window's keys are looked up among the older rows
        narrowed.older = sqlbuild.and_all(sqlbuild.condition(own, dialect) if own else None,  # type: ignore[attr-defined]
                                          before(window, dialect))
    return narrowed


def narrow(sandbox: Sandbox, checks: list[Check], marks: dict[str, Any]) -> tuple[list[Check], dict[str, Window]]:
    """The checks of an incremental run: each windowed-kind check of an ``incremental`` table narrowed to the
    rows past its table's mark in ``marks`` (a table without a mark: every row, its first run; a column whose
    largest value fell below the mark: every row again); and each such check's window by check name (its
    ``to`` becomes the table's next mark once the findings are recorded).

    The high-water read is one ``MAX`` per table; if it fails (a missing table or column) the read raises here
    and the run fails before any check: the mark is not advanced."""
    tables: dict[str, Window] = {}
    prefixes: dict[str, list[tuple[str, ...]] | None] = {}
    narrowed: list[Check] = []
    windows: dict[str, Window] = {}
    for check in checks:
        options = check.table_options.get("incremental")
        if options is None or not takes_window(check) or not check.table:
            narrowed.append(check)
            continue
        if check.table not in tables:
            end = high_water(sandbox, check.table, options.column)
            mark = marks.get(check.table)
            if moved_backwards(mark, end):  # the rows below the old mark may be new: judge every row again
                mark = None
            start = window_start(mark, options.lookback)
            nulls = True
            if start is not None and covered(_prefixes(sandbox, check.table, prefixes), [options.column]):
                # no NULL-marked row (the index says so at once): the window is a plain range that the index
                # answers, where `column >= start OR column IS NULL` leads planners to read the whole table
                nulls = has_nulls(sandbox, check.table, options.column)
            tables[check.table] = Window(options.column, start, end, nulls)
        window = tables[check.table]
        one = windowed(check, window, sandbox.dialect)
        if one is not check and check.kind == "unique":  # a probe per new key where an index answers it
            one.indexed = covered(_prefixes(sandbox, check.table, prefixes),  # type: ignore[attr-defined]
                                  check.key_columns)  # type: ignore[attr-defined]
            if one.indexed and sandbox.dialect in SPAN_DIALECTS:  # type: ignore[attr-defined]
                one.span = key_span(sandbox, one)  # type: ignore[attr-defined]
        narrowed.append(one)
        windows[check.name] = window
    return narrowed, windows


#: dialects whose windowed ``unique`` reads the older rows of the window's key range where that range is narrow
SPAN_DIALECTS = frozenset({"postgres"})
#: the window's keys count as appended in order when their range holds at most this many values per key
SPAN_FACTOR = 4


def key_span(sandbox: Sandbox, check: Check) -> tuple[int, int] | None:
    """The window's smallest and largest key for a one-column integer key whose window keys lie close together
    (at most :data:`SPAN_FACTOR` values of the range per key: ids appended in order), else None.

    The older rows sharing a window key all lie in that range, so reading the range through the key's index
    finds them exactly, whatever the key's order; it is only *cheaper* than a probe per key when the range is
    narrow, which one aggregate over the window tells (it reads the window's rows, as the check does)."""
    keys = check.key_columns  # type: ignore[attr-defined]
    if len(keys) != 1:
        return None
    key = sqlbuild.column(keys[0])
    query = (exp.select(exp.Min(this=key), exp.Max(this=key.copy()), exp.Count(this=key.copy()), copy=False)
             .from_(sqlbuild.table(check.table or ""), copy=False)
             .where(check.filter(sandbox.dialect), copy=False))
    try:
        lo, hi, n = sandbox.query(query.sql(dialect=sandbox.dialect)).rows[0]
    except SandboxError:  # only a cheaper plan is lost: the probes judge the same keys
        return None
    if not all(isinstance(v, int) and not isinstance(v, bool) for v in (lo, hi, n)) or not n:
        return None
    return (lo, hi) if hi - lo + 1 <= SPAN_FACTOR * n else None


def _prefixes(sandbox: Sandbox, table: str, known: dict[str, list[tuple[str, ...]] | None]
              ) -> list[tuple[str, ...]] | None:
    """The table's index prefixes, read once per run (None: unknown, or the catalogue unreadable)."""
    if table not in known:
        try:
            known[table] = index_prefixes(sandbox, table)
        except SandboxError:  # the catalogue unreadable: the database plans the lookups itself
            known[table] = None
    return known[table]


def same_scope(history: dict[str, list[dict[str, Any]]] | None,
               windows: dict[str, Window]) -> dict[str, list[dict[str, Any]]] | None:
    """The run history an incremental run's anomaly detection compares with: for each windowed check, only the
    earlier figures judged the same way (windows with windows; every row with every row)."""
    if not history or not windows:
        return history
    from watchdog.trends import windowed as was_windowed

    kept = dict(history)
    for name, window in windows.items():
        if name in kept:
            kept[name] = [e for e in kept[name] if was_windowed(e.get("finding") or {}) == (window.start is not None)]
    return kept
