"""The diagnosis stage: for every failing (or warning) check, where its failing rows concentrate, since when,
which values they get wrong and which other checks fail on the same rows.

It runs after the scan, through the same sandbox, one table at a time, with at most three statements per
table (:mod:`watchdog.diagnose.statements`) and a time budget per table. Nothing here can fail a scan: a
statement that errors or times out is recorded in the diagnosis of the table's checks, and what was found
before it is kept.
"""

from __future__ import annotations

import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import date, datetime
from typing import Any

from watchdog.defaults import DIAGNOSE_MAX_STATEMENTS, DIAGNOSE_TIMEOUT_S
from watchdog.diagnose import statements as st
from watchdog.diagnose.rule import Segment, concentrations
from watchdog.errors import QueryTimeout, SandboxError, WatchdogError
from watchdog.findings import SAMPLE_TEXT_LIMIT, Finding, FindingsDoc, jsonable
from watchdog.redact import redact
from watchdog.sandbox import Sandbox
from watchdog.scan.check_types import Check
from watchdog.scan.check_types.base import RowFlag
from watchdog.scan.scanner import with_column_types
from watchdog.scan.sqlbuild import split_name
from watchdog.scan.table_options import DiagnoseOptions

#: candidate segment columns per table, at most (in the table's column order)
MAX_CANDIDATES = 8
#: columns the probe looks at, at most
MAX_PROBED = 30
#: names taken for the time a row arrived, in order of preference, when the suite names none
TIMESTAMP_NAMES = ("created_at", "inserted_at", "ingested_at", "loaded_at", "created", "event_time", "timestamp",
                   "occurred_at", "updated_at")


@dataclass
class _Item:
    check: Check
    finding: Finding
    flag: RowFlag
    out: dict[str, Any]


class _Budget:
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


class _Stop(WatchdogError):
    """The table's diagnosis stops here (budget spent or a statement failed): ``reason`` says why."""

    def __init__(self, reason: str):
        super().__init__(reason)
        self.reason = reason


def wanted(finding: Finding, passing: bool = False) -> bool:
    """Whether the diagnosis looks at this finding: failing or warning, or (``passing``) passing with failing rows."""
    if finding.status in ("fail", "warn"):
        return True
    return passing and finding.status == "pass" and bool(finding.failing)


def diagnose(sandbox: Sandbox, checks: Sequence[Check], findings: Sequence[Finding], *, passing: bool = False,
             max_statements: int = DIAGNOSE_MAX_STATEMENTS, timeout_s: float = DIAGNOSE_TIMEOUT_S,
             ) -> dict[str, dict[str, Any]]:
    """The diagnosis of each finding it looks at (see :func:`wanted`), by finding name.

    ``checks`` are the scan's checks (their ``past`` gives the audit's history); ``max_statements`` and
    ``timeout_s`` bound each table's diagnosis. Never raises for a database's error."""
    by_name = {c.name: c for c in with_column_types(sandbox, list(checks))}
    out: dict[str, dict[str, Any]] = {}
    tables: dict[str, list[_Item]] = {}
    budgets: dict[str, _Budget] = {}
    for finding in findings:
        check = by_name.get(finding.name)
        if check is None:
            continue
        options = check.table_options.get("diagnose") or DiagnoseOptions()
        if not options.enabled or not wanted(finding, passing or options.passing):
            continue
        diagnosis: dict[str, Any] = {}
        streak = first_failed_run(check.past) if finding.status != "pass" else None
        if streak:
            diagnosis["first_failed_run"] = streak
        out[finding.name] = diagnosis
        if not check.table:
            continue
        try:
            flag = check.row_flag(sandbox.dialect, str(len(out)))
        except (WatchdogError, ValueError):
            flag = None
        if flag is not None:
            tables.setdefault(check.table, []).append(_Item(check, finding, flag, diagnosis))
            budgets.setdefault(check.table, _Budget(options.statements or max_statements,
                                                    options.timeout_s or timeout_s))
    for table, items in tables.items():
        _diagnose_table(sandbox, table, items, budgets[table])
    return out


def diagnose_doc(sandbox: Sandbox, checks: Sequence[Check], doc: FindingsDoc, **options: Any) -> None:
    """Diagnose ``doc``'s findings and put each diagnosis on its finding. Never raises but for Ctrl-C: a
    diagnosis that fails is recorded as its ``error`` (the findings themselves are never touched)."""
    try:
        found = diagnose(sandbox, checks, doc.findings, **options)
    except Exception as exc:  # a bug or an unexpected driver error must not cost the scan its findings
        message = f"the diagnosis failed: {redact(exc)}"
        found = {f.name: {"error": message} for f in doc.findings if wanted(f, options.get("passing", False))}
    for finding in doc.findings:
        if finding.name in found:
            finding.diagnosis = found[finding.name]


def first_failed_run(past: Sequence[Mapping[str, Any]]) -> dict[str, Any] | None:
    """The first run of the current failing streak among earlier runs (oldest first), with the streak's length
    counting this run; None when the previous run did not fail (the streak starts now)."""
    first = None
    runs = 1
    for entry in reversed(past):
        status = (entry.get("finding") or {}).get("status")
        if status not in ("fail", "warn"):
            break
        first, runs = entry, runs + 1
    if first is None:
        return None
    return {"run_id": first.get("run_id"), "at": first.get("started_at"), "runs": runs}


def _diagnose_table(sandbox: Sandbox, table: str, items: list[_Item], budget: _Budget) -> None:
    try:
        kinds = sandbox.column_types(split_name(table))
    except (ValueError, WatchdogError):
        kinds = {}
    options = next((i.check.table_options for i in items if i.check.table_options), {})
    timestamp = options.get("timestamp_column") or detect_timestamp(kinds)
    try:
        declared = options.get("segments")
        if declared:
            columns = [st.Column(c, kinds.get(c, ("unknown", ""))[0]) for c in declared]
        else:
            everyones = set.intersection(*[_own_columns(i) for i in items])  # no check of the table could use them
            columns = _candidates(sandbox, table, {k: v for k, v in kinds.items() if k not in everyones}, timestamp,
                                  budget)
        if columns or timestamp:
            _segments(sandbox, table, items, columns, timestamp, budget)
        _failing(sandbox, table, items, kinds, timestamp, budget)
    except _Stop as stop:
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


def _run(sandbox: Sandbox, sql: str, max_rows: int, budget: _Budget, what: str) -> list[tuple[Any, ...]]:
    timeout = budget.take()
    if timeout is None:
        raise _Stop(f"not finished: the statement budget of the table ({budget.used} statements, "
                    f"{budget.seconds:g}s) was spent before the {what}")
    try:
        result = sandbox.query(sql, max_rows=max_rows, timeout_s=min(timeout, sandbox.timeout_s), parallel=True)
    except QueryTimeout as exc:
        raise _Stop(f"timed out in the {what}: {redact(exc)}") from None
    except SandboxError as exc:
        raise _Stop(f"{exc.prefix} in the {what}: {redact(exc)}") from None
    return list(result.rows)


def _segment_kind(kind: str, declared: str) -> bool:
    if kind in ("text", "boolean", "unknown", "other"):
        return "BLOB" not in declared.upper() and "JSON" not in declared.upper()
    return kind == "number" and "INT" in declared.upper()


def _candidates(sandbox: Sandbox, table: str, kinds: Mapping[str, tuple[str, str]], timestamp: str | None,
                budget: _Budget) -> list[st.Column]:
    """Low-cardinality columns of the table (one probe over its first rows)."""
    names = [n for n, (kind, declared) in kinds.items() if n != timestamp and _segment_kind(kind, declared)]
    names = names[:MAX_PROBED]
    if not names:
        return []
    rows = _run(sandbox, st.probe(table, names, sandbox.dialect), 2, budget, "probe of segment columns")
    if not rows:
        return []
    *counts, probed = [int(v or 0) for v in rows[0]]
    # a column whose every probed value is distinct is a key: each of its segments holds one row
    keep = [n for n, d in zip(names, counts, strict=False) if 1 <= d <= st.MAX_SEGMENT_VALUES and d < probed]
    return [st.Column(n, kinds[n][0]) for n in keep[:MAX_CANDIDATES]]


def _own_columns(item: _Item) -> set[str]:
    own = set(item.flag.values)
    own.update(c for c in [item.check.column, *(item.check.columns or [])] if c)
    return own


def _segments(sandbox: Sandbox, table: str, items: list[_Item], columns: list[st.Column], timestamp: str | None,
              budget: _Budget) -> None:
    layout = st.segments(table, [i.flag for i in items], columns, timestamp, sandbox.dialect)
    rows = _run(sandbox, layout.sql, layout.max_rows, budget, "segments statement")
    total = next((r for r in rows if int(r[0]) == -1), None)
    if total is None:
        return
    by_column: dict[int, list[tuple[Any, ...]]] = {}
    for row in rows:
        if int(row[0]) >= 0:
            by_column.setdefault(int(row[0]), []).append(row)
    table_first = table_last = None
    if timestamp:
        table_first, table_last = (_moment(v) for v in total[layout.time_at():layout.time_at() + 2])
    for i, item in enumerate(items):
        scoped = layout.scoped[i]
        n_rows = _int(total[layout.scope_at(i)] if scoped else total[layout.rows_at()])
        n_failing = _int(total[layout.failing_at(i)])
        if timestamp and table_first is not None:
            item.out.setdefault("onset", {})["column"] = timestamp
            item.out["onset"].update({"table_first": table_first, "table_last": table_last})
        if not columns:
            continue
        tried: list[Segment] = []
        own = _own_columns(item)
        for j, col in enumerate(columns):
            found = by_column.get(j, [])
            if col.name in own or len(found) > st.MAX_SEGMENT_VALUES:
                continue
            for row in found:
                rows_in = _int(row[layout.scope_at(i)] if scoped else row[layout.rows_at()])
                if rows_in:
                    tried.append(Segment(col.name, jsonable(row[layout.value_at(j)], SAMPLE_TEXT_LIMIT),
                                         _int(row[layout.failing_at(i)]), rows_in))
        item.out["segments"] = concentrations(tried, n_rows, n_failing)


def _failing(sandbox: Sandbox, table: str, items: list[_Item], kinds: Mapping[str, tuple[str, str]],
             timestamp: str | None, budget: _Budget) -> None:
    values = [[st.Column(c, kinds.get(c, ("unknown", ""))[0]) for c in i.flag.values] for i in items]
    if not timestamp and len(items) < 2 and not any(values):
        return
    layout = st.failing(table, [i.flag for i in items], values, timestamp, sandbox.dialect)
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
        if total is not None and timestamp:
            first, last = (_moment(v) for v in total[layout.time_at(i):layout.time_at(i) + 2])
            if first is not None:
                onset = item.out.setdefault("onset", {"column": timestamp})
                onset.update({"first": first, "last": last})
                item.out["onset"] = {k: onset[k] for k in ("column", "first", "last", "table_first", "table_last")
                                     if k in onset}
    if total is None:
        return
    for p, (a, b) in enumerate(layout.pairs):
        shared = _int(total[layout.pair_at(p)])
        if shared:
            items[a].out.setdefault("overlap", []).append({"check": items[b].check.name, "rows": shared})
            items[b].out.setdefault("overlap", []).append({"check": items[a].check.name, "rows": shared})
    for item in items:
        if "overlap" in item.out:
            item.out["overlap"].sort(key=lambda o: (-o["rows"], o["check"]))


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
