"""What each alert destination was last told, for ``remind_after`` (table ``wd_alerts``).

A row per (audit, destination, check) announced as a problem: its status then and when. A delivery that is sent
records the problems it announced and drops the ones it announced resolved, in one transaction; every process
sharing the history database (several ``serve`` instances, a ``watchdog run`` beside them) reads the same rows.
"""

from __future__ import annotations

import hashlib

import sqlalchemy as sa

from watchdog.history.schema import alerts
from watchdog.history.store import HistoryStore, now_iso


def announced(store: HistoryStore, audit: str, destination: str) -> dict[str, tuple[str, str]]:
    """``{check: (status, announced_at)}`` of the problems last announced to ``destination``."""
    def read() -> dict[str, tuple[str, str]]:
        with store.engine.connect() as conn:
            rows = conn.execute(sa.select(alerts.c.name, alerts.c.status, alerts.c.announced_at)
                                .where(alerts.c.audit == audit, alerts.c.destination == destination)).all()
        return {row.name: (row.status, row.announced_at) for row in rows}

    return store.call(read)


def remember(store: HistoryStore, audit: str, destination: str, run_id: str, *, statuses: dict[str, str],
             drop: list[str]) -> None:
    """After a sent delivery: ``statuses`` were announced now (``{check: status}``), ``drop`` need no more
    reminding (announced resolved, or no longer followed)."""
    names = sorted(set(statuses) | set(drop))
    if not names:
        return
    at = now_iso()

    def write() -> None:
        for attempt in (1, 2):  # two processes writing the same rows at once: the loser tries once more
            try:
                with store.engine.begin() as conn:
                    conn.execute(alerts.delete().where(alerts.c.audit == audit, alerts.c.destination == destination,
                                                       alerts.c.name.in_(names)))
                    if statuses:
                        conn.execute(alerts.insert(), [
                            {"key": alert_key(audit, destination, name), "audit": audit,
                             "destination": destination, "name": name, "status": status,
                             "announced_at": at, "run_id": run_id} for name, status in sorted(statuses.items())])
                return
            except sa.exc.IntegrityError:
                if attempt == 2:
                    raise

    store.call(write)


def alert_key(audit: str, destination: str, name: str) -> str:
    """The row's key: one fixed-length value for the three texts (NUL cannot occur in any of them)."""
    return hashlib.sha256("\0".join((audit, destination, name)).encode()).hexdigest()
