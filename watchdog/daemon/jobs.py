"""The two jobs the daemon schedules, and what they share while running.

Every scheduled run calls :func:`watchdog.run.audit.execute_audit`, exactly as ``watchdog run`` does,
through :func:`run_audit_job`; that wrapper never raises (one audit's failure -- database, LLM or
SMTP down -- never stops the other audits or the daemon) and logs each run's start, end and outcome,
one line each, on the ``watchdog.scheduler`` logger. :func:`flush_outbox_job` retries waiting
deliveries. Both are stored in the job store by textual reference with picklable arguments (the
config path and the audit name); ``watchdog.scheduler`` keeps the references stored by older versions.
"""

from __future__ import annotations

import logging
import threading
import time
import traceback
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import UTC, datetime
from typing import Any

from watchdog.redact import redact
from watchdog.settings import Settings, load_settings

log = logging.getLogger("watchdog.scheduler")

AUDIT_PREFIX = "audit:"
RUN_AUDIT_REF = "watchdog.daemon.jobs:run_audit_job"
FLUSH_OUTBOX_REF = "watchdog.daemon.jobs:flush_outbox_job"

_settings_by_path: dict[str, Settings] = {}
_state_lock = threading.Lock()
_active: dict[str, float] = {}           # audit name -> monotonic start, for the audits running now
_outbox_lock = threading.Lock()          # held while the outbox job flushes
_leadership: dict[str, Any] = {"instance": None, "token": 0}   # set by the daemon while it leads


def set_leadership(instance: str | None, token: int) -> None:
    """The lease this process schedules under (token 0: it does not lead; scheduled runs are skipped)."""
    with _state_lock:
        _leadership.update(instance=instance, token=token)


def tick_key(moment: datetime) -> str:
    """A scheduled time as the tick's key: UTC, ISO 8601 with microseconds."""
    return moment.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%S.%fZ")


def audit_job_id(name: str) -> str:
    return f"{AUDIT_PREFIX}{name}"


def remember_settings(settings: Settings) -> None:
    """Runs use the configuration the daemon validated at start (not a file edited since)."""
    with _state_lock:
        _settings_by_path[str(settings.source)] = settings


def _settings_for(config_path: str) -> Settings:
    with _state_lock:
        settings = _settings_by_path.get(config_path)
    if settings is None:
        settings = load_settings(config_path)
        remember_settings(settings)
    return settings


def running_audits() -> list[str]:
    with _state_lock:
        return sorted(_active)


@contextmanager
def _tracked(name: str) -> Iterator[None]:
    with _outbox_lock, _state_lock:      # an outbox flush in progress finishes first (no double send)
        _active[name] = time.monotonic()
    try:
        yield
    finally:
        with _state_lock:
            _active.pop(name, None)


def one_line(text: object) -> str:
    return " ".join(redact(text).split())


def _parse_iso(text: str | None) -> datetime | None:
    if not text:
        return None
    try:
        return datetime.fromisoformat(text.replace("Z", "+00:00"))
    except ValueError:
        return None


def run_audit_job(config_path: str, name: str, scheduled_at: str | None = None) -> str | None:
    """Run the audit ``name`` of the configuration at ``config_path`` now (the scheduled job).

    Calls :func:`watchdog.run.audit.execute_audit`, the path of ``watchdog run``. With ``scheduled_at``
    (the tick, passed by the scheduler's executor) the run claims that tick under this daemon's lease:
    a tick claimed already (another instance, a catch-up after a restart) is skipped, as is every tick
    while this process does not lead. Never raises: an exception is logged on one line (secrets
    masked); the run itself is recorded ``error`` by ``execute_audit``, or here if it was left
    ``running``. Returns the run's status (``skipped``; None on error).
    """
    from watchdog.errors import TickTaken
    from watchdog.run.audit import execute_audit

    with _state_lock:
        instance, token = _leadership["instance"], int(_leadership["token"])
    if scheduled_at is not None and not token:
        log.info("audit %s: the run due at %s skipped: this instance does not lead", name, scheduled_at)
        return "skipped"
    started = time.monotonic()
    started_at = datetime.now(UTC).replace(microsecond=0)
    log.info("audit %s: run started%s", name, f" (due at {scheduled_at})" if scheduled_at else "")
    try:
        settings = _settings_for(config_path)
        with _tracked(name):
            if scheduled_at is None:
                run = execute_audit(settings, name)
            else:
                run = execute_audit(settings, name, tick=scheduled_at, claimed_by=instance, token=token)
    except TickTaken as exc:
        log.info("%s: skipped", one_line(exc))
        return "skipped"
    except BaseException as exc:  # noqa: BLE001 -- one audit's failure must never stop the daemon
        elapsed = time.monotonic() - started
        log.error("audit %s: run failed after %.1fs: %s: %s", name, elapsed, type(exc).__name__, one_line(exc))
        log.debug("audit %s: %s", name, redact(traceback.format_exc()))
        _close_left_running(config_path, name, started_at, exc)
        return None
    elapsed = time.monotonic() - started
    summary = ""
    if run.scan is not None:
        s = run.scan.doc.summary
        summary = f" ({s.checks} checks: {s.failed} failed, {s.warned} warned, {s.passed} passed, {s.errors} errors)"
    deliveries = ", ".join(f"{d['channel']}:{d['status']}" for d in run.deliveries)
    level = logging.WARNING if run.status == "error" or run.filing_error else logging.INFO
    filed = f"NOT filed ({one_line(run.filing_error)})" if run.filing_error else f"filed {run.run_dir}"
    log.log(level, "audit %s: run %s %s in %.1fs%s, %s%s", name, run.run_id, run.status, elapsed, summary,
            filed, f", deliveries {deliveries}" if deliveries else "")
    return run.status


def _close_left_running(config_path: str, name: str, since: datetime, exc: BaseException) -> None:
    """After an exception outside the scan (filing, recording), the run this job started may still
    read ``running``: record it ``error``."""
    from watchdog.history import HistoryStore

    try:
        settings = _settings_for(config_path)
        store = HistoryStore(settings.history_url(), wait_s=settings.history.wait_s)
        try:
            for record in store.list_runs(name, status="running", limit=20):
                started = _parse_iso(record.started_at)
                if started is not None and started >= since:
                    store.finish_run(record.id, status="error", error=f"{type(exc).__name__}: {redact(exc)}")
                    log.warning("audit %s: run %s was left running, recorded as error", name, record.id)
        finally:
            store.close()
    except Exception as again:  # noqa: BLE001 -- the history database itself may be what is down
        log.debug("audit %s: could not check for a run left running: %s", name, one_line(again))


def flush_outbox_job(config_path: str) -> int:
    """Retry the deliveries waiting in the outbox (the periodic ``outbox`` job). Never raises.

    Skipped while an audit runs (each run flushes the outbox itself first); returns how many
    deliveries were tried.
    """
    from watchdog.delivery.outbox import flush_outbox
    from watchdog.history import HistoryStore

    with _state_lock:
        if _active or not _outbox_lock.acquire(blocking=False):
            log.debug("outbox: skipped, an audit is running")
            return 0
    try:
        settings = _settings_for(config_path)
        store = HistoryStore(settings.history_url(), wait_s=settings.history.wait_s)
        try:
            done = flush_outbox(settings, store)
        finally:
            store.close()
    except BaseException as exc:  # noqa: BLE001
        log.error("outbox: flush failed: %s: %s", type(exc).__name__, one_line(exc))
        return 0
    finally:
        _outbox_lock.release()
    if done:
        sent = sum(1 for record in done if record.status == "sent")
        log.info("outbox: retried %d deliveries: %d sent, %d still waiting", len(done), sent, len(done) - sent)
    return len(done)


