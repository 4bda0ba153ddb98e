"""What the audit's earlier runs say about the monitored tables: the previous monitor run, each figure's series."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from watchdog.errors import QueryError
from watchdog.scan.check_types.freshness import to_utc

Past = Mapping[str, list[dict[str, Any]]]


def is_monitor(finding: Mapping[str, Any]) -> bool:
    """A table monitor's finding (not the error saying the catalogue could not be read)."""
    return bool((finding.get("params") or {}).get("monitor")) and finding.get("table") is not None


@dataclass
class PreviousRun:
    run_id: str
    started_at: datetime
    #: table name -> its schema (None on SQLite), the tables that run saw (dropped ones left out)
    tables: dict[str, str | None] = field(default_factory=dict)


def previous_run(past: Past) -> PreviousRun | None:
    """The latest earlier run that monitored tables, and the tables it saw."""
    latest: tuple[datetime, str] | None = None
    for items in past.values():
        for item in items:
            at = _at(item)
            if at is not None and is_monitor(item.get("finding") or {}) and (
                    latest is None or (at, str(item["run_id"])) > latest):
                latest = (at, str(item["run_id"]))
    if latest is None:
        return None
    run = PreviousRun(latest[1], latest[0])
    for items in past.values():
        for item in items:
            finding = item.get("finding") or {}
            details = finding.get("details") or {}
            if str(item.get("run_id")) == run.run_id and is_monitor(finding) and not details.get("dropped"):
                run.tables[str(finding.get("table"))] = details.get("schema")
    return run


def last(past: Past, name: str) -> tuple[datetime, dict[str, Any]] | None:
    """The newest earlier finding of ``name`` that was not an error, with its run's start."""
    for item in reversed(list(past.get(name, []))):
        finding = item.get("finding") or {}
        at = _at(item)
        if at is not None and finding.get("status") != "error" and not (finding.get("details") or {}).get("dropped"):
            return at, finding
    return None


def series(past: Past, name: str) -> list[tuple[datetime, float]]:
    """``observed`` of ``name`` in earlier runs, oldest first (errors and runs without a figure left out)."""
    points = []
    for item in past.get(name, []):
        finding = item.get("finding") or {}
        at = _at(item)
        if at is not None and finding.get("status") != "error" and finding.get("observed") is not None:
            points.append((at, float(finding["observed"])))
    return points


def _at(item: Mapping[str, Any]) -> datetime | None:
    try:
        return to_utc(item.get("started_at"))
    except QueryError:
        return None
