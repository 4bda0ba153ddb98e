"""SQLite statements run in this small worker process, which the session kills when it is late.

SQLite is a library: it runs inside the calling process, and one function call is one step of its
virtual machine. Neither the progress handler nor ``sqlite3_interrupt`` can stop a single call
that takes minutes (``printf('%!.*c', 1000000000, 'x')``, ``instr``/``replace``/``trim`` on
megabyte operands, which are O(n*m), or a back-tracking regular expression). So the sandbox runs
every SQLite statement here, in a worker that imports only the standard library, and
:class:`watchdog.sandbox.sessions.SQLiteSession` kills it when it has not answered shortly after
the deadline. The worker's address space is capped as well, so no SQLite
statement can take watchdog's memory.

Inside the worker the database is opened read-only, as before: ``mode=ro``, ``PRAGMA query_only``,
an authorizer that allows reads only, a progress handler that interrupts the statement at the
deadline, and ``SQLITE_LIMIT_LENGTH`` so that no string or blob grows past twice the byte cap.

Protocol over stdin/stdout, frames of a 4-byte big-endian length and a ``marshal`` payload:

* the worker first sends ``("ready",)``;
* request ``("run", path, sql, max_rows, max_bytes, timeout_s)``;
* reply ``("ok", columns, rows, truncated)`` or ``("error", kind, message)``, kind one of
  ``refused``, ``timeout``, ``error``, ``unavailable``.
"""

from __future__ import annotations

import hashlib
import marshal
import re
import sqlite3
import sys
import time
from functools import lru_cache
from pathlib import Path
from urllib.parse import quote

from watchdog.sandbox.fetching import fetch_capped
from watchdog.sandbox.functions import SQLITE_ALLOWED
from watchdog.sandbox.worker_pipe import read_frame, write_frame

TYPE_CHECKING = False  # not typing.TYPE_CHECKING: importing typing would slow the start
if TYPE_CHECKING:
    from typing import IO, Any

#: no string or blob may grow past max(MIN_VALUE_LIMIT, 2 * max_bytes) bytes
MIN_VALUE_LIMIT = 8 * 1024 * 1024
#: the worker's address space is capped at max(MEMORY_LIMIT, 8 * the value limit) (POSIX only)
MEMORY_LIMIT = 1024 * 1024 * 1024
#: how long a statement may wait for a writer's lock, at most (and never past its deadline)
BUSY_TIMEOUT_S = 10

ALLOWED_ACTIONS = {
    sqlite3.SQLITE_SELECT,
    sqlite3.SQLITE_READ,
    sqlite3.SQLITE_FUNCTION,
    getattr(sqlite3, "SQLITE_RECURSIVE", 33),
}
#: the functions SQLite may call: the parser's allowlist, and the JSON operators SQLite runs as
#: functions; any other (load_extension, readfile, a function from an extension) is denied here too
ALLOWED_FUNCTIONS = SQLITE_ALLOWED | {"->", "->>"}
#: PRAGMAs that only read (none of them can set a value), allowed as table-valued functions:
#: SELECT * FROM pragma_table_info('t')
READ_PRAGMAS = {
    "table_info", "table_xinfo", "table_list", "index_list", "index_info", "index_xinfo", "foreign_key_list",
    "database_list", "collation_list", "function_list", "module_list", "pragma_list", "compile_options",
    "page_count", "freelist_count", "foreign_key_check", "integrity_check", "quick_check",
}
#: SQLite registers an eponymous virtual table (pragma_*) by "updating" its in-memory schema; a real
#: UPDATE of sqlite_master is refused by SQLite itself (and by mode=ro, query_only and the parser)
SCHEMA_TABLES = {"sqlite_master", "sqlite_schema"}


def authorizer(action: int, arg1: str | None, arg2: str | None, _db: str | None, _trigger: str | None) -> int:
    if action == sqlite3.SQLITE_FUNCTION and (arg2 or "").lower() not in ALLOWED_FUNCTIONS:
        return sqlite3.SQLITE_DENY
    if action in ALLOWED_ACTIONS:
        return sqlite3.SQLITE_OK
    if action == sqlite3.SQLITE_PRAGMA and (arg1 or "").lower() in READ_PRAGMAS:
        return sqlite3.SQLITE_OK
    if action == sqlite3.SQLITE_UPDATE and (arg1 or "").lower() in SCHEMA_TABLES:
        return sqlite3.SQLITE_OK
    return sqlite3.SQLITE_DENY


# --------------------------------------------------------------------------- REGEXP

@lru_cache(maxsize=256)
def _compiled(pattern: str) -> re.Pattern[str]:
    return re.compile(pattern)


def sqlite_regexp(pattern: str | None, value: Any) -> int | None:
    """SQLite's ``value REGEXP pattern``: a case-sensitive search, as PostgreSQL's ``~``.

    Plain ``re``, compiled once per pattern: a pattern that back-tracks for ever is stopped by the
    session, which kills this worker shortly after the deadline.
    """
    if pattern is None or value is None:
        return None
    if value.__class__ is not str:
        value = value.decode("utf-8", "replace") if isinstance(value, bytes) else str(value)
    return 1 if _compiled(pattern).search(value) else 0


def sqlite_md5(value: Any) -> str | None:
    """``md5(text)``: 32 lower-case hex digits of the UTF-8 text, as PostgreSQL, MySQL, DuckDB and Spark give
    (the reconciler's row hashes)."""
    if value is None:
        return None
    data = value if isinstance(value, bytes) else str(value).encode("utf-8")
    return hashlib.md5(data, usedforsecurity=False).hexdigest()


def sqlite_md5_int(value: Any, start: Any, digits: Any) -> int | None:
    """``md5_int(text, start, digits)``: hex digits ``start``.. (1-based, at most 15) of ``md5(text)`` as a number:
    the reconciler's row hash in one call per row."""
    if value is None or not isinstance(start, int) or not isinstance(digits, int) or not 0 < digits <= 15:
        return None
    data = value if isinstance(value, bytes) else str(value).encode("utf-8")
    return int(hashlib.md5(data, usedforsecurity=False).hexdigest()[start - 1:start - 1 + digits] or "0", 16)


# --------------------------------------------------------------------------- the worker


class Unavailable(Exception):
    pass


class Worker:
    """One read-only connection (per database path) and the statements run on it."""

    def __init__(self) -> None:
        self.path: str | None = None
        self.conn: sqlite3.Connection | None = None
        self.deadline = float("inf")

    def connect(self, path: str) -> sqlite3.Connection:
        if self.conn is not None and self.path == path:
            return self.conn
        self.close()
        file = Path(path).expanduser()
        if not file.is_file():
            raise Unavailable(f"SQLite database file not found: {file}")
        uri = f"file:{quote(str(file.resolve()))}?mode=ro"
        try:
            conn = sqlite3.connect(uri, uri=True, timeout=BUSY_TIMEOUT_S)
            conn.execute("PRAGMA query_only = ON")
        except sqlite3.Error as exc:
            raise Unavailable(f"cannot open SQLite database {file}: {exc}") from None
        conn.create_function("regexp", 2, sqlite_regexp, deterministic=True)
        conn.create_function("md5", 1, sqlite_md5, deterministic=True)
        conn.create_function("md5_int", 3, sqlite_md5_int, deterministic=True)
        conn.set_authorizer(authorizer)
        self.conn, self.path = conn, path
        return conn


    def run(self, path: str, sql: str, max_rows: int, max_bytes: int, timeout_s: float) -> tuple:
        try:
            conn = self.connect(path)
        except Unavailable as exc:
            return ("error", "unavailable", str(exc))
        deadline = self.deadline = time.monotonic() + timeout_s
        value_limit = max(MIN_VALUE_LIMIT, 2 * max_bytes)
        _cap_memory(max(MEMORY_LIMIT, 8 * value_limit))
        conn.setlimit(sqlite3.SQLITE_LIMIT_LENGTH, value_limit)
        conn.set_authorizer(None)  # our own PRAGMA: wait for a writer's lock no longer than the deadline
        conn.execute(f"PRAGMA busy_timeout = {max(1, int(min(timeout_s, BUSY_TIMEOUT_S) * 1000))}")
        conn.set_authorizer(authorizer)
        conn.set_progress_handler(lambda: 1 if time.monotonic() > deadline else 0, 1000)
        cursor = conn.cursor()
        try:
            cursor.execute(sql)
            columns = [d[0] for d in cursor.description or []]
            rows, truncated = fetch_capped(cursor, max_rows, max_bytes, max_batch=1)  # rows stream one by one
            return ("ok", columns, rows, truncated)
        except sqlite3.Error as exc:
            return ("error", *translate(exc, time.monotonic() > deadline))
        except (sqlite3.Warning, ValueError) as exc:  # e.g. "You can only execute one statement at a time."
            return ("error", "refused", str(exc))
        except MemoryError:
            return ("error", "error", "out of memory")
        finally:
            cursor.close()
            conn.set_progress_handler(None, 0)
            self.deadline = float("inf")
            if conn.in_transaction:
                conn.rollback()

    def close(self) -> None:
        if self.conn is not None:
            self.conn.close()
            self.conn = self.path = None


def translate(exc: sqlite3.Error, past_deadline: bool) -> tuple[str, str]:
    message = str(exc)
    if past_deadline and ("interrupted" in message or "user-defined function raised exception" in message):
        return "timeout", message
    if "not authorized" in message or "readonly database" in message or "query_only" in message.lower():
        return "refused", f"the database refused it: {message}"
    if isinstance(exc, sqlite3.OperationalError) and ("unable to open" in message or "disk I/O" in message):
        return "unavailable", message
    return "error", message


def _cap_memory(limit: int) -> None:
    try:
        import resource
    except ImportError:  # pragma: no cover - not POSIX: the session's kill still bounds the time
        return
    _soft, hard = resource.getrlimit(resource.RLIMIT_AS)
    if hard != resource.RLIM_INFINITY:
        limit = min(limit, hard)
    resource.setrlimit(resource.RLIMIT_AS, (limit, hard))


# --------------------------------------------------------------------------- framing


def send(stream: IO[bytes], message: tuple) -> None:
    write_frame(stream, marshal.dumps(message))


def receive(stream: IO[bytes]) -> tuple | None:
    """The next message, or None at the end of the stream."""
    payload = read_frame(stream)
    return None if payload is None else marshal.loads(payload)

def main() -> None:
    requests, replies = sys.stdin.buffer, sys.stdout.buffer
    sys.stdout = sys.stderr  # nothing but replies may reach the reply channel
    worker = Worker()
    send(replies, ("ready",))
    while True:
        request = receive(requests)
        if request is None or request[0] != "run":
            worker.close()
            return
        send(replies, worker.run(*request[1:]))


if __name__ == "__main__":  # pragma: no cover - started by SQLiteSession
    main()
