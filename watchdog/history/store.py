"""The history store: runs, their findings and their deliveries (the outbox), in any SQLAlchemy database.

SQLite by default (``history.url``), a PostgreSQL URL works too. Tables are created on first use.
A locked or unreachable history database is waited for (``wait_s``, tenacity, with backoff), then
reported in one line (:class:`~watchdog.errors.HistoryUnavailable`), never as a driver traceback.
Run statuses: running, passed, warned, failed, error, interrupted, awaiting_review.
Delivery statuses: sent, pending (in the outbox, to retry), skipped (policy), rejected (review).
"""

from __future__ import annotations

import json
import os
import socket
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any, TypeVar

import sqlalchemy as sa
from tenacity import Retrying, retry_if_exception, stop_after_delay, wait_random_exponential

from watchdog.errors import HistoryUnavailable, TickTaken
from watchdog.history.schema import deliveries, leases, metadata, run_findings, runs, ticks
from watchdog.history.waiting import first_line, transient, waits
from watchdog.redact import redact, redact_url, register_url_secrets
from watchdog.urls import driver_url

T = TypeVar("T")
#: how long one attempt waits on a lock before tenacity retries (SQLite busy_timeout, PostgreSQL lock_timeout)
LOCK_WAIT_MS = 2000

def _alive(pid: int) -> bool:
    if pid == os.getpid():
        return True
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


#: default lease of a ``sending`` claim (``scheduler.delivery_lease_s``): past it, a retry may take the claim
STALE_CLAIM_S = 120.0


def _iso_ago(seconds: float) -> str:
    return (datetime.now(UTC) - timedelta(seconds=seconds)).isoformat(timespec="microseconds").replace(
        "+00:00", "Z")


def now_iso() -> str:
    """UTC now, ISO 8601 with microseconds, so runs started in the same second still sort in order."""
    return datetime.now(UTC).isoformat(timespec="microseconds").replace("+00:00", "Z")


@dataclass
class DeliveryRecord:
    run_id: str
    channel: str
    target: str
    status: str
    attempts: int = 0
    last_error: str | None = None
    updated_at: str | None = None
    spec: dict[str, Any] = field(default_factory=dict)


@dataclass
class RunRecord:
    id: str
    audit: str
    status: str
    started_at: str
    finished_at: str | None = None
    summary: dict[str, int] | None = None
    out_dir: str | None = None
    verification: dict[str, Any] | None = None
    trends: dict[str, str] | None = None
    review: dict[str, Any] | None = None
    error: str | None = None
    deliveries: list[DeliveryRecord] = field(default_factory=list)

    def to_json_dict(self) -> dict[str, Any]:
        return {
            "id": self.id, "audit": self.audit, "status": self.status, "started_at": self.started_at,
            "finished_at": self.finished_at, "summary": self.summary, "out_dir": self.out_dir,
            "error": self.error, "review": self.review,
            "deliveries": [{"channel": d.channel, "target": d.target, "status": d.status, "attempts": d.attempts,
                            "last_error": d.last_error} for d in self.deliveries],
        }


def _dump(value: Any) -> str | None:
    return None if value is None else json.dumps(value, ensure_ascii=False, default=str)


def _load(value: str | None) -> Any:
    return None if value is None else json.loads(value)


class HistoryStore:
    """The history database. ``wait_s``: how long a locked or unreachable database is waited for."""

    def __init__(self, url: str, *, wait_s: float = 60.0):
        register_url_secrets(url)
        url = driver_url(url)  # the password percent-encoded, postgres:// read as postgresql://
        self.url = url
        self.wait_s = wait_s
        parsed = sa.engine.make_url(url)
        connect_args: dict[str, Any] = {}
        if parsed.get_backend_name() == "sqlite" and parsed.database and parsed.database != ":memory:":
            Path(parsed.database).expanduser().parent.mkdir(parents=True, exist_ok=True)
        elif parsed.get_backend_name() == "postgresql":
            connect_args = {"connect_timeout": 5, "options": f"-c lock_timeout={LOCK_WAIT_MS}"}
        elif parsed.get_backend_name() == "mysql":
            connect_args = {"connect_timeout": 5, "init_command": "SET SESSION innodb_lock_wait_timeout = 2"}
        self.engine = sa.create_engine(url, pool_pre_ping=True, connect_args=connect_args)
        if self.engine.dialect.name == "sqlite":
            @sa.event.listens_for(self.engine, "connect")
            def _wal(dbapi_conn: Any, _record: Any) -> None:  # readers never block the writer
                dbapi_conn.execute(f"PRAGMA busy_timeout={LOCK_WAIT_MS}")
                dbapi_conn.execute("PRAGMA journal_mode=WAL")
        self.call(self._create_tables)

    @property
    def is_sqlite(self) -> bool:
        return self.engine.dialect.name == "sqlite"

    def call(self, func: Callable[..., T], *args: Any, **kwargs: Any) -> T:
        """``func(*args, **kwargs)``, retried with backoff while the database is locked or unreachable,
        for up to ``wait_s``; then one line: :class:`HistoryUnavailable`."""
        started = time.monotonic()
        retrying = Retrying(stop=stop_after_delay(self.wait_s), reraise=True,
                            wait=wait_random_exponential(multiplier=0.25, max=2.0),
                            retry=retry_if_exception(transient))
        try:
            return retrying(func, *args, **kwargs)
        except (sa.exc.OperationalError, sa.exc.InterfaceError, sa.exc.DBAPIError) as exc:
            if not transient(exc):
                raise
            waited = time.monotonic() - started
            raise HistoryUnavailable(f"the history database {redact_url(self.url)} stayed unavailable "
                                     f"(waited {waited:.0f}s, history.wait_s {self.wait_s:g}): "
                                     f"{first_line(exc)}") from None

    def _create_tables(self) -> None:
        """Create the tables if missing; tolerate another process creating them at the same moment."""
        for attempt in range(3):
            try:
                metadata.create_all(self.engine, checkfirst=True)
                return
            except (sa.exc.OperationalError, sa.exc.ProgrammingError, sa.exc.IntegrityError) as exc:
                if "already exists" not in str(exc) or attempt == 2:
                    raise

    def close(self) -> None:
        self.engine.dispose()

    # ---- runs
    @waits
    def start_run(self, run_id: str, audit: str, started_at: str | None = None, out_dir: str | None = None, *,
                  tick: str | None = None, claimed_by: str | None = None, token: int | None = None) -> None:
        """Record the run ``running``. With ``tick`` (the scheduled time, UTC ISO), claim that tick of the
        audit in the same transaction: raises :class:`TickTaken` when another run holds it already."""
        try:
            with self.engine.begin() as conn:
                if token is not None:  # fencing: a leader that lost its lease claims nothing more
                    current = conn.execute(sa.select(leases.c.token).where(leases.c.name == "scheduler")).scalar()
                    if current is not None and int(current) != token:
                        raise TickTaken(f"audit {audit}: the run due at {tick} was not started: this instance "
                                        f"no longer leads (lease token {token}, now {current})")
                if tick is not None:
                    conn.execute(ticks.insert().values(audit=audit, scheduled_at=tick, run_id=run_id,
                                                       claimed_by=claimed_by, token=token, claimed_at=now_iso()))
                conn.execute(runs.insert().values(id=run_id, audit=audit, status="running",
                                                  started_at=started_at or now_iso(), out_dir=out_dir,
                                                  host=socket.gethostname(), pid=os.getpid()))
        except sa.exc.IntegrityError:
            with self.engine.connect() as conn:  # a retry after a commit whose answer was lost: ours already
                mine = conn.execute(sa.select(runs.c.id).where(runs.c.id == run_id)).first()
                holder = (conn.execute(sa.select(ticks.c.run_id).where(ticks.c.audit == audit,
                                                                       ticks.c.scheduled_at == tick)).scalar()
                          if tick is not None else None)
            if mine is not None and (tick is None or holder == run_id):
                return
            if tick is not None and holder is not None:
                raise TickTaken(f"audit {audit}: the run due at {tick} was already claimed by run {holder}") from None
            raise

    @waits
    def tick_claim(self, audit: str, tick: str) -> str | None:
        """The run that claimed this tick of ``audit`` (None: unclaimed)."""
        with self.engine.connect() as conn:
            return conn.execute(sa.select(ticks.c.run_id).where(ticks.c.audit == audit,
                                                                ticks.c.scheduled_at == tick)).scalar()

    @waits
    def mark_orphans_interrupted(self, token: int) -> list[str]:
        """A new leader's clean-up: runs still ``running`` for a tick claimed under an older lease
        (its leader died or lost the lease) become ``interrupted``; returns their ids."""
        query = (sa.select(runs.c.id).join(ticks, ticks.c.run_id == runs.c.id)
                 .where(runs.c.status == "running", ticks.c.token < token))
        with self.engine.begin() as conn:
            ids = [row.id for row in conn.execute(query)]
            if ids:
                conn.execute(runs.update().where(runs.c.id.in_(ids), runs.c.status == "running")
                             .values(status="interrupted", finished_at=now_iso(),
                                     error="its daemon stopped leading (died or lost the lease) during the run"))
        return ids

    @waits
    def finish_run(self, run_id: str, *, status: str, summary: dict[str, int] | None = None,
                   findings: list[dict[str, Any]] | None = None, out_dir: str | None = None,
                   verification: dict[str, Any] | None = None, trends: dict[str, str] | None = None,
                   error: str | None = None, finished: bool = True) -> None:
        values: dict[str, Any] = {"status": status}
        if finished:
            values["finished_at"] = now_iso()
        for key, value in (("summary", summary), ("verification", verification), ("trends", trends)):
            if value is not None:
                values[key] = _dump(value)
        if out_dir is not None:
            values["out_dir"] = out_dir
        if error is not None:
            values["error"] = redact(error)
        with self.engine.begin() as conn:
            conn.execute(runs.update().where(runs.c.id == run_id).values(**values))
            if findings is not None:
                conn.execute(run_findings.delete().where(run_findings.c.run_id == run_id))
                if findings:
                    conn.execute(run_findings.insert(), [
                        {"run_id": run_id, "name": f["name"], "status": f["status"], "failing": f.get("failing"),
                         "total": f.get("total"), "rate": f.get("rate"),
                         "observed": f.get("observed"), "finding": _dump(f)} for f in findings])

    @waits
    def set_status(self, run_id: str, status: str, *, review: dict[str, Any] | None = None) -> None:
        values: dict[str, Any] = {"status": status}
        if review is not None:
            values["review"] = _dump(review)
        with self.engine.begin() as conn:
            conn.execute(runs.update().where(runs.c.id == run_id).values(**values))

    @waits
    def mark_running_interrupted(self, audit: str | None = None, *, owner_pid: int | None = None) -> list[str]:
        """Runs left ``running`` become ``interrupted``; returns the ids marked.

        By default the runs of this host whose process is gone (a crash, a kill): a run whose process
        still lives (a ``watchdog run`` beside the daemon), or that runs on another host, is left alone
        (a daemon's runs on another host are cleaned up by :meth:`mark_orphans_interrupted` when a new
        leader takes over). With ``owner_pid``, exactly the runs of that process on this host (a daemon
        abandoning its own runs).
        """
        query = sa.select(runs.c.id, runs.c.host, runs.c.pid).where(runs.c.status == "running")
        if audit:
            query = query.where(runs.c.audit == audit)
        here = socket.gethostname()

        def marked(row: Any) -> bool:
            if owner_pid is not None:
                return row.host == here and row.pid == owner_pid
            return row.host == here and not (row.pid and _alive(row.pid))

        with self.engine.begin() as conn:
            ids = [row.id for row in conn.execute(query) if marked(row)]
            if ids:
                conn.execute(runs.update().where(runs.c.id.in_(ids)).values(status="interrupted",
                                                                             finished_at=now_iso()))
        return ids

    @waits
    def get_run(self, run_id: str) -> RunRecord | None:
        with self.engine.connect() as conn:
            row = conn.execute(sa.select(runs).where(runs.c.id == run_id)).first()
            return self._record(conn, row) if row else None

    @waits
    def list_runs(self, audit: str | None = None, limit: int = 50, status: str | None = None) -> list[RunRecord]:
        query = sa.select(runs).order_by(runs.c.started_at.desc(), runs.c.id.desc()).limit(limit)
        if audit:
            query = query.where(runs.c.audit == audit)
        if status:
            query = query.where(runs.c.status == status)
        with self.engine.connect() as conn:
            return [self._record(conn, row) for row in conn.execute(query).all()]

    @waits
    def previous_run(self, audit: str, before_run_id: str) -> RunRecord | None:
        """The latest finished run of ``audit`` before ``before_run_id`` that has findings."""
        current = self.get_run(before_run_id)
        query = (sa.select(runs).where(runs.c.audit == audit, runs.c.id != before_run_id,
                                       runs.c.summary.is_not(None))
                 .order_by(runs.c.started_at.desc(), runs.c.id.desc()))
        if current:
            query = query.where(runs.c.started_at < current.started_at)
        with self.engine.connect() as conn:
            row = conn.execute(query.limit(1)).first()
            return self._record(conn, row) if row else None

    def findings_of(self, run_id: str) -> list[dict[str, Any]]:
        return self.findings_of_runs([run_id]).get(run_id, [])

    @waits
    def findings_of_runs(self, run_ids: list[str]) -> dict[str, list[dict[str, Any]]]:
        """Each run's findings, read in one query (the dashboard's pages show many runs)."""
        out: dict[str, list[dict[str, Any]]] = {run_id: [] for run_id in run_ids}
        if not run_ids:
            return out
        with self.engine.connect() as conn:
            rows = conn.execute(sa.select(run_findings.c.run_id, run_findings.c.finding)
                                .where(run_findings.c.run_id.in_(run_ids))).all()
        for row in rows:
            out[row.run_id].append(_load(row.finding))
        return out

    # ---- deliveries / outbox
    @waits
    def delivery(self, run_id: str, channel: str, target: str) -> DeliveryRecord | None:
        with self.engine.connect() as conn:
            row = conn.execute(sa.select(deliveries).where(
                deliveries.c.run_id == run_id, deliveries.c.channel == channel, deliveries.c.target == target)).first()
        return self._delivery(row) if row else None

    @waits
    def record_delivery(self, record: DeliveryRecord) -> None:
        values = {"status": record.status, "attempts": record.attempts,
                  "last_error": redact(record.last_error) if record.last_error else None,
                  "updated_at": now_iso(), "spec": _dump(record.spec)}
        with self.engine.begin() as conn:
            updated = conn.execute(deliveries.update().where(
                deliveries.c.run_id == record.run_id, deliveries.c.channel == record.channel,
                deliveries.c.target == record.target).values(**values))
            if updated.rowcount == 0:
                conn.execute(deliveries.insert().values(run_id=record.run_id, channel=record.channel,
                                                        target=record.target, **values))

    @waits
    def claim_delivery(self, run_id: str, channel: str, target: str, spec: dict[str, Any], *,
                       lease_s: float = STALE_CLAIM_S) -> int | None:
        """Claim a delivery for sending (status ``sending``), so two processes never send it both.

        Returns the attempts made so far when claimed; None when it was already sent, or another process
        is sending it right now. A claim older than ``lease_s`` (its process died mid-send) can be taken.
        """
        stale = _iso_ago(lease_s)
        key = (deliveries.c.run_id == run_id, deliveries.c.channel == channel, deliveries.c.target == target)
        with self.engine.begin() as conn:
            row = conn.execute(sa.select(deliveries).where(*key)).first()
            if row is None:
                try:
                    conn.execute(deliveries.insert().values(run_id=run_id, channel=channel, target=target,
                                                            status="sending", attempts=0, updated_at=now_iso(),
                                                            spec=_dump(spec)))
                except sa.exc.IntegrityError:
                    return None
                return 0
            claimable = sa.or_(deliveries.c.status.in_(("pending", "skipped")),
                               sa.and_(deliveries.c.status == "sending", deliveries.c.updated_at < stale))
            claimed = conn.execute(deliveries.update().where(*key, claimable)
                                   .values(status="sending", updated_at=now_iso()))
            return (row.attempts or 0) if claimed.rowcount == 1 else None

    @waits
    def move_delivery(self, run_id: str, channel: str, target: str, *, from_status: str, to_status: str,
                      last_error: str | None = None) -> bool:
        """Move a delivery from one status to another in one atomic update; False when it was not in
        ``from_status`` (another process moved it first)."""
        key = (deliveries.c.run_id == run_id, deliveries.c.channel == channel, deliveries.c.target == target)
        values = {"status": to_status, "updated_at": now_iso(),
                  **({"last_error": redact(last_error)} if last_error else {})}
        with self.engine.begin() as conn:
            moved = conn.execute(deliveries.update().where(*key, deliveries.c.status == from_status).values(**values))
        return moved.rowcount == 1

    @waits
    def outbox(self, lease_s: float = STALE_CLAIM_S) -> list[DeliveryRecord]:
        """Deliveries waiting to be retried (and claims abandoned by a dead process, ``posting`` ones
        included: a chat message that was in flight), oldest first."""
        query = (sa.select(deliveries)
                 .where(sa.or_(deliveries.c.status == "pending",
                               sa.and_(deliveries.c.status.in_(("sending", "posting")),
                                       deliveries.c.updated_at < _iso_ago(lease_s))))
                 .order_by(deliveries.c.updated_at))
        with self.engine.connect() as conn:
            return [self._delivery(row) for row in conn.execute(query).all()]

    @waits
    def last_delivered_run(self, audit: str, channel: str, target: str, before_run_id: str) -> str | None:
        """The newest other run of ``audit`` sent to this channel/target (for ``on: changes``)."""
        query = (sa.select(runs.c.id).join(deliveries, deliveries.c.run_id == runs.c.id)
                 .where(runs.c.audit == audit, runs.c.id != before_run_id, deliveries.c.channel == channel,
                        deliveries.c.target == target, deliveries.c.status == "sent")
                 .order_by(runs.c.started_at.desc(), runs.c.id.desc()).limit(1))
        with self.engine.connect() as conn:
            row = conn.execute(query).first()
        return row.id if row else None

    # ---- rows to records
    def _record(self, conn: sa.Connection, row: Any) -> RunRecord:
        dels = conn.execute(sa.select(deliveries).where(deliveries.c.run_id == row.id)
                            .order_by(deliveries.c.channel, deliveries.c.target)).all()
        return RunRecord(id=row.id, audit=row.audit, status=row.status, started_at=row.started_at,
                         finished_at=row.finished_at, summary=_load(row.summary), out_dir=row.out_dir,
                         verification=_load(row.verification), trends=_load(row.trends), review=_load(row.review),
                         error=row.error, deliveries=[self._delivery(d) for d in dels])

    @staticmethod
    def _delivery(row: Any) -> DeliveryRecord:
        return DeliveryRecord(run_id=row.run_id, channel=row.channel, target=row.target, status=row.status,
                              attempts=row.attempts or 0, last_error=row.last_error, updated_at=row.updated_at,
                              spec=_load(row.spec) or {})
