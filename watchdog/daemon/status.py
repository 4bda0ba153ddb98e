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
    from watchdog.history.leases import describe, last_stop, lease_state, live_members

    store = HistoryStore(settings.history_url(), wait_s=settings.history.wait_s)
    try:
        state = lease_state(store)
        seen = live_members(store, within_s=settings.scheduler.lease_s)
        stored = store.call(_stored_next_runs, store.engine)
        lease = describe(state)
        stop = last_stop(store, state.holder) if state is not None and state.holder and not lease.get("leader") \
            else None
    finally:
        store.close()
    leader = lease.get("leader")
    if stop is not None and stop.token == lease.get("token"):  # the last leader gave this lease up itself
        lease["stopped"] = {"at": datetime.fromtimestamp(stop.stopped_at, UTC).isoformat(timespec="seconds"),
                            "s_ago": round(stop.stopped_ago, 1), "reason": stop.reason, "outcome": stop.outcome}
    audits = []
    for entry in upcoming_runs(settings, count):
        job = audit_job_id(entry.audit)
        item = entry.to_json_dict()
        stored_next = stored.get(job)
        if leader and stored_next is not None:
            item["next_run"] = stored_next.isoformat()
            item["next_run_source"] = "job store"
        else:  # nobody schedules: when it would run, from its schedule, once a `watchdog serve` runs
            item["next_run"] = item["next_runs"][0] if item["next_runs"] else None
            item["next_run_source"] = "forecast"
        audits.append(item)
    return {"history": redact_url(settings.history_url()), "lease": lease,
            "members": [{"id": m.id, "host": m.host, "pid": m.pid, "role": "leader" if m.id == leader else "standby",
                         "seen_s_ago": round(m.seen_ago, 1)} for m in seen],
            "audits": audits}


def _leader_line(lease: dict[str, Any], standbys: int) -> str:
    """Who leads, or why nobody does: a clean stop (when, why), or a lease that ran out (a crash)."""
    if lease.get("leader"):
        return (f"leader:   {lease['leader']} (lease token {lease['token']}, expires in "
                f"{lease['lease_expires_in_s']:g}s, renewed {lease['renewed_s_ago']:g}s ago)")
    if not lease.get("last_holder"):
        return "leader:   none (no `watchdog serve` has run on this history)"
    takeover = ("a standby takes over at its next poll" if standbys else
                "no standby is running: nothing is scheduled until a `watchdog serve` starts")
    stop = lease.get("stopped")
    if stop:
        how = {"forced": "stopped without waiting for its running audits",
               "stopping": "was stopping (waiting for its running audits)"}.get(stop["outcome"], "stopped cleanly")
        return (f"leader:   none ({lease['last_holder']} {how} at {stop['at']}, {_ago(stop['s_ago'])}: "
                f"{stop['reason']}; {takeover})")
    return (f"leader:   none (the lease of {lease['last_holder']} expired {_ago(-lease['lease_expires_in_s'])} "
            f"without a clean stop: it crashed or lost the history database; {takeover})")


def _ago(seconds: float) -> str:
    return f"{seconds:g}s ago" if seconds < 120 else f"{seconds / 60:.0f} min ago"


def render_status(status: dict[str, Any]) -> str:
    lease = status["lease"]
    standbys = [m for m in status["members"] if m["role"] == "standby"]
    lines = [f"history:  {status['history']}", _leader_line(lease, len(standbys))]
    lines.append(f"standbys: {len(standbys)}" + "".join(f"\n  {m['id']} (seen {m['seen_s_ago']:g}s ago)"
                                                       for m in standbys))
    serving = bool(lease.get("leader")) or bool(standbys)
    lines.append("next runs:" if serving else "next runs (if a `watchdog serve` were running; none is):")
    for audit in status["audits"]:
        if not audit["scheduled"]:
            lines.append(f"  {audit['audit']}: not scheduled")
            continue
        when = audit["next_run"] or "never"
        word = "next" if serving else "would run"
        lines.append(f"  {audit['audit']}: {audit['schedule']}, {word} {when} ({audit['next_run_source']})")
    return "\n".join(lines)
