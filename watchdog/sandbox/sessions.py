"""The database half of the sandbox: one read-only session class per dialect.

Whatever the parser lets through still runs where the database itself refuses writes:

* SQLite: in a worker process (:mod:`watchdog.sandbox.sqlite_worker`), opened ``mode=ro`` (not
  ``immutable``), ``PRAGMA query_only``, an authorizer that allows only reads, a progress handler that
  interrupts a statement past its deadline, a cap on the size of any string or blob, and a REGEXP
  function whose matching stops at the deadline. One SQLite function call cannot be interrupted, so a
  worker still busy shortly after the deadline is killed; its memory is capped too.
* PostgreSQL: a ``READ ONLY`` transaction that is always rolled back, ``statement_timeout``
  (cancelled on the server, and lowered to the time left before each later fetch), a server-side
  cursor, which also refuses multiple statements; afterwards session-level advisory locks are released.
* MySQL / MariaDB: ``START TRANSACTION READ ONLY``, ``max_statement_time`` (MariaDB) or
  ``max_execution_time`` (MySQL), always rolled back; multi-statements stay disabled; ``sql_mode`` is
  kept free of modes that change how quotes and backslashes read (so the server reads a statement as
  the parser did); a result cut by the limits is killed on the server, not drained; afterwards the
  session is reset (COM_RESET_CONNECTION: named locks, table locks, HANDLERs, variables, temporary tables).
* DuckDB (files and ``.duckdb``): :mod:`watchdog.sandbox.duckdb_session`, a locked-down worker process.
* Any other SQLAlchemy dialect: a transaction that is always rolled back (the parser is the guard).

Rows are fetched in batches that start at one row and grow only while the byte budget allows, so a
result of huge rows is cut after the first one that does not fit, not after a batch of them.

Driver errors are translated here into the exception types of :mod:`watchdog.errors`.
"""

from __future__ import annotations

import socket
import time
import uuid
from contextlib import closing
from typing import TYPE_CHECKING, Any, Protocol

from watchdog.errors import DatabaseUnavailable, QueryError, QueryRefused, QueryTimeout
from watchdog.redact import redact_url
from watchdog.sandbox import limits
from watchdog.sandbox.dialects import missing_driver
from watchdog.sandbox.direct import DirectEngine, psycopg_conninfo
from watchdog.sandbox.engine_session import EngineSession, driver_message, duplicate_socket
from watchdog.sandbox.limits import CONNECT_TIMEOUT_S
from watchdog.sandbox.result import QueryResult
from watchdog.sandbox.sqlite_session import SQLiteSession
from watchdog.urls import driver_url, needs_encoding_hint

if TYPE_CHECKING:  # SQLAlchemy is imported only for the databases that need it (not SQLite, not psycopg)
    import sqlalchemy as sa
    from sqlalchemy.engine import URL


class Session(Protocol):
    dialect_name: str

    def run(self, sql: str, *, max_rows: int, max_bytes: int, timeout_s: float,
            parallel: bool = False) -> QueryResult: ...

    def close(self) -> None: ...


def open_session(url: str, files: dict[str, str] | None = None) -> Session:
    """A read-only session for ``url`` (no connection is made until the first query): the one place that
    decides how a URL opens a session. Plain SQLite files and psycopg URLs open without SQLAlchemy.

    ``files``: DuckDB only, tables read from files. Raises DatabaseUnavailable with one line for a URL that
    names no database kind watchdog reads, or whose driver is not installed."""
    url = driver_url(url)
    if files and backend_name(url) != "duckdb":
        raise DatabaseUnavailable("files: needs a DuckDB database (duckdb:///:memory: or duckdb:///path.duckdb)")
    sqlite_file = _plain_sqlite_file(url)
    if sqlite_file is not None:
        return SQLiteSession(sqlite_file)
    conninfo = psycopg_conninfo(url)
    if conninfo is not None:
        return PostgresSession(conninfo, needs_encoding_hint(url))
    return _sqlalchemy_session(url, files)


def backend_name(url: str) -> str:
    """SQLAlchemy's backend name of ``url`` (``sqlite``, ``postgresql``, ``mysql``, ``duckdb``, ``trino``...)."""
    url = driver_url(url)
    if _plain_sqlite_file(url) is not None:
        return "sqlite"
    if psycopg_conninfo(url) is not None:
        return "postgresql"
    return _parse(url).get_backend_name()


def _parse(url: str) -> URL:
    from sqlalchemy.engine import make_url

    try:
        return make_url(url)
    except Exception:
        raise DatabaseUnavailable(f"not a database URL: {redact_url(url)!r}; write e.g. {_EXAMPLES['postgresql']} "
                                  f"or {_EXAMPLES['sqlite']}") from None


def _sqlalchemy_session(url: str, files: dict[str, str] | None) -> Session:
    from sqlalchemy.exc import NoSuchModuleError

    parsed = _parse(url)
    backend = parsed.get_backend_name()
    try:
        if backend == "duckdb":
            from watchdog.sandbox.duckdb_session import DuckDBSession

            return DuckDBSession(url, files)
        if backend == "sqlite":
            return SQLiteSession(parsed)
        if backend == "postgresql":
            return PostgresSession(parsed, needs_encoding_hint(url))
        if backend in ("mysql", "mariadb"):
            return MySQLSession(parsed, needs_encoding_hint(url))
        if backend == "hive":  # the Spark Thrift server (HiveServer2)
            from watchdog.sandbox.spark_session import SparkSession

            return SparkSession(parsed)
        return GenericSession(parsed)
    except NoSuchModuleError:
        raise DatabaseUnavailable(unknown_dialect(parsed.drivername)) from None
    except ImportError as exc:  # the SQLAlchemy dialect is there but not its driver
        raise DatabaseUnavailable(missing_driver(backend) or driver_not_installed(parsed.drivername, exc)) from None


#: the package to install for a driver module whose name is not its package's
_PACKAGES = {"MySQLdb": "mysqlclient", "psycopg2": "psycopg2-binary", "psycopg": "'psycopg[binary]'",
             "duckdb": "'watchdog-dq[duckdb]'", "pyhive": "'watchdog-dq[spark]'"}


def driver_not_installed(drivername: str, exc: ImportError) -> str:
    """One line for a URL whose driver module is missing: what to ``pip install``."""
    module = (exc.name or drivername.partition("+")[2] or drivername).split(".")[0]
    return (f"the driver of {drivername}:// is not installed (no module {module!r}): "
            f"pip install {_PACKAGES.get(module, module)}")


def _plain_sqlite_file(url: str) -> str | None:
    """The file of a plain ``sqlite:///path`` URL (no driver, query or escapes), else None."""
    prefix = "sqlite:///"
    if not url.startswith(prefix) or any(c in url for c in "?%#"):
        return None
    return url[len(prefix):] or None


def unknown_dialect(drivername: str) -> str:
    """The message for a URL whose database kind or driver SQLAlchemy cannot load."""
    backend, _, driver = drivername.partition("+")
    if backend == "hive":
        return ("hive:// (Spark SQL through the Spark Thrift server) needs PyHive: "
                "pip install 'watchdog-dq[spark]'")
    missing = missing_driver(backend)
    if missing is not None:
        return missing
    if driver and backend in ("sqlite", "postgresql", "mysql", "mariadb"):
        return (f"the driver {driver!r} for {backend} is not installed or not known; "
                f"use e.g. {_EXAMPLES[backend]}")
    return (f"unknown database kind {drivername!r} in the URL; watchdog reads SQLite, PostgreSQL, "
            f"MySQL/MariaDB and DuckDB, e.g. {_EXAMPLES['sqlite']}, {_EXAMPLES['postgresql']}, "
            f"{_EXAMPLES['mysql']} or duckdb:///path/to/file.duckdb")


_EXAMPLES = {"sqlite": "sqlite:///path/to/file.db", "postgresql": "postgresql+psycopg://user@host/db",
             "mysql": "mysql+pymysql://user@host/db", "mariadb": "mysql+pymysql://user@host/db"}


# --------------------------------------------------------------------------- server databases


def _may_set_temp_file_limit(cur: Any) -> bool:
    """True when the connected PostgreSQL role may set ``temp_file_limit`` (a superuser-only setting)."""
    cur.execute("SELECT current_setting('is_superuser') = 'on', current_setting('server_version_num')::int")
    superuser, version = cur.fetchone()
    if superuser:
        return True
    if version < 150000:  # GRANT SET ON PARAMETER exists from PostgreSQL 15
        return False
    cur.execute("SELECT has_parameter_privilege('temp_file_limit', 'SET')")
    return bool(cur.fetchone()[0])


class PostgresSession(EngineSession):
    dialect_name = "postgresql"

    def __init__(self, url: URL | str, encoding_hint: bool = False):
        """``url``: a libpq URI (psycopg, without SQLAlchemy) or a SQLAlchemy URL (another driver).
        ``encoding_hint``: a failed connection says how to percent-encode the password."""
        args = {"connect_timeout": CONNECT_TIMEOUT_S, "application_name": "watchdog"}
        self.encoding_hint = encoding_hint
        if isinstance(url, str):
            self.url: Any = url
            self._engine = DirectEngine(url, args)
        else:
            super().__init__(url, args)
        #: whether this role may set temp_file_limit (a superuser, or SET granted on PostgreSQL 15+)
        self._may_limit_temp: bool | None = None

    def _begin(self, conn: sa.Connection, raw: Any, timeout_s: float, jit: bool = True,
               ship_rows: bool = False) -> None:
        ms = max(1, int(timeout_s * 1000))
        with raw.cursor() as cur:
            cur.execute("BEGIN TRANSACTION READ ONLY")
            if self._may_limit_temp is None:
                self._may_limit_temp = _may_set_temp_file_limit(cur)
            temp = f", set_config('temp_file_limit', '{int(limits.TEMP_FILE_LIMIT_KB)}', true)" if (
                self._may_limit_temp) else ""
            # a statement of hundreds of expressions can spend longer compiling them than running them
            tuning = "" if jit else ", set_config('jit', 'off', true)"
            # the failing rows of many conditions: the planner prices the conditions low and a row handed on from
            # a worker high, so it would search them alone (about twice as slow as with its workers)
            if ship_rows:
                tuning += ", set_config('parallel_tuple_cost', '0.001', true)"
            # standard_conforming_strings: 'a\' is a whole string, as the parser read it
            cur.execute(f"SELECT set_config('statement_timeout', '{ms}', true), "
                        f"set_config('lock_timeout', '{ms}', true), "
                        f"set_config('standard_conforming_strings', 'on', true){temp}{tuning}")

    def _cursor(self, raw: Any, max_rows: int, parallel: bool = False) -> Any:
        if parallel:
            plain = raw.cursor()
            if hasattr(plain, "stream"):  # psycopg 3 (not psycopg2)
                return _StreamedCursor(plain)
            plain.close()
        # a server-side cursor: rows stream in batches, and DECLARE accepts exactly one SELECT/VALUES
        cursor = raw.cursor(name=f"watchdog_{uuid.uuid4().hex[:12]}")
        cursor.itersize = min(1000, max_rows + 1)
        return cursor

    def _before_batch(self, raw: Any, deadline: float, timeout_s: float) -> None:
        # every FETCH is a statement with its own statement_timeout: once a tenth of the time is
        # spent, give the next one only what is left, so the whole read ends near the deadline
        left = deadline - time.monotonic()
        if left <= 0:
            raise QueryTimeout(f"query cancelled after {timeout_s:g}s (timeout)")
        if left < 0.9 * timeout_s:
            with raw.cursor() as cur:
                cur.execute(f"SET LOCAL statement_timeout = {max(1, int(left * 1000))}")

    def _socket(self, raw: Any) -> socket.socket | None:
        return duplicate_socket(raw.pgconn.socket)

    def _cancel(self, raw: Any) -> None:
        raw.cancel()  # a cancel request on a new connection to the server, as pg_cancel_backend

    def _reset(self, raw: Any) -> None:
        # session-level advisory locks survive the rollback and would stay with the pooled connection
        raw.autocommit = True
        try:
            raw.execute("SELECT pg_advisory_unlock_all()")
        finally:
            raw.autocommit = False

    def _translate(self, exc: Exception, timeout_s: float, elapsed: float) -> Exception:
        state = getattr(exc, "sqlstate", None) or ""
        message = driver_message(exc)
        if state == "57014":
            return QueryTimeout(f"query cancelled after {timeout_s:g}s (timeout)")
        if state in ("25006", "42501"):
            return QueryRefused(f"the database refused it: {message}")
        if state.startswith("08") or state in ("57P01", "57P02", "57P03"):
            return DatabaseUnavailable(f"lost the connection: {message}")
        if not state and type(exc).__name__ in ("OperationalError", "InterfaceError"):
            return DatabaseUnavailable(f"lost the connection: {message}")
        return QueryError(message)


#: rows per network chunk where libpq has chunked-rows mode (17+): row by row costs ~10 µs a row in Python;
#: a chunk keeps memory bounded (the caps still stop reading at the row that passes them)
STREAM_CHUNK_ROWS = 1000


def _chunked() -> dict[str, int]:
    import psycopg

    return {"size": STREAM_CHUNK_ROWS} if psycopg.pq.version() >= 170000 else {}


class _StreamedCursor:
    """A plain psycopg cursor read through ``stream()``: the extended protocol (exactly one statement,
    as a server-side cursor's DECLARE), rows arrive as the server sends them and the statement is
    cancelled when the caps stop reading early. Unlike a cursor, it leaves the planner free to use
    parallel workers. The whole statement runs under one ``statement_timeout``.
    """

    def __init__(self, cursor: Any):
        self._cursor = cursor
        self._rows: Any = None
        self._first: list[Any] = []
        self.description: Any = None

    def execute(self, sql: str) -> None:
        self._rows = self._cursor.stream(sql, **_chunked())
        # the first row (if any) makes the column names known, as execute() does on a cursor
        for row in self._rows:
            self._first.append(row)
            break
        self.description = self._cursor.description  # None when there is no row: no column names then

    def fetchmany(self, size: int) -> list[Any]:
        out, self._first = self._first[:size], self._first[size:]
        for row in self._rows:
            out.append(row)
            if len(out) >= size:
                break
        return out

    def close(self) -> None:
        if self._rows is not None:
            self._rows.close()  # cancels the statement if rows are left, and reads what was in flight
        self._cursor.close()


class MySQLSession(EngineSession):
    dialect_name = "mysql"
    max_batch = 1  # an unbuffered cursor reads rows off the socket one by one anyway
    _TIMEOUT_CODES = {1969, 3024, 1317}
    _GONE_CODES = {2002, 2003, 2006, 2013, 2055}

    def __init__(self, url: URL, encoding_hint: bool = False):
        # PyMySQL sends a str password as Latin-1 (a password with "✓" cannot connect): send its UTF-8 bytes
        password = url.password.encode("utf-8") if isinstance(url.password, str) else None
        super().__init__(url, {"connect_timeout": CONNECT_TIMEOUT_S, "charset": "utf8mb4",
                               **({"password": password} if password else {})})
        self.encoding_hint = encoding_hint

    def _begin(self, conn: sa.Connection, raw: Any, timeout_s: float, jit: bool = True,
               ship_rows: bool = False) -> None:
        with raw.cursor() as cur:
            if getattr(conn.dialect, "is_mariadb", False):
                limit = f"max_statement_time = {timeout_s:.3f}"
            else:
                limit = f"max_execution_time = {max(1, int(timeout_s * 1000))}"
            cur.execute(f"SET SESSION {limit}, SESSION sql_mode = {_SAFE_SQL_MODE}, SESSION autocommit = 0")
            # session-wide too: DDL commits implicitly, and the next transaction must still be read-only
            cur.execute("SET SESSION TRANSACTION READ ONLY")
            cur.execute("START TRANSACTION READ ONLY")

    def _cursor(self, raw: Any, max_rows: int, parallel: bool = False) -> Any:
        import pymysql.cursors

        return raw.cursor(pymysql.cursors.SSCursor)  # unbuffered: rows stream, memory stays flat

    def _close_cursor(self, raw: Any, cursor: Any) -> bool:
        result = getattr(cursor, "_result", None)
        if result is not None and getattr(result, "unbuffered_active", False):
            # rows are still coming: closing the cursor would read (and throw away) all of them until
            # max_statement_time. Kill the statement on the server and drop the connection instead.
            self._kill_query(raw.thread_id())
            result.unbuffered_active = False  # nor drain it when the cursor or the result is collected
            cursor._result = None
            raw._result = None
            return False
        cursor.close()
        return True

    def _socket(self, raw: Any) -> socket.socket | None:
        sock = getattr(raw, "_sock", None)
        return duplicate_socket(sock.fileno()) if sock is not None else None

    def _cancel(self, raw: Any) -> None:
        self._kill_query(raw.thread_id())

    def _kill_query(self, thread_id: int) -> None:
        try:
            other = self._engine.raw_connection()
            try:
                with closing(other.cursor()) as cur:
                    cur.execute(f"KILL QUERY {int(thread_id)}")
            finally:
                other.close()
        except Exception:  # the abandoned connection is closed anyway: the server stops at its next write
            pass

    def _reset(self, raw: Any) -> None:
        # COM_RESET_CONNECTION: releases GET_LOCK and LOCK TABLES locks, closes HANDLERs, drops
        # temporary tables and user variables, and puts session variables back (the handshake's
        # character set included). pymysql has no public call for it; if this fails the caller
        # invalidates the connection, which clears the session as surely.
        raw._execute_command(_COM_RESET_CONNECTION, b"")
        raw._read_ok_packet()

    def _translate(self, exc: Exception, timeout_s: float, elapsed: float) -> Exception:
        args = getattr(exc, "args", ())
        code = args[0] if args and isinstance(args[0], int) else None
        message = driver_message(exc)
        if code in self._TIMEOUT_CODES or (code == 2013 and elapsed >= timeout_s):
            return QueryTimeout(f"query cancelled after {timeout_s:g}s (timeout)")
        if code in (1792, 1142, 1227, 1290, 1044):
            return QueryRefused(f"the database refused it: {message}")
        if code in self._GONE_CODES:
            return DatabaseUnavailable(f"lost the connection: {message}")
        return QueryError(message)


_COM_RESET_CONNECTION = 0x1F
#: sql_mode without the modes that change how the server reads quotes and backslashes (ANSI_QUOTES,
#: NO_BACKSLASH_ESCAPES, and the combination modes that include them): the parser reads MySQL's defaults
_UNSAFE_SQL_MODES = ("ANSI_QUOTES", "NO_BACKSLASH_ESCAPES", "ANSI", "ORACLE", "MSSQL", "DB2", "POSTGRESQL", "MAXDB")
_SAFE_SQL_MODE = "CONCAT(',', @@SESSION.sql_mode, ',')"
for _mode in _UNSAFE_SQL_MODES:
    _SAFE_SQL_MODE = f"REPLACE({_SAFE_SQL_MODE}, ',{_mode},', ',')"
_SAFE_SQL_MODE = f"TRIM(BOTH ',' FROM {_SAFE_SQL_MODE})"


class GenericSession(EngineSession):
    """Any other SQLAlchemy dialect: rolled-back transaction; the parser policy is the guard."""
