"""The sandbox session for Spark SQL through the Spark Thrift Server (HiveServer2 protocol, ``hive://``).

Spark has no read-only transaction and no per-session row or memory limit, so here the parser is the
guard (:mod:`watchdog.sandbox.spark_policy`) and the session adds what a client can:

* every statement runs asynchronously on the server: the session polls its operation handle and, at
  the deadline or when :mod:`watchdog.sandbox.cancel` asks, cancels it on the server
  (``CancelOperation``) -- the statement stops, not only the wait for it;
* the statement is read through ``SELECT * FROM (...) LIMIT max_rows + 1``, so the server never
  collects more rows than the row cap into its driver; bytes are capped while fetching as elsewhere;
* each Thrift session starts with ``spark.sql.session.timeZone=UTC`` (timestamps come back as UTC
  wall-clock text, as freshness expects), ANSI mode on (an overflow or bad cast is an error, never a
  wrapped or NULL number), ``spark.sql.runSQLOnFiles=false`` (no ``parquet.`/path``` reads even if the
  parser missed one); incremental collection stays off, so the whole statement runs while it is polled
  (with it on, the work would happen inside the fetch, out of reach of the deadline);
* when the server is late beyond the grace period, the socket is shut down.

Setting any of these back would take a ``SET`` statement, which the parser refuses. What the engine
itself cannot enforce is in SECURITY.md (use a read-only catalog role or Thrift user).
"""

from __future__ import annotations

import contextlib
import logging
import re
import socket
import time
from typing import TYPE_CHECKING, Any

from watchdog.errors import DatabaseUnavailable, QueryError, QueryTimeout
from watchdog.sandbox.engine_session import EngineSession, driver_message, duplicate_socket

if TYPE_CHECKING:
    import sqlalchemy as sa
    from sqlalchemy.engine import URL

#: session settings sent when each Thrift session opens (HiveServer2 ``set:hiveconf:`` keys)
SESSION_SETTINGS = {
    "spark.sql.session.timeZone": "UTC",
    "spark.sql.ansi.enabled": "true",
    "spark.sql.runSQLOnFiles": "false",
    # a status request answers at once instead of waiting up to 5 s for the statement to end
    "hive.server2.long.polling.timeout": "50ms",
}
#: the Thrift transport logs a failed connect at ERROR level; the sandbox reports it as one line itself
logging.getLogger("thrift.transport.TSocket").setLevel(logging.CRITICAL)

#: the first and the longest pause between two looks at a running statement
POLL_FIRST_S, POLL_MAX_S = 0.01, 0.2


def capped(sql: str, max_rows: int) -> str:
    """``sql`` read through an outer LIMIT of ``max_rows + 1`` (one more row tells the result was cut).

    The text stays as the parser vetted it (one read statement): only trailing semicolons are dropped,
    and it starts on a line of its own and ends before one, so a trailing ``--`` comment stays inside.
    """
    body = sql.rstrip().rstrip(";").rstrip()
    return f"SELECT * FROM (\n{body}\n) AS watchdog_capped LIMIT {int(max_rows) + 1}"


class SparkSession(EngineSession):
    """Spark SQL through the Thrift server (PyHive's ``hive://`` dialect)."""

    dialect_name = "spark"
    max_batch = 1000

    def __init__(self, url: URL):
        import sqlalchemy as sa

        self.url = url
        settings = {f"set:hiveconf:{key}": value for key, value in SESSION_SETTINGS.items()}
        # no pre-ping: on Spark even SELECT 1 is a job; a stale pooled connection fails and is replaced
        self._engine: Any = sa.create_engine(url, pool_size=2, pool_pre_ping=False,
                                             connect_args={"configuration": settings})
        _quote_describe(self._engine.dialect)

    def _begin(self, conn: sa.Connection, raw: Any, timeout_s: float, jit: bool = True,
               ship_rows: bool = False) -> None:
        raw._watchdog_deadline = time.monotonic() + timeout_s
        raw._watchdog_timeout = timeout_s
        raw._watchdog_cancel = False

    def _cursor(self, raw: Any, max_rows: int, parallel: bool = False) -> Any:
        return _PolledCursor(raw, max_rows)

    def _rollback(self, raw: Any) -> None:
        """No transactions on Spark: nothing to roll back (PyHive's rollback() raises)."""

    def _socket(self, raw: Any) -> socket.socket | None:
        handle = getattr(getattr(getattr(raw, "_transport", None), "_trans", None), "handle", None)
        return duplicate_socket(handle.fileno()) if handle is not None else None

    def _cancel(self, raw: Any) -> None:
        raw._watchdog_cancel = True  # the polling thread cancels on the server (one Thrift client, one thread)

    def _message(self, exc: BaseException) -> str:
        return _spark_message(exc)

    def _translate(self, exc: Exception, timeout_s: float, elapsed: float) -> Exception:
        message = _spark_message(exc)
        if any(word in message for word in ("Connection refused", "TTransportException", "Broken pipe",
                                            "Could not connect", "Invalid SessionHandle")):
            return DatabaseUnavailable(f"lost the connection: {message}")
        return QueryError(message)


class _PolledCursor:
    """A PyHive cursor whose statement runs asynchronously and is cancelled at the deadline."""

    def __init__(self, raw: Any, max_rows: int):
        self._raw = raw
        self._cursor = raw.cursor()
        self._max_rows = max_rows
        self.description: Any = None

    def execute(self, sql: str) -> None:
        from pyhive import hive
        from TCLIService.ttypes import TOperationState

        raw = self._raw
        try:
            self._cursor.execute(capped(sql, self._max_rows), async_=True)
            pause = POLL_FIRST_S
            while True:
                status = self._cursor.poll(get_progress_update=False)
                state = status.operationState
                if state == TOperationState.FINISHED_STATE:
                    break
                if state in (TOperationState.ERROR_STATE, TOperationState.CANCELED_STATE,
                             TOperationState.CLOSED_STATE, TOperationState.TIMEDOUT_STATE,
                             TOperationState.UKNOWN_STATE):
                    raise hive.OperationalError(status.errorMessage or f"the statement ended in state {state}")
                if raw._watchdog_cancel:
                    self._cancel()
                    raise QueryError("query cancelled: watchdog is stopping")
                if time.monotonic() >= raw._watchdog_deadline:
                    self._cancel()
                    raise QueryTimeout(f"query cancelled after {raw._watchdog_timeout:g}s (timeout)")
                time.sleep(pause)
                pause = min(POLL_MAX_S, pause * 1.5)
            self.description = self._cursor.description
        except (OSError, EOFError) as exc:  # the Thrift transport: server gone or socket shut at the deadline
            raise hive.OperationalError(f"TTransportException: {exc}") from None
        except Exception as exc:
            if type(exc).__name__ == "TTransportException":
                raise hive.OperationalError(f"TTransportException: {exc}") from None
            raise

    def _cancel(self) -> None:
        with contextlib.suppress(Exception):  # the operation may have ended meanwhile: nothing runs then
            self._cursor.cancel()

    def fetchmany(self, size: int) -> list[Any]:
        if time.monotonic() >= self._raw._watchdog_deadline + 1:
            raise QueryTimeout(f"query cancelled after {self._raw._watchdog_timeout:g}s (timeout)")
        return list(self._cursor.fetchmany(size))

    def close(self) -> None:
        with contextlib.suppress(Exception):  # an operation on a broken session: the session goes anyway
            self._cursor.close()


def _quote_describe(dialect: Any) -> None:
    """The catalog reads (:mod:`watchdog.sandbox.catalog`) go through PyHive's ``DESCRIBE schema.table``, which
    pastes the names in as they are: quote each with backticks, so a table name from a suite is only ever a
    name, and a missing table is "no such table" rather than a lost connection."""
    import sqlalchemy as sa

    original = dialect._get_table_columns

    def columns(connection: Any, table_name: str, schema: str | None) -> Any:
        try:
            return original(connection, _backticked(table_name), _backticked(schema) if schema else None)
        except sa.exc.DBAPIError as exc:
            if any(code in str(exc) for code in ("TABLE_OR_VIEW_NOT_FOUND", "SCHEMA_NOT_FOUND")):
                raise sa.exc.NoSuchTableError(table_name) from None
            raise

    dialect._get_table_columns = columns


def _backticked(name: str) -> str:
    return "`" + name.replace("`", "``") + "`"


def _spark_message(exc: BaseException) -> str:
    """The server's own error message (PyHive wraps the whole Thrift response), first line, secrets masked."""
    first = exc.args[0] if getattr(exc, "args", None) else None
    text = getattr(first, "errorMessage", None) or getattr(getattr(first, "status", None), "errorMessage", None)
    message = driver_message(Exception(text)) if isinstance(text, str) and text.strip() else driver_message(exc)
    message = message.removeprefix("Error running query: ")
    message = _JAVA_EXCEPTION.sub("", message)  # the Java class names say nothing the error class does not
    return _REPEATED_CLASS.sub(r"\1", message)


_JAVA_EXCEPTION = re.compile(r"\b(?:org|java)\.[\w.$]+(?:Exception|Error): (?:Error running query: )?")
_REPEATED_CLASS = re.compile(r"^(\[[A-Z_.]+\]) \1")
