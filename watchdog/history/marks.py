"""High-water marks of incremental tables, read from the run history.

A run of an audit records, with each finding of a windowed check, the window it judged
(``window: {column, from, to}``). A table's mark is the ``to`` of the newest run of the audit whose findings were
recorded and whose windowed findings on that table all have a result (no ``error``): a run that failed halfway
records no findings and so never advances the mark, and a check that could not run leaves the older mark in
force (its rows are judged again). Several ``serve`` instances sharing a history database share the marks.
"""

from __future__ import annotations

from typing import Any

from watchdog.history.store import HistoryStore

#: how many recent runs of an audit are searched for a table's mark
RUNS_SEARCHED = 50
_UNRECORDED = frozenset({"running", "interrupted"})


def marks_of(store: HistoryStore, audit: str) -> dict[str, Any]:
    """``{table: mark}`` for the audit's incremental tables (as recorded: an integer or ISO text)."""
    runs = [r for r in store.list_runs(audit, limit=RUNS_SEARCHED) if r.status not in _UNRECORDED]
    findings = store.findings_of_runs([r.id for r in runs])
    marks: dict[str, Any] = {}
    settled: set[str] = set()
    for run in runs:  # newest first
        by_table: dict[str, list[dict[str, Any]]] = {}
        for finding in findings.get(run.id, []):
            if finding.get("window") and finding.get("table"):
                by_table.setdefault(finding["table"], []).append(finding)
        for table, windowed in by_table.items():
            if table in settled or any(f.get("status") == "error" for f in windowed):
                continue
            settled.add(table)
            marks[table] = windowed[0]["window"]["to"]
    return marks
