"""Who schedules: one leader among the ``watchdog serve`` instances that share a history database.

* **A lease row with fencing.** ``wd_leases`` holds one row per lease (``scheduler``): its holder, an
  expiry on the *database's* clock (so hosts' clocks may differ) and a fencing token that grows by one
  at every change of holder. Taking an expired lease is a compare-and-set on the token, so two
  standbys racing for it cannot both win. The leader renews every ``lease_s / 3``; a standby polls as
  often, so it takes over at most ``lease_s + lease_s / 3`` after the leader died (kill -9, host lost)
  or lost its connection. A leader that cannot renew before its lease runs out stops leading by
  itself (its own clock, counted from the last renewal it *sent*), so it never acts on a lease another
  instance may already hold.
* **Every tick once.** Each scheduled run claims ``(audit, scheduled time)`` in ``wd_ticks`` with its
  token (:meth:`~watchdog.history.HistoryStore.start_run`): whatever happens to leadership, a tick is
  run (and delivered) at most once.
* **SQLite** history lives on one host: a second ``serve`` on it is refused by an exclusive file
  lock beside the database (:func:`lock_sqlite_history`); the lease row is kept too, for ``status``.
"""

from __future__ import annotations

import os
import secrets
import socket
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, Any

import sqlalchemy as sa

from watchdog.errors import WatchdogError
from watchdog.history.schema import leases, members, stops
from watchdog.history.store import HistoryStore

LEASE = "scheduler"


def new_instance_id() -> str:
    return f"{socket.gethostname()}:{os.getpid()}:{secrets.token_hex(3)}"


def db_now(conn: sa.Connection) -> float:
    """Epoch seconds on the database server's clock (SQLite: this host's)."""
    name = conn.dialect.name
    if name == "postgresql":
        return float(conn.exec_driver_sql("SELECT EXTRACT(EPOCH FROM clock_timestamp())").scalar_one())
    if name in ("mysql", "mariadb"):
        return float(conn.exec_driver_sql("SELECT UNIX_TIMESTAMP(NOW(6))").scalar_one())
    return time.time()


@dataclass
class LeaseState:
    holder: str | None
    host: str | None
    pid: int | None
    token: int
    expires_in: float | None            # seconds left on the lease (negative: expired)
    renewed_ago: float | None


@dataclass
class Member:
    id: str
    host: str | None
    pid: int | None
    role: str
    seen_ago: float


@dataclass
class LeaderLease:
    """This instance's side of the lease. ``acquire_or_renew`` once per ``poll_s``; ``leading`` says
    whether it may schedule now (false as soon as its own lease may have run out)."""

    store: HistoryStore
    lease_s: float
    instance: str = field(default_factory=new_instance_id)
    token: int = 0
    _valid_until: float = 0.0           # monotonic: the lease is surely ours until then

    @property
    def poll_s(self) -> float:
        return self.lease_s / 3

    @property
    def leading(self) -> bool:
        return self.token > 0 and time.monotonic() < self._valid_until

    def acquire_or_renew(self) -> bool:
        """Renew the lease if held, else take it if free or expired; returns whether this instance leads.
        A database error leaves the state as it was (``leading`` still expires on time)."""
        sent = time.monotonic()
        ok = self.store.call(self._renew if self.token else self._acquire)
        if ok:
            self._valid_until = sent + self.lease_s
        else:
            self.token = 0
            self._valid_until = 0.0
        return ok

    def _acquire(self) -> bool:
        def values(now: float) -> dict[str, Any]:
            return {"holder": self.instance, "host": socket.gethostname(), "pid": os.getpid(),
                    "acquired_at": now, "renewed_at": now, "expires_at": now + self.lease_s}

        with self.store.engine.begin() as conn:
            now = db_now(conn)
            row = conn.execute(sa.select(leases).where(leases.c.name == LEASE)).first()
            if row is not None:
                if row.expires_at > now and row.holder != self.instance:
                    return False
                taken = conn.execute(leases.update().where(leases.c.name == LEASE, leases.c.token == row.token)
                                     .values(token=row.token + 1, **values(now)))
                if taken.rowcount != 1:
                    return False
                self.token = int(row.token) + 1
                return True
        try:
            with self.store.engine.begin() as conn:
                conn.execute(leases.insert().values(name=LEASE, token=1, **values(db_now(conn))))
        except sa.exc.IntegrityError:
            return False
        self.token = 1
        return True

    def _renew(self) -> bool:
        with self.store.engine.begin() as conn:
            now = db_now(conn)
            renewed = conn.execute(leases.update().where(leases.c.name == LEASE, leases.c.holder == self.instance,
                                                         leases.c.token == self.token)
                                   .values(renewed_at=now, expires_at=now + self.lease_s))
            return renewed.rowcount == 1

    def release(self) -> None:
        """Give the lease up (a clean stop): a standby takes over at its next poll."""
        if not self.token:
            return
        token, self.token, self._valid_until = self.token, 0, 0.0

        def expire() -> None:
            with self.store.engine.begin() as conn:
                conn.execute(leases.update().where(leases.c.name == LEASE, leases.c.holder == self.instance,
                                                   leases.c.token == token).values(expires_at=db_now(conn) - 1))

        self.store.call(expire)

    def heartbeat(self, *, started_at: float | None = None) -> None:
        """Record this instance in ``wd_members`` (its role and when it was last seen)."""
        role = "leader" if self.leading else "standby"

        def beat() -> None:
            with self.store.engine.begin() as conn:
                now = db_now(conn)
                done = conn.execute(members.update().where(members.c.id == self.instance)
                                    .values(role=role, seen_at=now))
                if done.rowcount == 0:
                    conn.execute(members.insert().values(id=self.instance, host=socket.gethostname(),
                                                         pid=os.getpid(), role=role, started_at=started_at or now,
                                                         seen_at=now))

        self.store.call(beat)

    def record_stop(self, reason: str, token: int) -> None:
        """Record that this instance stops by itself (``reason``; ``token``: the lease it gave up, 0 when
        standing by), so ``status`` tells a stop from a crash; :meth:`stopped` then says how it ended."""
        def record() -> None:
            with self.store.engine.begin() as conn:
                conn.execute(stops.delete().where(stops.c.instance == self.instance))
                conn.execute(stops.insert().values(instance=self.instance, host=socket.gethostname(), pid=os.getpid(),
                                                   token=token, stopped_at=db_now(conn), reason=reason[:200],
                                                   outcome="stopping"))

        self.store.call(record)

    def stopped(self, outcome: str) -> None:
        """How the stop ended: ``clean`` (running audits finished) or ``forced`` (they were abandoned)."""
        def record() -> None:
            with self.store.engine.begin() as conn:
                conn.execute(stops.update().where(stops.c.instance == self.instance).values(outcome=outcome))

        self.store.call(record)

    def leave(self) -> None:
        def gone() -> None:
            with self.store.engine.begin() as conn:
                conn.execute(members.delete().where(members.c.id == self.instance))

        self.store.call(gone)


def lease_state(store: HistoryStore) -> LeaseState | None:
    def read() -> LeaseState | None:
        with store.engine.connect() as conn:
            now = db_now(conn)
            row = conn.execute(sa.select(leases).where(leases.c.name == LEASE)).first()
        if row is None:
            return None
        return LeaseState(row.holder, row.host, row.pid, int(row.token), row.expires_at - now,
                          now - row.renewed_at if row.renewed_at is not None else None)

    return store.call(read)


@dataclass
class Stop:
    instance: str
    token: int
    stopped_ago: float      # seconds since it stopped (the database's clock)
    stopped_at: float       # epoch seconds
    reason: str | None
    outcome: str | None     # stopping | clean | forced


def last_stop(store: HistoryStore, instance: str) -> Stop | None:
    """How ``instance`` stopped, if it stopped by itself (None: it never did, e.g. it crashed)."""
    def read() -> Stop | None:
        with store.engine.connect() as conn:
            now = db_now(conn)
            row = conn.execute(sa.select(stops).where(stops.c.instance == instance)).first()
        if row is None:
            return None
        return Stop(row.instance, int(row.token or 0), now - row.stopped_at, row.stopped_at, row.reason, row.outcome)

    return store.call(read)


def live_members(store: HistoryStore, within_s: float) -> list[Member]:
    """Instances seen in the last ``within_s`` seconds, leader first."""
    def read() -> list[Member]:
        with store.engine.connect() as conn:
            now = db_now(conn)
            rows = conn.execute(sa.select(members).where(members.c.seen_at >= now - within_s)
                                .order_by(members.c.role, members.c.started_at)).all()
        return [Member(r.id, r.host, r.pid, r.role, now - r.seen_at) for r in rows]

    return store.call(read)


def sqlite_path(store: HistoryStore) -> Path | None:
    database = store.engine.url.database
    if not store.is_sqlite or not database or database == ":memory:" or database.startswith("file:"):
        return None
    return Path(database).expanduser().resolve()


def lock_sqlite_history(store: HistoryStore) -> IO[str] | None:
    """An exclusive lock on ``<history>.serve.lock`` (kept while the returned file stays open), or a
    one-line :class:`WatchdogError` naming the process that serves this history already.
    None when the history is not a SQLite file (the lease does the work there)."""
    import fcntl

    path = sqlite_path(store)
    if path is None:
        return None
    lock_path = path.with_name(path.name + ".serve.lock")
    handle = open(lock_path, "a+", encoding="utf-8")  # noqa: SIM115 -- held for the daemon's life
    try:
        fcntl.flock(handle.fileno(), fcntl.LOCK_EX | fcntl.LOCK_NB)
    except OSError:
        handle.seek(0)
        holder = handle.read().strip() or "another process"
        handle.close()
        raise WatchdogError(f"another `watchdog serve` ({holder}) already serves the SQLite history {path}; "
                            "a SQLite history allows one serve per host: stop it, or share a PostgreSQL "
                            "history (history.url) to run several") from None
    handle.seek(0)
    handle.truncate()
    handle.write(f"pid {os.getpid()} on {socket.gethostname()}")
    handle.flush()
    return handle


def describe(state: LeaseState | None) -> dict[str, Any]:
    if state is None:
        return {"leader": None}
    alive = state.expires_in is not None and state.expires_in > 0
    return {"leader": state.holder if alive else None, "last_holder": state.holder, "host": state.host,
            "pid": state.pid, "token": state.token, "lease_expires_in_s": round(state.expires_in or 0, 1),
            "renewed_s_ago": round(state.renewed_ago, 1) if state.renewed_ago is not None else None}
