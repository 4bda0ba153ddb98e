"""The shared part of the server databases' read-only sessions: a connection per statement from the
engine, the deadline that cancels a statement on the server, fetching within the row and byte caps, and
driver errors translated into :mod:`watchdog.errors` (the dialect classes live in :mod:`.sessions`)."""

from __future__ import annotations

import os
import socket
import threading
import time
from typing import TYPE_CHECKING, Any

from watchdog.errors import DatabaseUnavailable, QueryError, QueryTimeout
from watchdog.redact import redact
from watchdog.sandbox import cancel as cancelling
from watchdog.sandbox.fetching import fetch_capped
from watchdog.sandbox.limits import DEADLINE_GRACE_S
from watchdog.sandbox.result import QueryResult

if TYPE_CHECKING:
    import sqlalchemy as sa
    from sqlalchemy.engine import URL

class EngineSession:
    """Shared plumbing for databases reached through a SQLAlchemy engine.

    Statements run on the pooled driver connection's own cursor with no parameters, so
    the driver never rewrites ``%`` or ``:name`` in the user's SQL.
    """

    dialect_name = "generic"
    #: rows per fetch at most (see fetch_capped)
    max_batch = 500
    #: a failed connection says how to percent-encode the password (it holds characters that cut a URL)
    encoding_hint = False

    def __init__(self, url: URL, connect_args: dict[str, Any] | None = None):
        import sqlalchemy as sa

        self.url = url
        self._engine: Any = sa.create_engine(url, pool_pre_ping=True, pool_size=2, connect_args=connect_args or {})

    def _hint(self) -> str:
        if not self.encoding_hint:
            return ""
        from watchdog.urls import ENCODE_HINT

        return (" (the password was read as everything between the first ':' and the last '@' before the host;"
                f" if that is not it, {ENCODE_HINT})")

    def _begin(self, conn: sa.Connection, raw: Any, timeout_s: float, jit: bool = True,
               ship_rows: bool = False) -> None:
        """Make the transaction read-only and time-limited (per dialect); ``jit``, ``ship_rows``: see :meth:`run`."""

    def _cursor(self, raw: Any, max_rows: int, parallel: bool = False) -> Any:
        return raw.cursor()

    def _before_batch(self, raw: Any, deadline: float, timeout_s: float) -> None:
        """Called before every fetch but the first (PostgreSQL keeps each fetch inside the deadline)."""

    def _close_cursor(self, raw: Any, cursor: Any) -> bool:
        """Close the cursor; False when the connection must not be used again (MySQL: abandoned stream)."""
        cursor.close()
        return True

    def _rollback(self, raw: Any) -> None:
        raw.rollback()

    def _reset(self, raw: Any) -> None:
        """After the rollback: drop whatever session state a statement may have left behind."""

    def _socket(self, raw: Any) -> socket.socket | None:
        """The connection's socket, to shut down when the server is late (None: cannot)."""
        return None

    def _cancel(self, raw: Any) -> None:
        """Cancel the statement running on ``raw``, on the server (see :mod:`watchdog.sandbox.cancel`)."""

    def run(self, sql: str, *, max_rows: int, max_bytes: int, timeout_s: float,
            parallel: bool = False, jit: bool = True, ship_rows: bool = False) -> QueryResult:
        """``jit``: False turns PostgreSQL's JIT compilation off for this statement; ``ship_rows``: PostgreSQL
        plans it as if handing a row from a parallel worker on cost next to nothing."""
        start = time.monotonic()
        deadline = start + timeout_s
        try:
            conn = self._engine.connect()
        except Exception as exc:  # the driver's error (SQLAlchemy wraps it as .orig), a missing driver, a bad URL
            orig = getattr(exc, "orig", None)
            if orig is not None or isinstance(exc, self._engine.dialect.loaded_dbapi.Error):
                message = self._message(orig or exc)
            else:
                message = redact(exc)
            raise DatabaseUnavailable(f"cannot connect: {message}{self._hint()}") from None
        raw: Any = conn.connection.dbapi_connection  # the driver's own connection: each session knows its API
        failure: Exception | None = None
        reusable = True
        # the server enforces the timeout, but it can be stuck where it cannot be cancelled (one huge
        # allocation or copy): at deadline + grace, shut the socket down so the driver stops waiting
        try:
            sock = self._socket(raw)
        except Exception:  # noqa: BLE001 - no socket to watch: the server's own timeout still applies
            sock = None
        late = _Deadline(sock, timeout_s + DEADLINE_GRACE_S)
        registered = cancelling.register(lambda: self._cancel(raw))
        try:
            self._begin(conn, raw, timeout_s, jit, ship_rows)
            cursor = self._cursor(raw, max_rows, parallel)
            try:
                cursor.execute(sql)
                columns = [d[0] for d in cursor.description] if cursor.description else []
                rows, truncated = (
                    fetch_capped(cursor, max_rows, max_bytes, max_batch=self.max_batch,
                                 before_batch=None if parallel else
                                 lambda: self._before_batch(raw, deadline, timeout_s))
                    if cursor.description else ([], False)
                )
            finally:
                reusable = self._close_cursor(raw, cursor)
        except self._engine.dialect.loaded_dbapi.Error as exc:
            if late.fired:
                failure = QueryTimeout(f"query cancelled after {timeout_s:g}s (timeout)")
            else:
                failure = self._translate(exc, timeout_s, time.monotonic() - start)
        finally:
            cancelling.unregister(registered)
            late.cancel()
            if late.fired:
                reusable = False
            if reusable:
                try:
                    self._rollback(raw)
                    self._reset(raw)
                except Exception:  # the connection is gone or in an unknown state: never hand it out again
                    reusable = False
            if not reusable or isinstance(failure, DatabaseUnavailable):
                conn.invalidate()
            conn.close()
        if failure is not None:
            raise failure
        return QueryResult(columns, rows, truncated, time.monotonic() - start, sql)

    def _translate(self, exc: Exception, timeout_s: float, elapsed: float) -> Exception:
        return QueryError(driver_message(exc))

    def _message(self, exc: BaseException) -> str:
        """The driver's message for ``exc``, one line (a dialect may dig it out of its wrapping)."""
        return driver_message(exc)

    def close(self) -> None:
        self._engine.dispose()


class _Deadline:
    """Shuts ``sock`` down after ``after_s`` seconds unless cancelled first."""

    def __init__(self, sock: socket.socket | None, after_s: float):
        self.fired = False
        self._sock = sock
        self._lock = threading.Lock()
        self._timer: threading.Timer | None = None
        if sock is not None:
            self._timer = threading.Timer(after_s, self._fire)
            self._timer.daemon = True
            self._timer.start()

    def _fire(self) -> None:
        with self._lock:
            if self._sock is None:
                return
            self.fired = True
            try:
                self._sock.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass
            finally:
                self._close()

    def cancel(self) -> None:
        if self._timer is not None:
            self._timer.cancel()
        with self._lock:
            self._close()

    def _close(self) -> None:
        if self._sock is not None:
            self._sock.close()  # our own duplicate of the driver's socket
            self._sock = None


def duplicate_socket(fd: int) -> socket.socket | None:
    try:
        return socket.socket(fileno=os.dup(fd))
    except (OSError, ValueError):
        return None


def driver_message(exc: BaseException) -> str:
    """The driver's own message, first line, secrets masked (no SQLAlchemy boilerplate)."""
    text = str(exc).strip()
    args: tuple[Any, ...] = getattr(exc, "args", ())
    if len(args) == 2 and isinstance(args[0], int):  # pymysql: (code, message)
        text = f"({args[0]}) {args[1]}"
    lines = [line for line in text.splitlines() if line.strip()]
    return redact(lines[0] if lines else type(exc).__name__)[:500]
