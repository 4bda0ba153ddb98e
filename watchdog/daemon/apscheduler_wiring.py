"""APScheduler wiring: the scheduler with its job store in the history database, and the job sync.

* **Persistent jobs.** Jobs live in a SQLAlchemy job store in the history database
  (``settings.history_url()``, table :data:`JOBS_TABLE`). At start the store is synced with the
  configuration: one job ``audit:<name>`` per audit with a ``schedule:``, jobs of audits no longer
  configured removed, plus the ``outbox`` job that retries waiting deliveries every
  ``scheduler.outbox_interval_s``. A job whose schedule did not change keeps its stored next run
  time, so a run due while the daemon was down runs once at start (missed runs are coalesced) if it
  is no later than ``scheduler.misfire_grace_s``.
* **Never twice at once.** ``max_instances=1``: a run that outlasts its interval makes the fires in
  between be skipped (logged), it never overlaps itself.
* **Each tick once.** The executor hands every audit run its scheduled time (:class:`TickExecutor`);
  the run claims ``(audit, scheduled time)`` in the history, so however many schedulers share the job
  store, and whatever they catch up after a restart, a tick runs once.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

from apscheduler.events import (
    EVENT_JOB_ERROR,
    EVENT_JOB_MAX_INSTANCES,
    EVENT_JOB_MISSED,
    JobEvent,
)
from apscheduler.executors.pool import ThreadPoolExecutor
from apscheduler.jobstores.sqlalchemy import SQLAlchemyJobStore
from apscheduler.schedulers.background import BackgroundScheduler
from apscheduler.triggers.base import BaseTrigger
from apscheduler.triggers.interval import IntervalTrigger

from watchdog.daemon.jobs import (
    AUDIT_PREFIX,
    FLUSH_OUTBOX_REF,
    RUN_AUDIT_REF,
    audit_job_id,
    log,
    one_line,
    tick_key,
)
from watchdog.daemon.triggers import same_schedule, scheduled_triggers
from watchdog.errors import ConfigError
from watchdog.settings import Settings

#: the job store's table, in the history database
JOBS_TABLE = "wd_apscheduler_jobs"
OUTBOX_JOB_ID = "outbox"


def validate_for_serve(settings: Settings) -> list[str]:
    """Check what the daemon will run, before it starts: the schedules and the check suites of
    every scheduled audit. Returns the scheduled audits' names; raises ConfigError."""
    from watchdog.scan.selection import load_selected

    if settings.source is None:
        raise ConfigError("serve needs a configuration file (--config)")
    names = list(scheduled_triggers(settings))
    for name in names:
        audit = settings.audits[name]
        load_selected([settings.path(p) for p in audit.checks], audit.selection, allow_empty=audit.allow_empty,
                      audit=name)
    return names


def _jobstore_engine(url: str) -> Any:
    import sqlalchemy as sa

    engine = sa.create_engine(url, pool_pre_ping=True)
    if engine.dialect.name == "sqlite":
        @sa.event.listens_for(engine, "connect")
        def _busy(dbapi_conn: Any, _record: Any) -> None:
            dbapi_conn.execute("PRAGMA busy_timeout=10000")
    return engine


class _TickJob:
    """A job as the executor runs it, with its scheduled time passed as ``scheduled_at``."""

    def __init__(self, job: Any, run_time: datetime):
        self._job = job
        self.kwargs = {**job.kwargs, "scheduled_at": tick_key(run_time)}

    def __getattr__(self, name: str) -> Any:
        return getattr(self._job, name)

    def __str__(self) -> str:
        return str(self._job)


class TickExecutor(ThreadPoolExecutor):
    """A thread pool that tells each audit run which tick it is (APScheduler 3 does not pass it)."""

    def _do_submit_job(self, job: Any, run_times: list[datetime]) -> None:
        if job.id.startswith(AUDIT_PREFIX) and run_times:
            job = _TickJob(job, run_times[-1])   # coalesced: the latest due time is the one run
        super()._do_submit_job(job, run_times)


def create_scheduler(settings: Settings, *, max_workers: int = 10) -> BackgroundScheduler:
    """A BackgroundScheduler with the job store in the history database (not started)."""
    jobstore = SQLAlchemyJobStore(engine=_jobstore_engine(settings.history_url()), tablename=JOBS_TABLE)
    return BackgroundScheduler(
        jobstores={"default": jobstore},
        executors={"default": TickExecutor(max_workers)},
        job_defaults={"coalesce": True, "max_instances": 1, "misfire_grace_time": settings.scheduler.misfire_grace_s},
        timezone=UTC)


@dataclass
class SyncResult:
    added: list[str] = field(default_factory=list)      # new jobs, or jobs whose schedule changed
    kept: list[str] = field(default_factory=list)       # same schedule: stored next run time kept
    removed: list[str] = field(default_factory=list)    # audits no longer configured (or unscheduled)


def sync_jobs(scheduler: BackgroundScheduler, settings: Settings) -> SyncResult:
    """Make the job store match the configuration (the scheduler must be started, best paused):
    add or replace ``audit:<name>`` for each scheduled audit and the ``outbox`` job, remove the rest.
    A job whose schedule is unchanged keeps its trigger and stored next run time."""
    triggers = scheduled_triggers(settings)
    config_path = str(settings.source)
    grace = settings.scheduler.misfire_grace_s
    wanted: dict[str, tuple[str, list[str], BaseTrigger]] = {
        audit_job_id(name): (RUN_AUDIT_REF, [config_path, name], trigger) for name, trigger in triggers.items()}
    wanted[OUTBOX_JOB_ID] = (FLUSH_OUTBOX_REF, [config_path],
                             IntervalTrigger(seconds=settings.scheduler.outbox_interval_s, timezone=UTC))
    result = SyncResult()
    existing = {job.id: job for job in scheduler.get_jobs()}
    for job_id in existing:
        if job_id not in wanted:
            scheduler.remove_job(job_id)
            result.removed.append(job_id)
    for job_id, (func, args, trigger) in wanted.items():
        old = existing.get(job_id)
        options: dict[str, Any] = {}
        if old is not None and old.next_run_time is not None and same_schedule(old.trigger, trigger):
            trigger = old.trigger
            options["next_run_time"] = old.next_run_time
            result.kept.append(job_id)
        else:
            result.added.append(job_id)
        scheduler.add_job(func, trigger, args=args, id=job_id, name=job_id, replace_existing=True, coalesce=True,
                          max_instances=1, misfire_grace_time=grace, **options)
    return result


def on_job_event(event: JobEvent) -> None:
    what = event.job_id.removeprefix(AUDIT_PREFIX)
    label = f"audit {what}" if event.job_id.startswith(AUDIT_PREFIX) else event.job_id
    if event.code == EVENT_JOB_MAX_INSTANCES:
        due = ", ".join(stamp(t) for t in getattr(event, "scheduled_run_times", []) or [])
        log.info("%s: skipped the run due at %s, the previous run is still going", label, due)
    elif event.code == EVENT_JOB_MISSED:
        missed = getattr(event, "scheduled_run_time", None)
        log.warning("%s: missed the run due at %s (more than misfire_grace_s late)", label,
                    stamp(missed) if missed else "?")
    elif event.code == EVENT_JOB_ERROR:  # the job functions catch everything; this is a last resort
        log.error("%s: job error: %s", label, one_line(getattr(event, "exception", "")))


def stamp(moment: datetime) -> str:
    return moment.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


