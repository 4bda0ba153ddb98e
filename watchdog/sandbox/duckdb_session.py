"""The DuckDB session: a ``.duckdb`` file or CSV/Parquet/JSON files, read in a worker process killed when late.

What runs inside the worker (the read-only, locked-down connection and its views over the files) is in
:mod:`watchdog.sandbox.duckdb_worker`. Why a process: DuckDB runs inside the calling process, and
``connection.interrupt()`` stops a statement only between two steps; one function call such as
``repeat('x', 1000000000)`` runs on for seconds. A worker that has not answered ``DEADLINE_GRACE_S``
after the deadline is killed (its memory with it), the statement fails with QueryTimeout, and the
next statement starts a new worker.
"""

from __future__ import annotations

import os
import queue
import subprocess
import sys
import threading
import time
import weakref
from typing import Any

from watchdog.errors import DatabaseUnavailable, QueryError, QueryRefused, QueryTimeout
from watchdog.sandbox import cancel as cancelling
from watchdog.sandbox import duckdb_worker
from watchdog.sandbox.limits import CONNECT_TIMEOUT_S, DEADLINE_GRACE_S
from watchdog.sandbox.result import QueryResult
from watchdog.sandbox.worker_pipe import kill, pipe, read_replies

_ERRORS = {"timeout": QueryTimeout, "refused": QueryRefused, "unavailable": DatabaseUnavailable}
_LATE = object()  # the worker did not answer in time


def database_path(url: str) -> str:
    """The file of a ``duckdb:///path`` URL, or ``:memory:`` (``duckdb://``, ``duckdb:///:memory:``)."""
    from sqlalchemy.engine import make_url

    parsed = make_url(url)
    if parsed.query:
        raise DatabaseUnavailable("a DuckDB URL takes no options (?...): the sandbox sets them")
    return parsed.database or ":memory:"


class DuckDBSession:
    """DuckDB, read-only and locked down, in a worker process started on the first statement."""

    dialect_name = "duckdb"

    def __init__(self, url: str, files: dict[str, str] | None = None):
        path = database_path(url)
        # absolute here: the worker may not share this process's working directory
        self.path = path if path == ":memory:" else os.path.abspath(os.path.expanduser(path))
        self.files = {name: os.path.abspath(os.path.expanduser(p)) for name, p in (files or {}).items()}
        self._lock = threading.Lock()
        self._worker: _Worker | None = None

    def _call(self, request: tuple, wait_s: float) -> Any:
        if self._worker is None or not self._worker.alive():
            self._stop_worker()
            self._worker = _Worker(self.path, self.files)
        worker = self._worker
        registered = cancelling.register(worker.kill)  # a daemon stopping: the statement ends with the worker
        try:
            reply = worker.call(request, wait_s=wait_s)
        finally:
            cancelling.unregister(registered)
        if reply is None or reply is _LATE:
            self._stop_worker()
        return reply

    def run(self, sql: str, *, max_rows: int, max_bytes: int, timeout_s: float,
            parallel: bool = False) -> QueryResult:
        with self._lock:
            start = time.monotonic()
            reply = self._call(("run", sql, int(max_rows), int(max_bytes), float(timeout_s)),
                               timeout_s + DEADLINE_GRACE_S)
            if reply is _LATE:
                raise QueryTimeout(f"query cancelled after {timeout_s:g}s (timeout)")
            _raise_error(reply, timeout_s)
            _, columns, rows, truncated = reply
            return QueryResult(list(columns), [tuple(r) for r in rows], bool(truncated), time.monotonic() - start, sql)

    def catalog_columns(self, table: list[str]) -> list[tuple[str, str]]:
        """``[(column, DuckDB type)]`` of ``table`` (its dotted parts), in table order; [] when there is none."""
        with self._lock:
            reply = self._call(("columns", list(table)), CONNECT_TIMEOUT_S)
            if reply is _LATE:
                raise QueryTimeout("reading the catalogue took too long")
            _raise_error(reply, CONNECT_TIMEOUT_S)
            return [(str(name), str(kind)) for name, kind in reply[1]]

    def _stop_worker(self) -> None:
        if self._worker is not None:
            self._worker.kill()
            self._worker = None

    def close(self) -> None:
        with self._lock:
            self._stop_worker()


def _raise_error(reply: Any, timeout_s: float) -> None:
    if reply is None:
        raise QueryError("the DuckDB worker stopped while running the statement (out of memory?)")
    if reply[0] == "error":
        _, kind, message = reply
        raise _ERRORS.get(kind, QueryError)(message)


class _Worker:
    """The worker process, opened on the database and files, and a thread that reads its replies."""

    def __init__(self, path: str, files: dict[str, str]):
        try:
            # -I: no environment variables or user site; the interpreter's own site-packages hold duckdb
            boot = f"import sys; sys.path.insert(0, {_package_root()!r}); from watchdog.sandbox.duckdb_worker " \
                   "import main; main()"
            self._proc = subprocess.Popen([sys.executable, "-I", "-c", boot], stdin=subprocess.PIPE,
                                          stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, bufsize=0)
        except OSError as exc:
            raise DatabaseUnavailable(f"cannot start the DuckDB worker: {exc}") from None
        self._replies: queue.Queue = queue.Queue()
        threading.Thread(target=read_replies, args=(self._proc.stdout, self._replies, duckdb_worker.receive),
                         name="watchdog-duckdb-worker", daemon=True).start()
        self._finalizer = weakref.finalize(self, kill, self._proc)
        reply = self.call(("open", path, files), wait_s=CONNECT_TIMEOUT_S * 3)  # CSV sniffing reads samples
        if reply is None or reply is _LATE or reply[0] != "ready":
            self.kill()
            if isinstance(reply, tuple) and reply[0] == "error":
                _raise_error(reply, 0)
            raise DatabaseUnavailable("the DuckDB worker did not start (is duckdb installed? "
                                      "pip install 'watchdog-dq[duckdb]')")

    def alive(self) -> bool:
        return self._proc.poll() is None

    def call(self, request: tuple, *, wait_s: float) -> Any:
        """The worker's reply, None if it died, or _LATE if it did not answer within ``wait_s``."""
        try:
            duckdb_worker.send(pipe(self._proc.stdin), request)
        except OSError:
            return None
        try:
            return self._replies.get(timeout=max(wait_s, 0.0))
        except queue.Empty:
            return _LATE

    def kill(self) -> None:
        self._finalizer()


def _package_root() -> str:
    """The folder holding the ``watchdog`` package, so that ``-m watchdog.sandbox.duckdb_worker`` finds it."""
    from pathlib import Path

    import watchdog

    return str(Path(watchdog.__file__).resolve().parent.parent)
