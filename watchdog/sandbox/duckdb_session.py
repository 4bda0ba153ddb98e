"""The DuckDB half of the sandbox: a locked-down in-process connection, for ``.duckdb`` files and CSV/Parquet files.

What the engine itself enforces, whatever the parser lets through:

* a database file is opened ``read_only``; ``:memory:`` holds only the views over the configured files;
* one TEMP view per configured file table (``read_csv`` / ``read_parquet`` / ``read_json`` over the files
  its path or glob matched when the session opened), made *before* the lock-down;
* then ``allowed_paths`` = exactly those files, ``enable_external_access = false`` (no other file, no
  network, no ATTACH/COPY/INSTALL/LOAD), extensions neither installed nor loaded automatically, a memory
  limit, and ``lock_configuration = true``: no statement can change a setting afterwards;
* every statement runs in a transaction that is always rolled back;
* the deadline interrupts the statement (``connection.interrupt()`` from a timer thread), and the
  row and byte caps cut what is fetched.

One connection per session (TEMP views belong to it), used by one statement at a time.
"""

from __future__ import annotations

import contextlib
import threading
import time
from pathlib import Path
from typing import Any

from watchdog.errors import DatabaseUnavailable, QueryError, QueryRefused, QueryTimeout
from watchdog.redact import redact
from watchdog.sandbox import cancel as cancelling
from watchdog.sandbox.fetching import fetch_capped
from watchdog.sandbox.file_tables import FileTableError, expand, reader_for
from watchdog.sandbox.limits import DUCKDB_MEMORY_LIMIT
from watchdog.sandbox.result import QueryResult

#: settings given when the connection opens: nothing is fetched or loaded from outside
_CONNECT_CONFIG: dict[str, Any] = {"autoinstall_known_extensions": False, "autoload_known_extensions": False,
                   "memory_limit": DUCKDB_MEMORY_LIMIT}


def database_path(url: str) -> str:
    """The file of a ``duckdb:///path`` URL, or ``:memory:`` (``duckdb://``, ``duckdb:///:memory:``)."""
    from sqlalchemy.engine import make_url

    parsed = make_url(url)
    if parsed.query:
        raise DatabaseUnavailable("a DuckDB URL takes no options (?...): the sandbox sets them")
    return parsed.database or ":memory:"


class DuckDBSession:
    dialect_name = "duckdb"
    max_batch = 500

    def __init__(self, url: str, files: dict[str, str] | None = None):
        self.path = database_path(url)
        self.files = dict(files or {})
        self._con: Any = None
        self._lock = threading.Lock()

    # ------------------------------------------------------------------ opening and locking down

    def _connection(self) -> Any:
        if self._con is None:
            self._con = self._open()
        return self._con

    def _open(self) -> Any:
        try:
            import duckdb
        except ImportError:
            raise DatabaseUnavailable("DuckDB is not installed: pip install 'watchdog-dq[duckdb]'") from None
        memory = self.path == ":memory:"
        if not memory and not Path(self.path).is_file():
            raise DatabaseUnavailable(f"cannot connect: no DuckDB database file {self.path}")
        try:
            con = duckdb.connect(self.path, read_only=not memory, config=dict(_CONNECT_CONFIG))
        except duckdb.Error as exc:
            raise DatabaseUnavailable(f"cannot connect: {_message(exc)}") from None
        try:
            allowed = self._make_views(con)
            con.execute("SET allowed_paths = $1", [allowed])
            con.execute("SET enable_external_access = false")
            con.execute("SET lock_configuration = true")
        except BaseException:
            con.close()
            raise
        return con

    def _make_views(self, con: Any) -> list[str]:
        import duckdb

        allowed: list[str] = []
        for name, pattern in self.files.items():
            try:
                paths = expand(pattern)
                reader = reader_for(pattern)
            except FileTableError as exc:
                raise DatabaseUnavailable(f"files.{name}: {exc}") from None
            allowed += paths
            listed = ", ".join("'" + p.replace("'", "''") + "'" for p in paths)
            try:  # the name is an identifier (checked), the paths are quoted literals: no user SQL here
                con.execute(f'CREATE TEMP VIEW "{name}" AS SELECT * FROM {reader}([{listed}])')
            except duckdb.Error as exc:
                raise DatabaseUnavailable(f"files.{name}: cannot read {pattern}: {_message(exc)}") from None
        return allowed

    # ------------------------------------------------------------------ running a statement

    def run(self, sql: str, *, max_rows: int, max_bytes: int, timeout_s: float,
            parallel: bool = False) -> QueryResult:
        import duckdb

        with self._lock:
            con = self._connection()
            start = time.monotonic()
            fired = threading.Event()

            def interrupt() -> None:
                fired.set()
                con.interrupt()

            timer = threading.Timer(timeout_s, interrupt)
            timer.daemon = True
            registered = cancelling.register(con.interrupt)
            failure: Exception | None = None
            columns: list[str] = []
            rows: list[tuple[Any, ...]] = []
            truncated = False
            try:
                con.execute("BEGIN TRANSACTION")
                timer.start()
                con.execute(sql)
                if con.description:
                    columns = [d[0] for d in con.description]
                    rows, truncated = fetch_capped(con, max_rows, max_bytes, max_batch=self.max_batch)
            except duckdb.Error as exc:
                failure = _translate(exc, timeout_s, fired.is_set())
            finally:
                timer.cancel()
                cancelling.unregister(registered)
                with contextlib.suppress(duckdb.Error):  # nothing was begun, or the failed statement ended it
                    con.execute("ROLLBACK")
            if failure is not None:
                raise failure
            return QueryResult(columns, rows, truncated, time.monotonic() - start, sql)

    def catalog_columns(self, table: list[str]) -> list[tuple[str, str]]:
        """``[(column, DuckDB type)]`` of ``table`` (its dotted parts), in table order; [] when there is none."""
        *schema, name = table
        query = ("SELECT table_catalog, table_schema, column_name, data_type FROM information_schema.columns "
                 "WHERE table_name = $1 AND ($2::VARCHAR IS NULL OR table_schema = $2) "
                 "ORDER BY table_catalog = 'temp' DESC, table_catalog, table_schema, ordinal_position")
        with self._lock:
            rows = self._connection().execute(query, [name, schema[-1] if schema else None]).fetchall()
        first = rows[0][:2] if rows else None  # the relation the name reads (a file's TEMP view first)
        return [(str(r[2]), str(r[3])) for r in rows if r[:2] == first]

    def close(self) -> None:
        with self._lock:
            if self._con is not None:
                self._con.close()
                self._con = None


def _translate(exc: Exception, timeout_s: float, fired: bool) -> Exception:
    import duckdb

    if isinstance(exc, duckdb.InterruptException):
        if fired:
            return QueryTimeout(f"query cancelled after {timeout_s:g}s (timeout)")
        return DatabaseUnavailable("not finished: watchdog is stopping (running statements were cancelled)")
    if isinstance(exc, duckdb.PermissionException):
        return QueryRefused(f"the database refused it: {_message(exc)}")
    return QueryError(_message(exc))


def _message(exc: BaseException) -> str:
    lines = [line for line in str(exc).splitlines() if line.strip()]
    return redact(lines[0] if lines else type(exc).__name__)[:500]
