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

from watchdog.daemon.apscheduler_wiring import (
    JOBS_TABLE,
    SyncResult,
    create_scheduler,
    on_job_event,
    stamp,
    sync_jobs,
    validate_for_serve,
)
from watchdog.daemon.jobs import (
    audit_job_id,
    log,
    one_line,
    remember_settings,
    running_audits,
    set_leadership,
)
from watchdog.daemon.triggers import describe_schedule
from watchdog.errors import WatchdogError
from watchdog.exit_codes import ExitCode
from watchdog.redact import redact, redact_url
from watchdog.sandbox import cancel as cancelling
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


def _open_history(url: str, wait_s: float, attempts: int = 3) -> Any:
    """The history store; a few tries, since another process creating its tables at the same
    moment makes ``create_all`` fail with "table already exists"."""
    from watchdog.history import HistoryStore

    for attempt in range(1, attempts + 1):
        try:
            return HistoryStore(url, wait_s=wait_s)
        except Exception as exc:
            if attempt < attempts and "already exists" in str(exc):
                time.sleep(0.2 * attempt)
                continue
            first = (str(getattr(exc, "orig", None) or exc).splitlines() or [type(exc).__name__])[0]
            raise WatchdogError(f"cannot open the history database {redact_url(url)}: {redact(first)}") from None
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
        self.scheduler: BackgroundScheduler | None = None     # set while this instance leads
        self.lease: Any = None
        self._started_at = 0.0
        self._scheduled: list[str] = []
        self._stopped_by_signal = False

    def stop(self) -> None:
        self.stop_event.set()

    def _on_signal(self, signum: int, _frame: Any) -> None:
        self.signals.append(signum)

    def run(self) -> int:
        """Serve until stopped; 0 after a clean stop, :data:`FORCED_EXIT` when runs had to be abandoned
        (the caller should then leave with ``os._exit``: their threads cannot be joined)."""
        from watchdog.history import HistoryStore
        from watchdog.history.leases import LeaderLease, lock_sqlite_history

        settings = self.settings
        scheduled = validate_for_serve(settings)
        previous = self._install_signal_handlers()
        store: HistoryStore | None = None
        lease_store: HistoryStore | None = None
        lock = None
        try:
            url = settings.history_url()
            store = _open_history(url, settings.history.wait_s)
            lock = lock_sqlite_history(store)      # SQLite: one serve per history, refused with one line
            left = store.mark_running_interrupted()
            if left:
                log.warning("marked %d run(s) left running by an earlier stop as interrupted: %s", len(left),
                            ", ".join(left))
            remember_settings(settings)
            _warm_up()
            # the lease is renewed on its own connection, waiting at most a second: never longer than the lease
            lease_store = HistoryStore(url, wait_s=1.0)
            self.lease = lease = LeaderLease(lease_store, settings.scheduler.lease_s)
            self._started_at = time.time()
            self._scheduled = scheduled
            until = f", stopping after {self.duration:g}s" if self.duration else ""
            log.info("serving %d scheduled audit(s) from %s (instance %s, pid %d; history %s; lease %gs%s); "
                     "stop with SIGTERM or Ctrl-C", len(scheduled), settings.source, lease.instance, os.getpid(),
                     redact_url(url), settings.scheduler.lease_s, until)
            try:
                reason = self._wait()
            except BaseException:
                if self.scheduler is not None:
                    self.scheduler.shutdown(wait=False)
                raise
            return self._shutdown(store, reason)
        finally:
            for handle in (store, lease_store):
                if handle is not None:
                    handle.close()
            if lock is not None:
                lock.close()
            self._restore_signal_handlers(previous)

    # ---- leadership

    def _poll_lease(self) -> None:
        """Renew (or try to take) the lease; start or stop scheduling accordingly."""
        lease = self.lease
        try:
            lease.acquire_or_renew()
        except Exception as exc:  # noqa: BLE001 -- the database is down or slow: `leading` still expires on time
            log.warning("lease: the history database did not answer (%s); %s", one_line(exc),
                        "still leading until the lease runs out" if lease.leading else "standing by")
        if lease.leading and self.scheduler is None:
            self._lead()
        elif not lease.leading and self.scheduler is not None:
            self._step_down("the lease could not be renewed in time" if lease.token else "another instance holds it")
        try:
            lease.heartbeat(started_at=self._started_at)
        except Exception as exc:  # noqa: BLE001 -- the member list is for `status` only
            log.debug("heartbeat: %s", one_line(exc))

    def _lead(self) -> None:
        lease, settings = self.lease, self.settings
        cancelling.resume()
        set_leadership(lease.instance, lease.token)
        log.info("instance %s leads (lease token %d)", lease.instance, lease.token)
        try:
            orphans = lease.store.mark_orphans_interrupted(lease.token)   # waits a second at most: the lease runs
            if orphans:
                log.warning("marked %d run(s) of the previous leader as interrupted: %s", len(orphans),
                            ", ".join(orphans))
            self.scheduler = scheduler = create_scheduler(settings)
            scheduler.add_listener(on_job_event, EVENT_JOB_MAX_INSTANCES | EVENT_JOB_MISSED | EVENT_JOB_ERROR)
            scheduler.start(paused=True)
            synced = sync_jobs(scheduler, settings)
            scheduler.resume()
        except Exception as exc:  # noqa: BLE001 -- try again at the next poll
            log.error("could not start scheduling: %s", one_line(exc))
            self._step_down("scheduling could not start")
            lease.release()
            return
        self._log_jobs(synced, self._scheduled)

    def _step_down(self, why: str) -> None:
        """Stop scheduling now: no new runs; running statements cancelled on their servers, and the runs
        they belong to recorded ``interrupted`` (never delivered)."""
        set_leadership(None, 0)
        scheduler, self.scheduler = self.scheduler, None
        if scheduler is not None:
            try:
                scheduler.shutdown(wait=False)
            except Exception as exc:  # noqa: BLE001
                log.debug("scheduler shutdown: %s", one_line(exc))
        cancelled = cancelling.cancel_running()
        running = running_audits()
        log.warning("instance %s stopped leading (%s)%s", self.lease.instance, why,
                    f": cancelled {cancelled} running statement(s) of {', '.join(running)}" if running else "")

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

    def _log_jobs(self, synced: SyncResult, scheduled: list[str]) -> None:
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
        log.info("scheduling: jobs in table %s, outbox every %gs", JOBS_TABLE, settings.scheduler.outbox_interval_s)

    def _wait(self) -> str:
        deadline = time.monotonic() + self.duration if self.duration else None
        next_poll = 0.0
        while True:
            if time.monotonic() >= next_poll:
                next_poll = time.monotonic() + self.lease.poll_s
                self._poll_lease()
            elif self.scheduler is not None and not self.lease.leading:
                self._step_down("the lease ran out before it could be renewed")
            if self.signals:
                self._stopped_by_signal = True
                return f"{signal.Signals(self.signals[0]).name} received"
            if self.stop_event.is_set():
                return "stop requested"
            if deadline is not None and time.monotonic() >= deadline:
                return f"--for {self.duration:g}s elapsed"
            timeout = self.poll_s if deadline is None else max(0.0, min(self.poll_s, deadline - time.monotonic()))
            self.stop_event.wait(timeout)

    def _shutdown(self, store: Any, reason: str) -> int:
        scheduler, self.scheduler = self.scheduler, None
        set_leadership(None, 0)
        try:  # before the release: `status` never takes this stop for a crash
            self.lease.record_stop(reason, self.lease.token)
        except Exception as exc:  # noqa: BLE001 -- for `status` only
            log.debug("recording the stop: %s", one_line(exc))
        try:  # a standby takes over at its next poll; the runs started here finish under their claimed ticks
            self.lease.release()
            self.lease.leave()
        except Exception as exc:  # noqa: BLE001 -- the lease then expires by itself
            log.warning("could not release the lease: %s", one_line(exc))
        if scheduler is None:
            log.info("stopping (%s): was standing by; stopped cleanly", reason)
            self._stopped("clean")
            return 0
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
                cancelled = cancelling.cancel_running()   # on the server, not left to statement_timeout
                ids = store.mark_running_interrupted(owner_pid=os.getpid())
                log.warning("stopped without waiting (%s): %d run(s) recorded as interrupted%s; %d running "
                            "statement(s) cancelled on the server", why, len(ids), f": {', '.join(ids)}" if ids else "",
                            cancelled)
                self._stopped("forced")
                return FORCED_EXIT
        log.info("stopped cleanly")
        self._stopped("clean")
        return 0

    def _stopped(self, outcome: str) -> None:
        try:
            self.lease.stopped(outcome)
        except Exception as exc:  # noqa: BLE001 -- for `status` only
            log.debug("recording the stop: %s", one_line(exc))


def serve(settings: Settings, *, duration: float | None = None, grace: float = DEFAULT_GRACE_S) -> int:
    """Run the daemon (see :class:`Daemon`); returns its exit code."""
    return Daemon(settings, duration=duration, grace=grace).run()

