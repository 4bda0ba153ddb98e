"""One table's diagnosis: the probe, the failing-rows statement and the rows statement, read into each check's
diagnosis (:mod:`watchdog.diagnose.statements` builds them; :mod:`watchdog.diagnose.rule` decides segments)."""

from __future__ import annotations

import time
from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import date, datetime
from typing import Any

from watchdog.diagnose import statements as st
from watchdog.diagnose.rule import MIN_FAILING, MIN_SHARE, Segment, concentrations
from watchdog.errors import QueryTimeout, SandboxError, WatchdogError
from watchdog.findings import SAMPLE_TEXT_LIMIT, Finding, jsonable
from watchdog.redact import redact
from watchdog.sandbox import Sandbox
from watchdog.scan.check_types import Check
from watchdog.scan.check_types.base import RowFlag
from watchdog.scan.indexes import covered, index_prefixes
from watchdog.scan.sqlbuild import split_name

#: candidate segment columns per table, at most (in the table's column order)
MAX_CANDIDATES = 8
#: columns the probe looks at, at most
MAX_PROBED = 30
#: names taken for the time a row arrived, in order of preference, when the suite names none
TIMESTAMP_NAMES = ("created_at", "inserted_at", "ingested_at", "loaded_at", "created", "event_time", "timestamp",
                   "occurred_at", "updated_at")


@dataclass
class Item:
    check: Check
    finding: Finding
    flag: RowFlag
    out: dict[str, Any]
    #: failing rows of the check (from the failing-rows statement) and per (segment column, value) index
    failing: int = 0
    by_segment: dict[tuple[int, int], int] = field(default_factory=dict)


class Budget:
    """The statements and seconds one table's diagnosis may still use."""

    def __init__(self, statements: int, seconds: float):
        self.left = statements
        self.deadline = time.monotonic() + seconds
        self.seconds = seconds
        self.used = 0

    def take(self) -> float | None:
        """The timeout for one more statement, or None when the budget is spent."""
        remaining = self.deadline - time.monotonic()
        if self.left <= 0 or remaining <= 0:
            return None
        self.left -= 1
        self.used += 1
        return remaining


class Stop(WatchdogError):
    """The table's diagnosis stops here (budget spent or a statement failed): ``reason`` says why."""

    def __init__(self, reason: str):
        super().__init__(reason)
        self.reason = reason


def diagnose_table(sandbox: Sandbox, table: str, items: list[Item], budget: Budget) -> None:
    try:
        kinds = sandbox.column_types(split_name(table))
    except (ValueError, WatchdogError):
        kinds = {}
    options = next((i.check.table_options for i in items if i.check.table_options), {})
    timestamp = options.get("timestamp_column") or detect_timestamp(kinds)
    try:
        columns, tried = _probe(sandbox, table, items, kinds, options.get("segments"), timestamp, budget)
        values = _failing(sandbox, table, items, kinds, columns, timestamp, budget)
        _rows(sandbox, table, items, columns, values, tried, timestamp, budget)
    except Stop as stop:
        for item in items:
            item.out["error"] = stop.reason
    for item in items:
        item.out["statements"] = budget.used


def detect_timestamp(kinds: Mapping[str, tuple[str, str]]) -> str | None:
    """The column that says when a row arrived, from the column types: a date/time column, by name preference."""
    temporal = [name for name, (kind, declared) in kinds.items()
                if kind == "temporal" and not declared.upper().startswith("TIME ")
                and declared.upper() not in ("TIME", "TIMETZ")]
    for preferred in TIMESTAMP_NAMES:
        for name in temporal:
            if name.lower() == preferred:
                return name
    return temporal[0] if temporal else None


def _run(sandbox: Sandbox, sql: str, max_rows: int, budget: Budget, what: str) -> list[tuple[Any, ...]]:
    timeout = budget.take()
    if timeout is None:
        raise Stop(f"not finished: the statement budget of the table ({budget.used} statements, "
                   f"{budget.seconds:g}s) was spent before the {what}")
    try:
        # jit off: hundreds of expressions, each read once, take longer to compile than to run; ship_rows: the
        # failing rows are found by parallel workers (1.3 s instead of 2.4 s at 1M rows and 20 conditions)
        result = sandbox.query(sql, max_rows=max_rows, timeout_s=min(timeout, sandbox.timeout_s), parallel=True,
                               jit=False, ship_rows=True)
    except QueryTimeout as exc:
        raise Stop(f"timed out in the {what}: {redact(exc)}") from None
    except SandboxError as exc:
        raise Stop(f"{exc.prefix} in the {what}: {redact(exc)}") from None
    return list(result.rows)


def _segment_kind(kind: str, declared: str) -> bool:
    if kind in ("text", "boolean", "unknown", "other"):
        return "BLOB" not in declared.upper() and "JSON" not in declared.upper()
    return kind == "number" and "INT" in declared.upper()


def own_columns(item: Item) -> set[str]:
    own = set(item.flag.values)
    own.update(c for c in [item.check.column, *(item.check.columns or [])] if c)
    return own


def _probe(sandbox: Sandbox, table: str, items: list[Item], kinds: Mapping[str, tuple[str, str]],
           declared: tuple[str, ...] | None, timestamp: str | None,
           budget: Budget) -> tuple[list[st.Column], dict[str, int]]:
    """The segment columns (declared, else low-cardinality columns of the table) and how many segments each holds
    (its distinct values among the probed rows, plus one for NULL)."""
    if declared:
        names = list(declared)
    else:
        everyones = set.intersection(*[own_columns(i) for i in items])  # no check of the table could use them
        names = [n for n, (kind, typ) in kinds.items()
                 if n != timestamp and n not in everyones and _segment_kind(kind, typ)][:MAX_PROBED]
    if not names:
        return [], {}
    rows = _run(sandbox, st.probe(table, names, sandbox.dialect), 2, budget, "probe of segment columns")
    if not rows:
        return [], {}
    *counts, probed = [int(v or 0) for v in rows[0]]
    if declared:
        keep = names
    else:  # a column whose every probed value is distinct is a key: each of its segments holds one row
        keep = [n for n, d in zip(names, counts, strict=False)
                if 1 <= d <= st.MAX_SEGMENT_VALUES and d < probed][:MAX_CANDIDATES]
    distinct = dict(zip(names, counts, strict=False))
    return ([st.Column(n, kinds.get(n, ("unknown", ""))[0]) for n in keep],
            {n: distinct[n] + 1 for n in keep})


def _failing(sandbox: Sandbox, table: str, items: list[Item], kinds: Mapping[str, tuple[str, str]],
             columns: list[st.Column], timestamp: str | None, budget: Budget) -> dict[tuple[int, int], Any]:
    """Values, onset, overlap and failing rows per segment; returns the raw segment values by (column, index)."""
    values = [[st.Column(c, kinds.get(c, ("unknown", ""))[0]) for c in i.flag.values] for i in items]
    layout = st.failing(table, [i.flag for i in items], values, timestamp, sandbox.dialect, columns)
    rows = _run(sandbox, layout.sql, layout.max_rows, budget, "failing-rows statement")
    total = next((r for r in rows if int(r[0]) == -1), None)
    slots = layout.value_slots()
    for i, item in enumerate(items):
        if values[i]:
            found = [r for r in rows if int(r[0]) == i]
            listed = [{"value": _value([r[s] for s in slots[i]]), "failing": _int(r[layout.count_at()])}
                      for r in found]
            listed.sort(key=lambda v: (-v["failing"], _order(v["value"])))
            item.out["values"] = listed
            if found:
                item.out["values_distinct"] = _int(found[0][layout.count_at() + 1])
        if total is not None:
            item.failing = _int(total[layout.segment_failing_at(i)])
        if total is not None and timestamp:
            first, last = (_moment(v) for v in total[layout.time_at(i):layout.time_at(i) + 2])
            if first is not None:
                item.out["onset"] = {"column": timestamp, "first": first, "last": last}
    raw: dict[tuple[int, int], Any] = {}
    for j in range(len(columns)):
        found = [r for r in rows if int(r[0]) == -2 - j]
        if len(found) > st.MAX_SEGMENT_VALUES:
            continue  # more values among the failing rows alone than a segment column may have
        for k, row in enumerate(found):
            raw[(j, k)] = row[layout.segment_value_at(j)]
            for i, item in enumerate(items):
                item.by_segment[(j, k)] = _int(row[layout.segment_failing_at(i)])
    patterns = [r for r in rows if int(r[0]) == st.PATTERNS]
    if len(patterns) <= st.MAX_PATTERNS:
        _overlap(items, layout, patterns)
    return raw


def _overlap(items: list[Item], layout: st.FailingLayout, patterns: list[tuple[Any, ...]]) -> None:
    """Rows each pair of checks fails together: the rows of the combinations (groups) holding both."""
    flags = [([_int(p[layout.segment_failing_at(i)]) for i in range(len(items))], _int(p[layout.count_at()]))
             for p in patterns]
    for a in range(len(items)):
        for b in range(a + 1, len(items)):
            shared = sum(n for bits, n in flags if bits[a] and bits[b])
            if shared:
                items[a].out.setdefault("overlap", []).append({"check": items[b].check.name, "rows": shared})
                items[b].out.setdefault("overlap", []).append({"check": items[a].check.name, "rows": shared})
    for item in items:
        if "overlap" in item.out:
            item.out["overlap"].sort(key=lambda o: (-o["rows"], o["check"]))


def _rows(sandbox: Sandbox, table: str, items: list[Item], columns: list[st.Column],
          raw: dict[tuple[int, int], Any], tried: dict[str, int], timestamp: str | None, budget: Budget) -> None:
    """Count the rows of the segments that could be reported (and the table's time range); decide the segments."""
    needed = sorted(key for key in raw if any(
        columns[key[0]].name not in own_columns(i) and i.failing and i.by_segment.get(key, 0) >= MIN_FAILING
        and i.by_segment[key] >= MIN_SHARE * i.failing for i in items))
    if not needed and not timestamp:
        for item in items:
            if columns:
                item.out["segments"] = []
        return
    layout = st.rows(table, [i.flag for i in items], columns, [(j, raw[(j, k)]) for j, k in needed], timestamp,
                     sandbox.dialect, indexed=timestamp is not None and _leads_index(sandbox, table, timestamp))
    found = _run(sandbox, layout.sql, 2, budget, "rows statement")
    if not found:
        return
    row = found[0]
    if timestamp:
        table_first, table_last = (_moment(v) for v in row[layout.time_at():layout.time_at() + 2])
        for item in items:
            if "onset" in item.out and table_first is not None:
                item.out["onset"].update({"table_first": table_first, "table_last": table_last})
    for i, item in enumerate(items):
        if not columns:
            continue
        own = own_columns(item)
        n_rows = _int(row[layout.scope_at(i)] if i in layout.scoped else row[0])
        segments = [Segment(columns[j].name, jsonable(raw[(j, k)], SAMPLE_TEXT_LIMIT), item.by_segment[(j, k)],
                            _int(row[layout.segment_at(m, i)]))
                    for m, (j, k) in enumerate(needed) if columns[j].name not in own]
        count = sum(tried.get(c.name, 0) for c in columns if c.name not in own)
        item.out["segments"] = concentrations(segments, n_rows, item.failing, tried=count)


def _leads_index(sandbox: Sandbox, table: str, column: str) -> bool:
    """Whether an index of ``table`` leads with ``column``, from the catalogue (False when it cannot be told)."""
    if sandbox.dialect not in st.RANGE_BY_INDEX:
        return False
    try:
        return bool(covered(index_prefixes(sandbox, table), [column]))
    except (ValueError, WatchdogError):
        return False


def _int(value: Any) -> int:
    return 0 if value is None else int(value)


def _value(cells: list[Any]) -> Any:
    shown = [jsonable(c, SAMPLE_TEXT_LIMIT) for c in cells]
    return shown[0] if len(shown) == 1 else shown


def _order(value: Any) -> tuple[Any, ...]:
    if isinstance(value, list):
        return tuple(_order(v) for v in value)
    if value is None:
        return (0, 0, "")
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        return (1, value, "")
    return (2, 0, str(value))


def _moment(value: Any) -> str | None:
    """A timestamp as ISO text the same on every database (SQLite's text ``'2026-11-14 06:02:11'`` included)."""
    if value is None:
        return None
    if isinstance(value, datetime):
        return value.replace(tzinfo=None).isoformat() if value.tzinfo is None else value.isoformat()
    if isinstance(value, date):
        return value.isoformat()
    text = str(value)
    try:
        return datetime.fromisoformat(text).isoformat()
    except ValueError:
        try:
            return date.fromisoformat(text).isoformat()
        except ValueError:
            return text
