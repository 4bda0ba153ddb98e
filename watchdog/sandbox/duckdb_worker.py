"""DuckDB statements run in this worker process, which :class:`~watchdog.sandbox.duckdb_session.DuckDBSession`
kills when it is late: the DuckDB connection, locked down.

What the engine itself enforces, whatever the parser lets through:

* a database file is opened ``read_only``; ``:memory:`` holds only the views over the configured files;
* one TEMP view per configured file table (``read_csv`` / ``read_parquet`` / ``read_json`` over the files
  its path or glob matched when the worker started), made *before* the lock-down;
* then ``allowed_paths`` = exactly those files, ``enable_external_access = false`` (no other file, no
  network, no ATTACH/COPY/INSTALL/LOAD), extensions neither installed nor loaded automatically, a memory
  limit, and ``lock_configuration = true``: no statement can change a setting afterwards;
* DuckDB's own parser must read the text as exactly one SELECT;
* every statement runs in a transaction that is always rolled back;
* the deadline interrupts the statement (``connection.interrupt()`` from a timer thread); one function
  call (``repeat('x', 10^9)``) cannot be interrupted, so the session kills the worker shortly after.

Protocol over stdin/stdout, frames of a 4-byte big-endian length and a pickle payload (values such as
dates, decimals and lists cross as they are; only this worker, started by the session, writes them):
the worker sends ``("ready",)`` once it has opened the database (or ``("error", kind, message)``);
requests ``("run", sql, max_rows, max_bytes, timeout_s)`` and ``("columns", [parts])``; replies
``("ok", columns, rows, truncated)`` / ``("ok", [(name, type)])`` or ``("error", kind, message)``.
"""

from __future__ import annotations

import contextlib
import pickle
import sys
import threading
from pathlib import Path
from typing import IO, Any

from watchdog.errors import DatabaseUnavailable, QueryError, QueryRefused, QueryTimeout, SandboxError
from watchdog.redact import redact
from watchdog.sandbox.fetching import fetch_capped
from watchdog.sandbox.file_tables import FileTableError, expand, reader_for
from watchdog.sandbox.limits import DUCKDB_MEMORY_LIMIT
from watchdog.sandbox.worker_pipe import read_frame, write_frame

#: settings given when the connection opens: nothing is fetched or loaded from outside
_CONNECT_CONFIG: dict[str, Any] = {"autoinstall_known_extensions": False, "autoload_known_extensions": False,
                                   "memory_limit": DUCKDB_MEMORY_LIMIT}


class LockedDuckDB:
    """The connection inside the worker: opened, given its views, locked down; one statement at a time."""

    max_batch = 500

    def __init__(self, path: str, files: dict[str, str]):
        self.path = path
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

    def open(self) -> None:
        with self._lock:
            self._connection()

    def run(self, sql: str, *, max_rows: int, max_bytes: int, timeout_s: float) -> tuple[list[str], list, bool]:
        import duckdb

        with self._lock:
            con = self._connection()
            fired = threading.Event()

            def interrupt() -> None:
                fired.set()
                con.interrupt()

            timer = threading.Timer(timeout_s, interrupt)
            timer.daemon = True
            failure: Exception | None = None
            columns: list[str] = []
            rows: list[tuple[Any, ...]] = []
            truncated = False
            try:
                _one_select(con, sql)
                con.execute("BEGIN TRANSACTION")
                timer.start()
                con.execute(sql)
                if con.description:
                    columns = [d[0] for d in con.description]
                    rows, truncated = fetch_capped(con, max_rows, max_bytes, max_batch=self.max_batch)
                    if truncated:
                        con.interrupt()  # rows are still being made: stop them, do not wait for them
            except duckdb.Error as exc:
                failure = _translate(exc, timeout_s, fired.is_set())
            except QueryRefused as exc:
                failure = exc
            finally:
                timer.cancel()
                with contextlib.suppress(duckdb.Error):  # nothing was begun, or the failed statement ended it
                    con.execute("ROLLBACK")
            if failure is not None:
                raise failure
            return columns, rows, truncated

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


def _one_select(con: Any, sql: str) -> None:
    """DuckDB's own parser must read ``sql`` as exactly one SELECT, as the sandbox's parser did."""
    import duckdb

    statements = con.extract_statements(sql)
    if len(statements) != 1:
        raise QueryRefused(f"the database reads {len(statements)} statements, exactly one is allowed")
    if statements[0].type != duckdb.StatementType.SELECT:
        raise QueryRefused(f"the database reads a {statements[0].type.name} statement, only a read is allowed")


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


# --------------------------------------------------------------------------- framing and the loop

#: exception class -> the kind the session raises again
KINDS: dict[type[SandboxError], str] = {QueryTimeout: "timeout", QueryRefused: "refused",
                                        DatabaseUnavailable: "unavailable", QueryError: "error"}


def send(stream: IO[bytes], message: tuple) -> None:
    write_frame(stream, pickle.dumps(message, protocol=pickle.HIGHEST_PROTOCOL))


def receive(stream: IO[bytes]) -> tuple | None:
    """The next message, or None at the end of the stream."""
    payload = read_frame(stream)
    return None if payload is None else pickle.loads(payload)


def _error(exc: SandboxError) -> tuple:
    kind = next((k for cls, k in KINDS.items() if isinstance(exc, cls)), "error")
    return ("error", kind, str(exc))


def _serve(db: LockedDuckDB, request: tuple) -> tuple:
    try:
        if request[0] == "run":
            result = db.run(request[1], max_rows=request[2], max_bytes=request[3], timeout_s=request[4])
            return ("ok", result[0], result[1], result[2])
        return ("ok", db.catalog_columns(list(request[1])))
    except SandboxError as exc:
        return _error(exc)


def main() -> None:
    requests, replies = sys.stdin.buffer, sys.stdout.buffer
    sys.stdout = sys.stderr  # nothing but replies may reach the reply channel
    opening = receive(requests)
    if opening is None:
        return
    db = LockedDuckDB(opening[1], dict(opening[2]))
    try:
        db.open()
    except SandboxError as exc:
        send(replies, _error(exc))
        return
    send(replies, ("ready",))
    while True:
        request = receive(requests)
        if request is None or request[0] not in ("run", "columns"):
            db.close()
            return
        send(replies, _serve(db, request))


if __name__ == "__main__":  # pragma: no cover - started by DuckDBSession
    main()
