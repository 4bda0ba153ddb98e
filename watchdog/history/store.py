"""The history store: runs, their findings and their deliveries (the outbox), in any SQLAlchemy database.

SQLite by default (``history.url``), a PostgreSQL URL works too. Tables are created on first use.
Run statuses: running, passed, warned, failed, error, interrupted, awaiting_review.
Delivery statuses: sent, pending (in the outbox, to retry), skipped (policy), rejected (review).
"""

from __future__ import annotations

import json
import os
import socket
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import sqlalchemy as sa

from watchdog.redact import redact

metadata = sa.MetaData()

runs = sa.Table(
    "wd_runs", metadata,
    sa.Column("id", sa.String(64), primary_key=True),
    sa.Column("audit", sa.String(200), nullable=False, index=True),
    sa.Column("status", sa.String(32), nullable=False),
    sa.Column("started_at", sa.String(40), nullable=False),
    sa.Column("finished_at", sa.String(40)),
    sa.Column("summary", sa.Text),           # JSON {checks, passed, warned, failed, errors}
    sa.Column("out_dir", sa.Text),
    sa.Column("verification", sa.Text),      # JSON: LLM report outcome / verify result, if any
    sa.Column("trends", sa.Text),            # JSON {finding name: new|resolved|worse|better|unchanged}
    sa.Column("review", sa.Text),            # JSON {decision, reason, at}
    sa.Column("error", sa.Text),
    sa.Column("host", sa.String(255)),       # who runs it: a serve start-up only marks runs whose
    sa.Column("pid", sa.Integer),            # process is gone as interrupted
)

run_findings = sa.Table(
    "wd_run_findings", metadata,
    sa.Column("run_id", sa.String(64), sa.ForeignKey("wd_runs.id"), primary_key=True),
    sa.Column("name", sa.String(400), primary_key=True),
    sa.Column("status", sa.String(16), nullable=False),
    sa.Column("failing", sa.BigInteger),
    sa.Column("total", sa.BigInteger),
    sa.Column("rate", sa.Float),
    sa.Column("observed", sa.Float),
    sa.Column("finding", sa.Text),           # the whole finding, JSON
)

deliveries = sa.Table(
    "wd_deliveries", metadata,
    sa.Column("run_id", sa.String(64), sa.ForeignKey("wd_runs.id"), primary_key=True),
    sa.Column("channel", sa.String(32), primary_key=True),
    sa.Column("target", sa.String(400), primary_key=True),  # a recipient, a folder, a URL
    sa.Column("status", sa.String(16), nullable=False),
    sa.Column("attempts", sa.Integer, nullable=False, default=0),
    sa.Column("last_error", sa.Text),
    sa.Column("updated_at", sa.String(40)),
    sa.Column("spec", sa.Text),              # JSON: the channel's configuration, to retry from the outbox
)


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


STALE_CLAIM_S = 900


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
    def __init__(self, url: str):
        self.url = url
        parsed = sa.engine.make_url(url)
        if parsed.get_backend_name() == "sqlite" and parsed.database and parsed.database != ":memory:":
            Path(parsed.database).expanduser().parent.mkdir(parents=True, exist_ok=True)
        self.engine = sa.create_engine(url, pool_pre_ping=True)
        if self.engine.dialect.name == "sqlite":
            @sa.event.listens_for(self.engine, "connect")
            def _wal(dbapi_conn: Any, _record: Any) -> None:  # readers never block the writer
                dbapi_conn.execute("PRAGMA journal_mode=WAL")
                dbapi_conn.execute("PRAGMA busy_timeout=10000")
        self._create_tables()

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
    def start_run(self, run_id: str, audit: str, started_at: str | None = None, out_dir: str | None = None) -> None:
        with self.engine.begin() as conn:
            conn.execute(runs.insert().values(id=run_id, audit=audit, status="running",
                                              started_at=started_at or now_iso(), out_dir=out_dir,
                                              host=socket.gethostname(), pid=os.getpid()))

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

    def set_status(self, run_id: str, status: str, *, review: dict[str, Any] | None = None) -> None:
        values: dict[str, Any] = {"status": status}
        if review is not None:
            values["review"] = _dump(review)
        with self.engine.begin() as conn:
            conn.execute(runs.update().where(runs.c.id == run_id).values(**values))

    def mark_running_interrupted(self, audit: str | None = None, *, owner_pid: int | None = None) -> list[str]:
        """Runs left ``running`` become ``interrupted``; returns the ids marked.

        By default only runs whose process is gone (a crash, a kill): a run whose process still lives on
        this host (a ``watchdog run`` beside the daemon) is left alone. With ``owner_pid``, exactly the
        runs of that process on this host (a daemon abandoning its own runs).
        """
        query = sa.select(runs.c.id, runs.c.host, runs.c.pid).where(runs.c.status == "running")
        if audit:
            query = query.where(runs.c.audit == audit)
        here = socket.gethostname()

        def marked(row: Any) -> bool:
            if owner_pid is not None:
                return row.host == here and row.pid == owner_pid
            return not (row.host == here and row.pid and _alive(row.pid))

        with self.engine.begin() as conn:
            ids = [row.id for row in conn.execute(query) if marked(row)]
            if ids:
                conn.execute(runs.update().where(runs.c.id.in_(ids)).values(status="interrupted",
                                                                             finished_at=now_iso()))
        return ids

    def get_run(self, run_id: str) -> RunRecord | None:
        with self.engine.connect() as conn:
            row = conn.execute(sa.select(runs).where(runs.c.id == run_id)).first()
            return self._record(conn, row) if row else None

    def list_runs(self, audit: str | None = None, limit: int = 50, status: str | None = None) -> list[RunRecord]:
        query = sa.select(runs).order_by(runs.c.started_at.desc(), runs.c.id.desc()).limit(limit)
        if audit:
            query = query.where(runs.c.audit == audit)
        if status:
            query = query.where(runs.c.status == status)
        with self.engine.connect() as conn:
            return [self._record(conn, row) for row in conn.execute(query).all()]

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
        with self.engine.connect() as conn:
            rows = conn.execute(sa.select(run_findings.c.finding).where(run_findings.c.run_id == run_id)).all()
        return [_load(r.finding) for r in rows]

    # ---- deliveries / outbox
    def delivery(self, run_id: str, channel: str, target: str) -> DeliveryRecord | None:
        with self.engine.connect() as conn:
            row = conn.execute(sa.select(deliveries).where(
                deliveries.c.run_id == run_id, deliveries.c.channel == channel, deliveries.c.target == target)).first()
        return self._delivery(row) if row else None

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

    def claim_delivery(self, run_id: str, channel: str, target: str, spec: dict[str, Any]) -> int | None:
        """Claim a delivery for sending (status ``sending``), so two processes never send it both.

        Returns the attempts made so far when claimed; None when it was already sent, or another process
        is sending it right now. A claim older than :data:`STALE_CLAIM_S` (its process died) can be taken.
        """
        stale = _iso_ago(STALE_CLAIM_S)
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

    def outbox(self) -> list[DeliveryRecord]:
        """Deliveries waiting to be retried (and claims abandoned by a dead process), oldest first."""
        query = (sa.select(deliveries)
                 .where(sa.or_(deliveries.c.status == "pending",
                               sa.and_(deliveries.c.status == "sending",
                                       deliveries.c.updated_at < _iso_ago(STALE_CLAIM_S))))
                 .order_by(deliveries.c.updated_at))
        with self.engine.connect() as conn:
            return [self._delivery(row) for row in conn.execute(query).all()]

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
