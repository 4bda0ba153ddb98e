"""Each check's findings over an audit's recent runs: the history ``anomaly:`` and ``schema_changes`` judge against."""

from __future__ import annotations

import json
from typing import Any

import sqlalchemy as sa

from watchdog.defaults import DEFAULT_HISTORY_RUNS
from watchdog.history.store import HistoryStore, run_findings, runs


def past_findings(store: HistoryStore, audit: str, before_run_id: str,
                  runs_back: int = DEFAULT_HISTORY_RUNS) -> dict[str, list[dict[str, Any]]]:
    """``{check name: [{"run_id", "started_at", "finding"}, ...]}``, oldest first, from up to
    ``runs_back`` finished runs of ``audit`` started before ``before_run_id``."""
    current = store.get_run(before_run_id)
    recent = (sa.select(runs.c.id, runs.c.started_at)
              .where(runs.c.audit == audit, runs.c.id != before_run_id, runs.c.summary.is_not(None))
              .order_by(runs.c.started_at.desc(), runs.c.id.desc()).limit(runs_back))
    if current is not None:
        recent = recent.where(runs.c.started_at < current.started_at)
    picked = recent.subquery("recent")
    query = (sa.select(picked.c.id, picked.c.started_at, run_findings.c.name, run_findings.c.finding)
             .join(run_findings, run_findings.c.run_id == picked.c.id)
             .order_by(picked.c.started_at, picked.c.id))
    out: dict[str, list[dict[str, Any]]] = {}
    with store.engine.connect() as conn:
        for row in conn.execute(query):
            finding = json.loads(row.finding) if row.finding else {}
            out.setdefault(row.name, []).append({"run_id": row.id, "started_at": row.started_at, "finding": finding})
    return out
