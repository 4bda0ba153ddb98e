"""The daemon behind ``watchdog serve`` and the forecast behind ``watchdog schedule`` (APScheduler 3.x).

* **One run function.** Every scheduled run calls :func:`watchdog.audits.execute_audit`, exactly as
  ``watchdog run`` does, through :func:`run_audit_job`; that wrapper never raises (one audit's
  failure -- database, LLM or SMTP down -- never stops the other audits or the daemon) and logs each
  run's start, end and outcome, one line each, on the ``watchdog.scheduler`` logger.
* **Persistent jobs.** Jobs live in a SQLAlchemy job store in the history database
  (``settings.history_url()``, table :data:`JOBS_TABLE`), named by textual reference
  (``watchdog.scheduler:run_audit_job``) with picklable arguments (the config path and the audit
  name). At start the store is synced with the configuration: one job ``audit:<name>`` per audit
  with a ``schedule:``, jobs of audits no longer configured removed, plus the ``outbox`` job that
  retries waiting deliveries every ``scheduler.outbox_interval_s``. A job whose schedule did not
  change keeps its stored next run time, so a run due while the daemon was down runs once at start
  (missed runs are coalesced) if it is no later than ``scheduler.misfire_grace_s``.
* **Never twice at once.** ``max_instances=1``: a run that outlasts its interval makes the fires in
  between be skipped (logged), it never overlaps itself.
* **Cron like cron.** ``schedule: "0 6 * * 1"`` means Mondays at 06:00 in the audit's ``timezone``,
  as in crontab. (APScheduler 3's own ``CronTrigger.from_crontab`` counts weekdays from Monday = 0
  and ANDs day-of-month with day-of-week; :func:`cron_trigger` translates.)
* **Clean stop.** SIGTERM or SIGINT ends the wait; the scheduler stops taking new runs and the
  running ones finish (up to ``grace`` seconds). A second signal, or the grace running out, stops at
  once: the runs still going are recorded ``interrupted``, never left ``running``. Runs left
  ``running`` by a crash are marked ``interrupted`` at start.
"""

from __future__ import annotations

import logging
import os
import signal
import threading
import time
import traceback
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from datetime import datetime, timezone
from typing import Any

from apscheduler.events import EVENT_JOB_ERROR, EVENT_JOB_MAX_INSTANCES, EVENT_JOB_MISSED, JobEvent
from apscheduler.executors.pool import ThreadPoolExecutor
from apscheduler.jobstores.sqlalchemy import SQLAlchemyJobStore
from apscheduler.schedulers.background import BackgroundScheduler
from apscheduler.triggers.base import BaseTrigger
from apscheduler.triggers.interval import IntervalTrigger

from watchdog.errors import ConfigError, WatchdogError
from watchdog.redact import redact, safe_url

from watchdog.schedules import describe_schedule, same_schedule, scheduled_triggers
from watchdog.settings import Settings, load_settings

log = logging.getLogger("watchdog.scheduler")

#: the job store's table, in the history database
JOBS_TABLE = "wd_apscheduler_jobs"
AUDIT_PREFIX = "audit:"
OUTBOX_JOB_ID = "outbox"
RUN_AUDIT_REF = "watchdog.scheduler:run_audit_job"
FLUSH_OUTBOX_REF = "watchdog.scheduler:flush_outbox_job"
DEFAULT_GRACE_S = 60.0
#: exit code of a stop that did not wait for the running audits (second signal, or grace ran out)
FORCED_EXIT = 130

_settings_by_path: dict[str, Settings] = {}
_state_lock = threading.Lock()
_active: dict[str, float] = {}           # audit name -> monotonic start, for the audits running now
_outbox_lock = threading.Lock()          # held while the outbox job flushes


def audit_job_id(name: str) -> str:
    return f"{AUDIT_PREFIX}{name}"


# ---- triggers


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
    with _outbox_lock:                   # an outbox flush in progress finishes first (no double send)
        with _state_lock:
            _active[name] = time.monotonic()
    try:
        yield
    finally:
        with _state_lock:
            _active.pop(name, None)


def _one_line(text: object) -> str:
    return " ".join(redact(text).split())


def _parse_iso(text: str | None) -> datetime | None:
    if not text:
        return None
    try:
        return datetime.fromisoformat(text.replace("Z", "+00:00"))
    except ValueError:
        return None


def run_audit_job(config_path: str, name: str) -> str | None:
    """Run the audit ``name`` of the configuration at ``config_path`` now (the scheduled job).

    Calls :func:`watchdog.audits.execute_audit`, the path of ``watchdog run``. Never raises: an
    exception is logged on one line (secrets masked); the run itself is recorded ``error`` by
    ``execute_audit``, or here if it was left ``running``. Returns the run's status (None on error).
    """
    from watchdog.audits import execute_audit

    started = time.monotonic()
    started_at = datetime.now(timezone.utc).replace(microsecond=0)
    log.info("audit %s: run started", name)
    try:
        settings = _settings_for(config_path)
        with _tracked(name):
            run = execute_audit(settings, name)
    except BaseException as exc:  # noqa: BLE001 -- one audit's failure must never stop the daemon
        elapsed = time.monotonic() - started
        log.error("audit %s: run failed after %.1fs: %s: %s", name, elapsed, type(exc).__name__, _one_line(exc))
        log.debug("audit %s: %s", name, redact(traceback.format_exc()))
        _close_left_running(config_path, name, started_at, exc)
        return None
    elapsed = time.monotonic() - started
    summary = ""
    if run.scan is not None:
        s = run.scan.doc.summary
        summary = f" ({s.checks} checks: {s.failed} failed, {s.warned} warned, {s.passed} passed, {s.errors} errors)"
    deliveries = ", ".join(f"{d['channel']}:{d['status']}" for d in run.deliveries)
    level = logging.WARNING if run.status == "error" else logging.INFO
    log.log(level, "audit %s: run %s %s in %.1fs%s, filed %s%s", name, run.run_id, run.status, elapsed, summary,
            run.run_dir, f", deliveries {deliveries}" if deliveries else "")
    return run.status


def _close_left_running(config_path: str, name: str, since: datetime, exc: BaseException) -> None:
    """After an exception outside the scan (filing, recording), the run this job started may still
    read ``running``: record it ``error``."""
    from watchdog.history import HistoryStore

    try:
        settings = _settings_for(config_path)
        store = HistoryStore(settings.history_url())
        try:
            for record in store.list_runs(name, status="running", limit=20):
                started = _parse_iso(record.started_at)
                if started is not None and started >= since:
                    store.finish_run(record.id, status="error", error=f"{type(exc).__name__}: {redact(exc)}")
                    log.warning("audit %s: run %s was left running, recorded as error", name, record.id)
        finally:
            store.close()
    except Exception as again:  # noqa: BLE001 -- the history database itself may be what is down
        log.debug("audit %s: could not check for a run left running: %s", name, _one_line(again))


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
        store = HistoryStore(settings.history_url())
        try:
            done = flush_outbox(settings, store)
        finally:
            store.close()
    except BaseException as exc:  # noqa: BLE001
        log.error("outbox: flush failed: %s: %s", type(exc).__name__, _one_line(exc))
        return 0
    finally:
        _outbox_lock.release()
    if done:
        sent = sum(1 for record in done if record.status == "sent")
        log.info("outbox: retried %d deliveries: %d sent, %d still waiting", len(done), sent, len(done) - sent)
    return len(done)


# ---- the scheduler


def validate_for_serve(settings: Settings) -> list[str]:
    """Check what the daemon will run, before it starts: the schedules and the check suites of
    every scheduled audit. Returns the scheduled audits' names; raises ConfigError."""
    from watchdog.runner import expand_suite_paths
    from watchdog.suites import load_suites

    if settings.source is None:
        raise ConfigError("serve needs a configuration file (--config)")
    names = list(scheduled_triggers(settings))
    for name in names:
        load_suites(expand_suite_paths(settings.path(p) for p in settings.audits[name].checks))
    return names


def _jobstore_engine(url: str) -> Any:
    import sqlalchemy as sa

    engine = sa.create_engine(url, pool_pre_ping=True)
    if engine.dialect.name == "sqlite":
        @sa.event.listens_for(engine, "connect")
        def _busy(dbapi_conn: Any, _record: Any) -> None:
            dbapi_conn.execute("PRAGMA busy_timeout=10000")
    return engine


def create_scheduler(settings: Settings, *, max_workers: int = 10) -> BackgroundScheduler:
    """A BackgroundScheduler with the job store in the history database (not started)."""
    jobstore = SQLAlchemyJobStore(engine=_jobstore_engine(settings.history_url()), tablename=JOBS_TABLE)
    return BackgroundScheduler(
        jobstores={"default": jobstore},
        executors={"default": ThreadPoolExecutor(max_workers)},
        job_defaults={"coalesce": True, "max_instances": 1, "misfire_grace_time": settings.scheduler.misfire_grace_s},
        timezone=timezone.utc)


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
                             IntervalTrigger(seconds=settings.scheduler.outbox_interval_s, timezone=timezone.utc))
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


def _on_job_event(event: JobEvent) -> None:
    what = event.job_id.removeprefix(AUDIT_PREFIX)
    label = f"audit {what}" if event.job_id.startswith(AUDIT_PREFIX) else event.job_id
    if event.code == EVENT_JOB_MAX_INSTANCES:
        due = ", ".join(_stamp(t) for t in getattr(event, "scheduled_run_times", []) or [])
        log.info("%s: skipped the run due at %s, the previous run is still going", label, due)
    elif event.code == EVENT_JOB_MISSED:
        due = getattr(event, "scheduled_run_time", None)
        log.warning("%s: missed the run due at %s (more than misfire_grace_s late)", label,
                    _stamp(due) if due else "?")
    elif event.code == EVENT_JOB_ERROR:  # the job functions catch everything; this is a last resort
        log.error("%s: job error: %s", label, _one_line(getattr(event, "exception", "")))


def _stamp(moment: datetime) -> str:
    return moment.astimezone(timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")


# ---- the daemon


def _warm_up() -> None:
    """Import what a run needs (the delivery graph pulls in LangGraph, ~1.5 s) before the first
    fire, so the first run takes as long as the others and a missing dependency shows at start."""
    import watchdog.audits  # noqa: F401
    import watchdog.checkpoints  # noqa: F401
    import watchdog.delivery.outbox  # noqa: F401
    import watchdog.report.html  # noqa: F401
    import watchdog.review  # noqa: F401


def _open_history(url: str, attempts: int = 3) -> Any:
    """The history store; a few tries, since another process creating its tables at the same
    moment makes ``create_all`` fail with "table already exists"."""
    from watchdog.history import HistoryStore

    for attempt in range(1, attempts + 1):
        try:
            return HistoryStore(url)
        except Exception as exc:
            if attempt < attempts and "already exists" in str(exc):
                time.sleep(0.2 * attempt)
                continue
            first = (str(getattr(exc, "orig", None) or exc).splitlines() or [type(exc).__name__])[0]
            raise WatchdogError(f"cannot open the history database {safe_url(url)}: {redact(first)}") from None
    raise AssertionError("unreachable")


class Daemon:
    """``watchdog serve``: run the scheduled audits until stopped.

    :param duration: stop cleanly after this many seconds (None: until a signal or :meth:`stop`)
    :param grace: seconds a stop waits for running audits before recording them ``interrupted``
    """

    def __init__(self, settings: Settings, *, duration: float | None = None, grace: float = DEFAULT_GRACE_S,
                 poll_s: float = 0.2):
        self.settings = settings
        self.duration = duration
        self.grace = grace
        self.poll_s = poll_s
        #: set to stop from another thread; signal handlers only append to ``signals`` (no locks in a handler)
        self.stop_event = threading.Event()
        self.signals: list[int] = []
        self.scheduler: BackgroundScheduler | None = None
        self._stopped_by_signal = False

    def stop(self) -> None:
        self.stop_event.set()

    def _on_signal(self, signum: int, _frame: Any) -> None:
        self.signals.append(signum)

    def run(self) -> int:
        """Serve until stopped; 0 after a clean stop, :data:`FORCED_EXIT` when runs had to be abandoned
        (the caller should then leave with ``os._exit``: their threads cannot be joined)."""
        from watchdog.history import HistoryStore

        settings = self.settings
        scheduled = validate_for_serve(settings)
        previous = self._install_signal_handlers()
        store: HistoryStore | None = None
        try:
            url = settings.history_url()
            store = _open_history(url)
            left = store.mark_running_interrupted()
            if left:
                log.warning("marked %d run(s) left running by an earlier stop as interrupted: %s", len(left),
                            ", ".join(left))
            remember_settings(settings)
            self.scheduler = scheduler = create_scheduler(settings)
            scheduler.add_listener(_on_job_event, EVENT_JOB_MAX_INSTANCES | EVENT_JOB_MISSED | EVENT_JOB_ERROR)
            scheduler.start(paused=True)
            try:
                _warm_up()
                synced = sync_jobs(scheduler, settings)
                scheduler.resume()
                self._log_start(synced, scheduled, url)
                reason = self._wait()
            except BaseException:
                scheduler.shutdown(wait=False)
                raise
            return self._shutdown(scheduler, store, reason)
        finally:
            if store is not None:
                store.close()
            self._restore_signal_handlers(previous)

    def _install_signal_handlers(self) -> dict[int, Any]:
        if threading.current_thread() is not threading.main_thread():
            return {}
        previous = {}
        for signum in (signal.SIGTERM, signal.SIGINT):
            previous[signum] = signal.signal(signum, self._on_signal)
        return previous

    @staticmethod
    def _restore_signal_handlers(previous: dict[int, Any]) -> None:
        for signum, handler in previous.items():
            signal.signal(signum, handler)

    def _log_start(self, synced: SyncResult, scheduled: list[str], url: str) -> None:
        settings = self.settings
        assert self.scheduler is not None
        for job_id in synced.removed:
            log.info("removed job %s: no longer configured", job_id)
        jobs = {job.id: job for job in self.scheduler.get_jobs()}
        for name, audit in settings.audits.items():
            job = jobs.get(audit_job_id(name))
            if name not in scheduled or job is None:
                log.info("audit %s: not scheduled (no schedule:)", name)
                continue
            when = _stamp(job.next_run_time) if job.next_run_time else "never"
            kept = " (kept from the job store)" if audit_job_id(name) in synced.kept else ""
            log.info("audit %s: %s, next run %s%s", name, describe_schedule(audit), when, kept)
        if not scheduled:
            log.warning("no audit has a schedule: only the outbox is served")
        until = f", stopping after {self.duration:g}s" if self.duration else ""
        log.info("serving %d scheduled audit(s) from %s (pid %d; jobs in %s, table %s; outbox every %gs%s); "
                 "stop with SIGTERM or Ctrl-C", len(scheduled), settings.source, os.getpid(), safe_url(url), JOBS_TABLE,
                 settings.scheduler.outbox_interval_s, until)

    def _wait(self) -> str:
        deadline = time.monotonic() + self.duration if self.duration else None
        while True:
            if self.signals:
                self._stopped_by_signal = True
                return f"{signal.Signals(self.signals[0]).name} received"
            if self.stop_event.is_set():
                return "stop requested"
            if deadline is not None and time.monotonic() >= deadline:
                return f"--for {self.duration:g}s elapsed"
            timeout = self.poll_s if deadline is None else max(0.0, min(self.poll_s, deadline - time.monotonic()))
            self.stop_event.wait(timeout)

    def _shutdown(self, scheduler: BackgroundScheduler, store: Any, reason: str) -> int:
        running = running_audits()
        # the signal that asked for this stop does not count; any other one means "now"
        signals_seen = 1 if self._stopped_by_signal else 0
        if running:
            log.info("stopping (%s): waiting up to %gs for running audit(s) %s; signal again to stop now",
                     reason, self.grace, ", ".join(running))
        else:
            log.info("stopping (%s)", reason)
        done = threading.Event()

        def stop_scheduler() -> None:
            try:
                scheduler.shutdown(wait=True)          # no new runs; running ones finish
            except Exception as exc:  # noqa: BLE001
                log.warning("scheduler shutdown: %s", _one_line(exc))
            finally:
                done.set()

        threading.Thread(target=stop_scheduler, name="watchdog-shutdown", daemon=True).start()
        deadline = time.monotonic() + self.grace
        while not done.wait(self.poll_s):
            if len(self.signals) > signals_seen or time.monotonic() >= deadline:
                why = "signal received again" if len(self.signals) > signals_seen else f"{self.grace:g}s grace over"
                ids = store.mark_running_interrupted(owner_pid=os.getpid())
                log.warning("stopped without waiting (%s): %d run(s) recorded as interrupted%s", why, len(ids),
                            f": {', '.join(ids)}" if ids else "")
                return FORCED_EXIT
        log.info("stopped cleanly")
        return 0


def serve(settings: Settings, *, duration: float | None = None, grace: float = DEFAULT_GRACE_S) -> int:
    """Run the daemon (see :class:`Daemon`); returns its exit code."""
    return Daemon(settings, duration=duration, grace=grace).run()

