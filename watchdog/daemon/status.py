"""``watchdog status``: who leads, its lease, the standbys, and each audit's next runs."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

import sqlalchemy as sa

from watchdog.daemon.apscheduler_wiring import JOBS_TABLE
from watchdog.daemon.jobs import audit_job_id
from watchdog.daemon.triggers import upcoming_runs
from watchdog.redact import redact_url
from watchdog.settings import Settings


def _stored_next_runs(engine: sa.Engine) -> dict[str, datetime | None]:
    """``{job id: next run time}`` from the job store the leader keeps in the history database."""
    if not sa.inspect(engine).has_table(JOBS_TABLE):
        return {}
    table = sa.table(JOBS_TABLE, sa.column("id"), sa.column("next_run_time"))
    with engine.connect() as conn:
        rows = conn.execute(sa.select(table.c.id, table.c.next_run_time)).all()
    return {row.id: datetime.fromtimestamp(float(row.next_run_time), UTC) if row.next_run_time is not None
            else None for row in rows}


def gather_status(settings: Settings, count: int = 3) -> dict[str, Any]:
    from watchdog.history import HistoryStore
    from watchdog.history.leases import describe, lease_state, live_members

    store = HistoryStore(settings.history_url(), wait_s=settings.history.wait_s)
    try:
        state = lease_state(store)
        seen = live_members(store, within_s=settings.scheduler.lease_s)
        stored = store.call(_stored_next_runs, store.engine)
    finally:
        store.close()
    lease = describe(state)
    leader = lease.get("leader")
    audits = []
    for entry in upcoming_runs(settings, count):
        job = audit_job_id(entry.audit)
        item = entry.to_json_dict()
        stored_next = stored.get(job)
        item["next_run"] = stored_next.isoformat() if stored_next is not None else None
        item["next_run_source"] = "job store" if stored_next is not None else "forecast"
        audits.append(item)
    return {"history": redact_url(settings.history_url()), "lease": lease,
            "members": [{"id": m.id, "host": m.host, "pid": m.pid, "role": "leader" if m.id == leader else "standby",
                         "seen_s_ago": round(m.seen_ago, 1)} for m in seen],
            "audits": audits}


def render_status(status: dict[str, Any]) -> str:
    lease = status["lease"]
    lines = [f"history:  {status['history']}"]
    if lease.get("leader"):
        lines.append(f"leader:   {lease['leader']} (lease token {lease['token']}, expires in "
                     f"{lease['lease_expires_in_s']:g}s, renewed {lease['renewed_s_ago']:g}s ago)")
    elif lease.get("last_holder"):
        lines.append(f"leader:   none (the lease of {lease['last_holder']} expired "
                     f"{-lease['lease_expires_in_s']:g}s ago; a standby takes over at its next poll)")
    else:
        lines.append("leader:   none (no `watchdog serve` has run on this history)")
    standbys = [m for m in status["members"] if m["role"] == "standby"]
    lines.append(f"standbys: {len(standbys)}" + "".join(f"\n  {m['id']} (seen {m['seen_s_ago']:g}s ago)"
                                                       for m in standbys))
    lines.append("next runs:")
    for audit in status["audits"]:
        if not audit["scheduled"]:
            lines.append(f"  {audit['audit']}: not scheduled")
            continue
        when = audit["next_run"] or (audit["next_runs"][0] if audit["next_runs"] else "never")
        lines.append(f"  {audit['audit']}: {audit['schedule']}, next {when} ({audit['next_run_source']})")
    return "\n".join(lines)
