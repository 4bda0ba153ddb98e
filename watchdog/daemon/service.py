"""The daemon behind ``watchdog serve``: start, serve the scheduled audits, stop cleanly.

* **Clean stop.** SIGTERM or SIGINT ends the wait; the scheduler stops taking new runs and the
  running ones finish (up to ``grace`` seconds). A second signal, or the grace running out, stops at
  once: the runs still going are recorded ``interrupted``, never left ``running``. Runs left
  ``running`` by a crash are marked ``interrupted`` at start.
"""

from __future__ import annotations

import os
import signal
import threading
import time
from typing import Any

from apscheduler.events import EVENT_JOB_ERROR, EVENT_JOB_MAX_INSTANCES, EVENT_JOB_MISSED
from apscheduler.schedulers.background import BackgroundScheduler

from watchdog.daemon.jobs import (
    audit_job_id,
    log,
    one_line,
    remember_settings,
    running_audits,
)
from watchdog.daemon.scheduler import (
    JOBS_TABLE,
    SyncResult,
    create_scheduler,
    on_job_event,
    stamp,
    sync_jobs,
    validate_for_serve,
)
from watchdog.daemon.triggers import describe_schedule
from watchdog.errors import WatchdogError
from watchdog.exit_codes import ExitCode
from watchdog.redact import redact, safe_url
from watchdog.settings import Settings

DEFAULT_GRACE_S = 60.0
#: exit code of a stop that did not wait for the running audits (second signal, or grace ran out)
FORCED_EXIT = int(ExitCode.INTERRUPTED)


def _warm_up() -> None:
    """Import what a run needs (the delivery graph pulls in LangGraph, ~1.5 s) before the first
    fire, so the first run takes as long as the others and a missing dependency shows at start."""
    import watchdog.delivery.outbox  # noqa: F401
    import watchdog.graph.checkpoints  # noqa: F401
    import watchdog.report.html  # noqa: F401
    import watchdog.run.audit  # noqa: F401
    import watchdog.run.review_gate  # noqa: F401


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
            scheduler.add_listener(on_job_event, EVENT_JOB_MAX_INSTANCES | EVENT_JOB_MISSED | EVENT_JOB_ERROR)
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
        previous: dict[int, Any] = {}
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
            when = stamp(job.next_run_time) if job.next_run_time else "never"
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
                log.warning("scheduler shutdown: %s", one_line(exc))
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

