"""The database half of the sandbox: one read-only session class per dialect.

Whatever the parser lets through still runs where the database itself refuses writes:

* SQLite: opened ``mode=ro`` (not ``immutable``), ``PRAGMA query_only``, an authorizer that allows
  only reads, and a progress handler that interrupts a statement past its deadline.
* PostgreSQL: a ``READ ONLY`` transaction that is always rolled back, ``statement_timeout``
  (cancelled on the server), and a server-side cursor, which also refuses multiple statements.
* MySQL / MariaDB: ``START TRANSACTION READ ONLY``, ``max_statement_time`` (MariaDB) or
  ``max_execution_time`` (MySQL), always rolled back; multi-statements stay disabled.
* Any other SQLAlchemy dialect: a transaction that is always rolled back (the parser is the guard).

Driver errors are translated here into the exception types of :mod:`watchdog.errors`.
"""

from __future__ import annotations

import re
import sqlite3
import threading
import time
import uuid
from functools import lru_cache
from pathlib import Path
from typing import Any, Protocol
from urllib.parse import quote

import sqlalchemy as sa
from sqlalchemy.engine import URL, make_url

from watchdog.errors import DatabaseUnavailable, QueryError, QueryRefused, QueryTimeout
from watchdog.redact import redact
from watchdog.sandbox.result import QueryResult, row_size

CONNECT_TIMEOUT_S = 10


class Session(Protocol):
    dialect_name: str

    def run(self, sql: str, *, max_rows: int, max_bytes: int, timeout_s: float) -> QueryResult: ...

    def close(self) -> None: ...


def open_session(url: str) -> Session:
    """A read-only session for ``url`` (no connection is made until the first query)."""
    parsed = make_url(url)
    backend = parsed.get_backend_name()
    if backend == "sqlite":
        return SQLiteSession(parsed)
    if backend == "postgresql":
        return PostgresSession(parsed)
    if backend in ("mysql", "mariadb"):
        return MySQLSession(parsed)
    return GenericSession(parsed)


def _fetch(cursor_or_result: Any, max_rows: int, max_bytes: int) -> tuple[list[tuple[Any, ...]], bool]:
    """Fetch at most ``max_rows`` rows and ``max_bytes`` bytes; report whether more were left."""
    rows: list[tuple[Any, ...]] = []
    size = 0
    while True:
        batch = cursor_or_result.fetchmany(min(500, max_rows + 1 - len(rows)))
        if not batch:
            return rows, False
        for row in batch:
            if len(rows) >= max_rows:
                return rows, True
            size += row_size(tuple(row))
            if size > max_bytes:
                return rows, True
            rows.append(tuple(row))
        if len(rows) > max_rows:
            return rows[:max_rows], True


# --------------------------------------------------------------------------- SQLite

_SQLITE_ALLOWED_ACTIONS = {
    sqlite3.SQLITE_SELECT,
    sqlite3.SQLITE_READ,
    sqlite3.SQLITE_FUNCTION,
    getattr(sqlite3, "SQLITE_RECURSIVE", 33),
}
_SQLITE_DENIED_FUNCTIONS = {"load_extension", "writefile", "edit", "fts3_tokenizer", "readfile"}
#: PRAGMAs that only read (none of them can set a value), allowed as table-valued functions:
#: SELECT * FROM pragma_table_info('t')
_SQLITE_READ_PRAGMAS = {
    "table_info", "table_xinfo", "table_list", "index_list", "index_info", "index_xinfo", "foreign_key_list",
    "database_list", "collation_list", "function_list", "module_list", "pragma_list", "compile_options",
    "page_count", "freelist_count", "foreign_key_check", "integrity_check", "quick_check",
}
#: SQLite registers an eponymous virtual table (pragma_*) by "updating" its in-memory schema; a real
#: UPDATE of sqlite_master is refused by SQLite itself (and by mode=ro, query_only and the parser)
_SQLITE_SCHEMA_TABLES = {"sqlite_master", "sqlite_schema"}


@lru_cache(maxsize=256)
def _compiled(pattern: str) -> re.Pattern[str]:
    return re.compile(pattern)


def sqlite_regexp(pattern: str | None, value: Any) -> int | None:
    """SQLite's ``value REGEXP pattern``: a case-sensitive search, as PostgreSQL's ``~``."""
    if pattern is None or value is None:
        return None
    if isinstance(value, bytes):
        value = value.decode("utf-8", "replace")
    return 1 if _compiled(pattern).search(str(value)) else 0


def _sqlite_authorizer(action: int, arg1: str | None, arg2: str | None, _db: str | None, _trigger: str | None) -> int:
    if action == sqlite3.SQLITE_FUNCTION and (arg2 or "").lower() in _SQLITE_DENIED_FUNCTIONS:
        return sqlite3.SQLITE_DENY
    if action in _SQLITE_ALLOWED_ACTIONS:
        return sqlite3.SQLITE_OK
    if action == sqlite3.SQLITE_PRAGMA and (arg1 or "").lower() in _SQLITE_READ_PRAGMAS:
        return sqlite3.SQLITE_OK
    if action == sqlite3.SQLITE_UPDATE and (arg1 or "").lower() in _SQLITE_SCHEMA_TABLES:
        return sqlite3.SQLITE_OK
    return sqlite3.SQLITE_DENY


class SQLiteSession:
    dialect_name = "sqlite"

    def __init__(self, url: URL):
        self.path = url.database or ""
        self._conn: sqlite3.Connection | None = None
        self._lock = threading.Lock()

    def _connect(self) -> sqlite3.Connection:
        if self._conn is not None:
            return self._conn
        if not self.path or self.path == ":memory:":
            raise DatabaseUnavailable("an in-memory SQLite database has nothing to check; give a file path")
        path = Path(self.path).expanduser()
        if not path.is_file():
            raise DatabaseUnavailable(f"SQLite database file not found: {path}")
        uri = f"file:{quote(str(path.resolve()))}?mode=ro"
        try:
            conn = sqlite3.connect(uri, uri=True, check_same_thread=False, timeout=CONNECT_TIMEOUT_S)
            conn.execute("PRAGMA query_only = ON")
        except sqlite3.Error as exc:
            raise DatabaseUnavailable(f"cannot open SQLite database {path}: {exc}") from None
        conn.create_function("regexp", 2, sqlite_regexp, deterministic=True)
        conn.set_authorizer(_sqlite_authorizer)
        self._conn = conn
        return conn

    def run(self, sql: str, *, max_rows: int, max_bytes: int, timeout_s: float) -> QueryResult:
        with self._lock:
            conn = self._connect()
            start = time.monotonic()
            deadline = start + timeout_s
            conn.set_progress_handler(lambda: 1 if time.monotonic() > deadline else 0, 1000)
            cursor = conn.cursor()
            try:
                cursor.execute(sql)
                columns = [d[0] for d in cursor.description or []]
                rows, truncated = _fetch(cursor, max_rows, max_bytes)
            except sqlite3.Error as exc:
                raise self._translate(exc, timeout_s, time.monotonic() > deadline) from None
            except (sqlite3.Warning, ValueError) as exc:  # e.g. "You can only execute one statement at a time."
                raise QueryRefused(str(exc)) from None
            finally:
                cursor.close()
                conn.set_progress_handler(None, 0)
                if conn.in_transaction:
                    conn.rollback()
            return QueryResult(columns, rows, truncated, time.monotonic() - start, sql)

    @staticmethod
    def _translate(exc: sqlite3.Error, timeout_s: float, past_deadline: bool) -> Exception:
        message = str(exc)
        if "interrupted" in message and past_deadline:
            return QueryTimeout(f"query cancelled after {timeout_s:g}s (timeout)")
        if "not authorized" in message or "readonly database" in message or "query_only" in message.lower():
            return QueryRefused(f"the database refused it: {message}")
        if isinstance(exc, sqlite3.OperationalError) and ("unable to open" in message or "disk I/O" in message):
            return DatabaseUnavailable(message)
        return QueryError(message)

    def close(self) -> None:
        if self._conn is not None:
            self._conn.close()
            self._conn = None


# --------------------------------------------------------------------------- server databases


class _EngineSession:
    """Shared plumbing for databases reached through a SQLAlchemy engine.

    Statements run on the pooled driver connection's own cursor with no parameters, so
    the driver never rewrites ``%`` or ``:name`` in the user's SQL.
    """

    dialect_name = "generic"

    def __init__(self, url: URL, connect_args: dict[str, Any] | None = None):
        self.url = url
        self._engine = sa.create_engine(url, pool_pre_ping=True, pool_size=2, connect_args=connect_args or {})

    def _begin(self, conn: sa.Connection, raw: Any, timeout_s: float) -> None:
        """Make the transaction read-only and time-limited (per dialect)."""

    def _cursor(self, raw: Any, max_rows: int) -> Any:
        return raw.cursor()

    def run(self, sql: str, *, max_rows: int, max_bytes: int, timeout_s: float) -> QueryResult:
        start = time.monotonic()
        try:
            conn = self._engine.connect()
        except sa.exc.DBAPIError as exc:
            raise DatabaseUnavailable(f"cannot connect: {_driver_message(exc.orig or exc)}") from None
        except Exception as exc:  # driver missing, bad URL...
            raise DatabaseUnavailable(f"cannot connect: {redact(exc)}") from None
        raw = conn.connection.dbapi_connection
        failure: Exception | None = None
        try:
            self._begin(conn, raw, timeout_s)
            cursor = self._cursor(raw, max_rows)
            try:
                cursor.execute(sql)
                columns = [d[0] for d in cursor.description] if cursor.description else []
                rows, truncated = _fetch(cursor, max_rows, max_bytes) if cursor.description else ([], False)
            finally:
                cursor.close()
        except self._engine.dialect.loaded_dbapi.Error as exc:
            failure = self._translate(exc, timeout_s, time.monotonic() - start)
        finally:
            try:
                raw.rollback()
            except Exception:  # the connection is gone: never hand it out again
                conn.invalidate()
            if isinstance(failure, DatabaseUnavailable):
                conn.invalidate()
            conn.close()
        if failure is not None:
            raise failure
        return QueryResult(columns, rows, truncated, time.monotonic() - start, sql)

    def _translate(self, exc: Exception, timeout_s: float, elapsed: float) -> Exception:
        return QueryError(_driver_message(exc))

    def close(self) -> None:
        self._engine.dispose()


def _driver_message(exc: BaseException) -> str:
    """The driver's own message, first line, secrets masked (no SQLAlchemy boilerplate)."""
    text = str(exc).strip()
    args = getattr(exc, "args", ())
    if len(args) == 2 and isinstance(args[0], int):  # pymysql: (code, message)
        text = f"({args[0]}) {args[1]}"
    lines = [line for line in text.splitlines() if line.strip()]
    return redact(lines[0] if lines else type(exc).__name__)[:500]


class PostgresSession(_EngineSession):
    dialect_name = "postgresql"

    def __init__(self, url: URL):
        super().__init__(url, {"connect_timeout": CONNECT_TIMEOUT_S, "application_name": "watchdog"})

    def _begin(self, conn: sa.Connection, raw: Any, timeout_s: float) -> None:
        with raw.cursor() as cur:
            cur.execute("BEGIN TRANSACTION READ ONLY")
            cur.execute("SET LOCAL statement_timeout = %d" % max(1, int(timeout_s * 1000)))
            cur.execute("SET LOCAL lock_timeout = %d" % max(1, int(timeout_s * 1000)))

    def _cursor(self, raw: Any, max_rows: int) -> Any:
        # a server-side cursor: rows stream in batches, and DECLARE accepts exactly one SELECT/VALUES
        cursor = raw.cursor(name=f"watchdog_{uuid.uuid4().hex[:12]}")
        cursor.itersize = min(1000, max_rows + 1)
        return cursor

    def _translate(self, exc: Exception, timeout_s: float, elapsed: float) -> Exception:
        state = getattr(exc, "sqlstate", None) or ""
        message = _driver_message(exc)
        if state == "57014":
            return QueryTimeout(f"query cancelled after {timeout_s:g}s (timeout)")
        if state in ("25006", "42501"):
            return QueryRefused(f"the database refused it: {message}")
        if state.startswith("08") or state in ("57P01", "57P02", "57P03"):
            return DatabaseUnavailable(f"lost the connection: {message}")
        if not state and type(exc).__name__ in ("OperationalError", "InterfaceError"):
            return DatabaseUnavailable(f"lost the connection: {message}")
        return QueryError(message)


class MySQLSession(_EngineSession):
    dialect_name = "mysql"
    _TIMEOUT_CODES = {1969, 3024, 1317}
    _GONE_CODES = {2002, 2003, 2006, 2013, 2055}

    def __init__(self, url: URL):
        super().__init__(url, {"connect_timeout": CONNECT_TIMEOUT_S, "charset": "utf8mb4"})

    def _begin(self, conn: sa.Connection, raw: Any, timeout_s: float) -> None:
        with raw.cursor() as cur:
            if getattr(conn.dialect, "is_mariadb", False):
                cur.execute("SET SESSION max_statement_time = %.3f" % timeout_s)
            else:
                cur.execute("SET SESSION max_execution_time = %d" % max(1, int(timeout_s * 1000)))
            # session-wide too: DDL commits implicitly, and the next transaction must still be read-only
            cur.execute("SET SESSION TRANSACTION READ ONLY")
            cur.execute("START TRANSACTION READ ONLY")

    def _cursor(self, raw: Any, max_rows: int) -> Any:
        import pymysql.cursors

        return raw.cursor(pymysql.cursors.SSCursor)  # unbuffered: rows stream, memory stays flat

    def _translate(self, exc: Exception, timeout_s: float, elapsed: float) -> Exception:
        args = getattr(exc, "args", ())
        code = args[0] if args and isinstance(args[0], int) else None
        message = _driver_message(exc)
        if code in self._TIMEOUT_CODES or (code == 2013 and elapsed >= timeout_s):
            return QueryTimeout(f"query cancelled after {timeout_s:g}s (timeout)")
        if code in (1792, 1142, 1227, 1290, 1044):
            return QueryRefused(f"the database refused it: {message}")
        if code in self._GONE_CODES:
            return DatabaseUnavailable(f"lost the connection: {message}")
        return QueryError(message)


class GenericSession(_EngineSession):
    """Any other SQLAlchemy dialect: rolled-back transaction; the parser policy is the guard."""
