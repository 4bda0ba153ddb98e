"""PostgreSQL through psycopg directly: the part of a SQLAlchemy engine the sessions use, without it.

Importing SQLAlchemy and building an engine costs a scan more than its aggregate pass on a mid-sized
table. The PostgreSQL session needs only a raw driver connection it can reuse, drop when broken and
close: :class:`DirectEngine` keeps one idle connection (a second concurrent caller gets its own).
URLs that name another driver (``postgresql+psycopg2://``) or that psycopg cannot read keep the
SQLAlchemy engine (:func:`psycopg_conninfo` returns None for them).
"""

from __future__ import annotations

import contextlib
import threading
import time
from types import SimpleNamespace
from typing import Any
from urllib.parse import urlsplit


def psycopg_conninfo(url: str) -> str | None:
    """``postgresql[+psycopg]://...`` as the libpq URI psycopg takes, else None."""
    scheme, sep, rest = url.partition("://")
    if not sep or scheme.lower() not in ("postgresql", "postgresql+psycopg"):
        return None
    conninfo = f"postgresql://{rest}"
    try:
        parts = urlsplit(conninfo)
        parts.port  # noqa: B018 - raises ValueError on a malformed port
    except ValueError:
        return None
    return conninfo


class DirectEngine:
    """One reusable psycopg connection, shaped like the SQLAlchemy engine API the sessions call."""

    def __init__(self, conninfo: str, connect_args: dict[str, Any]):
        import psycopg

        self._psycopg = psycopg
        self._conninfo = conninfo
        self._connect_args = connect_args
        self._idle: Any = None
        self._idle_since = 0.0
        self._lock = threading.Lock()
        self.dialect = SimpleNamespace(loaded_dbapi=SimpleNamespace(Error=psycopg.Error), is_mariadb=False)

    def connect(self) -> DirectConnection:
        with self._lock:
            raw, self._idle = self._idle, None
        if raw is not None and time.monotonic() - self._idle_since > PING_AFTER_S and not _alive(raw):
            raw.close()  # idle long enough for the server (or a proxy) to have dropped it: SQLAlchemy's pre-ping
        if raw is None or raw.closed or raw.broken:
            raw = self._psycopg.connect(self._conninfo, **self._connect_args)
        return DirectConnection(self, raw)

    def _release(self, raw: Any) -> None:
        with self._lock:
            if self._idle is None and not raw.closed:
                self._idle, raw = raw, None
                self._idle_since = time.monotonic()
        if raw is not None:
            raw.close()

    def dispose(self) -> None:
        with self._lock:
            raw, self._idle = self._idle, None
        if raw is not None:
            raw.close()


#: a connection idle for longer than this is pinged before it is used again
PING_AFTER_S = 10.0


def _alive(raw: Any) -> bool:
    """A round trip outside any transaction (autocommit), so the session's next BEGIN is the first."""
    try:
        raw.autocommit = True
        try:
            raw.execute("SELECT 1")
        finally:
            raw.autocommit = False
        return True
    except Exception:  # noqa: BLE001 - any failure means: open a new one
        return False


class DirectConnection:
    """A checked-out connection: ``close()`` gives it back, ``invalidate()`` first makes it unusable."""

    def __init__(self, engine: DirectEngine, raw: Any):
        self._engine = engine
        self._raw = raw
        self._valid = True
        self.connection = SimpleNamespace(dbapi_connection=raw)

    def invalidate(self) -> None:
        self._valid = False
        with contextlib.suppress(Exception):  # already gone
            self._raw.close()

    def close(self) -> None:
        if self._valid:
            self._engine._release(self._raw)
