"""The SQLite session: every statement runs in a worker process the session kills when it is late.

See :mod:`watchdog.sandbox.sqlite_worker` for what runs inside the worker (read-only connection,
authorizer, progress handler, caps) and why a process: one SQLite function call cannot be
interrupted in process.
"""

from __future__ import annotations

import importlib.util
import queue
import subprocess
import sys
import threading
import time
import weakref
from pathlib import Path
from typing import TYPE_CHECKING, Any

from watchdog.errors import DatabaseUnavailable, QueryError, QueryRefused, QueryTimeout
from watchdog.sandbox import sqlite_worker
from watchdog.sandbox.limits import CONNECT_TIMEOUT_S, DEADLINE_GRACE_S
from watchdog.sandbox.result import QueryResult
from watchdog.sandbox.worker_pipe import kill, pipe, read_replies

if TYPE_CHECKING:
    from sqlalchemy.engine import URL


class SQLiteSession:
    """SQLite, read-only, in a worker process (see :mod:`watchdog.sandbox.sqlite_worker`).

    The worker starts on the first query and serves the session's statements one at a time.
    A statement that has not answered ``DEADLINE_GRACE_S`` after its deadline is stuck in a
    single SQLite call that nothing else can interrupt: the worker is killed (its CPU and memory
    with it), the statement fails with QueryTimeout, and the next query starts a new worker.
    """

    dialect_name = "sqlite"

    def __init__(self, url: URL | str):
        """``url``: a parsed SQLAlchemy URL, or the file path itself."""
        path = url if isinstance(url, str) else (url.database or "")
        # a relative path is the caller's: the worker (perhaps started elsewhere, and reused) gets it whole
        self.path = str(Path(path).expanduser().absolute()) if path and path != ":memory:" else path
        self._lock = threading.Lock()
        self._worker: _SQLiteWorker | None = None

    def _file(self) -> Path:
        if not self.path or self.path == ":memory:":
            raise DatabaseUnavailable("an in-memory SQLite database has nothing to check; give a file path")
        path = Path(self.path).expanduser()
        if not path.is_file():
            raise DatabaseUnavailable(f"SQLite database file not found: {path}")
        return path

    def run(self, sql: str, *, max_rows: int, max_bytes: int, timeout_s: float,
            parallel: bool = False) -> QueryResult:
        with self._lock:
            path = self._file()
            if self._worker is None or not self._worker.alive():
                self._stop_worker()
                self._worker = _take_spare() or _SQLiteWorker()
                self._worker.wait_ready()
            start = time.monotonic()
            reply = self._worker.call(("run", str(path), sql, int(max_rows), int(max_bytes), float(timeout_s)),
                                      wait_s=timeout_s + DEADLINE_GRACE_S)
            if reply is None or reply is _LATE:
                self._stop_worker()
                if reply is _LATE:
                    raise QueryTimeout(f"query cancelled after {timeout_s:g}s (timeout)")
                raise QueryError("the SQLite worker stopped while running the statement (out of memory?)")
            if reply[0] == "ok":
                _, columns, rows, truncated = reply
                return QueryResult(list(columns), [tuple(row) for row in rows], bool(truncated),
                                   time.monotonic() - start, sql)
            _, kind, message = reply
            if kind == "timeout":
                raise QueryTimeout(f"query cancelled after {timeout_s:g}s (timeout)")
            if kind == "refused":
                raise QueryRefused(message)
            if kind == "unavailable":
                raise DatabaseUnavailable(message)
            raise QueryError(message)

    def _stop_worker(self) -> None:
        if self._worker is not None:
            self._worker.stop()
            self._worker = None

    def close(self) -> None:
        with self._lock:
            self._stop_worker()

    def interrupt(self) -> None:
        """Kill the worker now, without waiting for the running statement (which then fails)."""
        worker = self._worker
        if worker is not None:
            worker.stop()


_LATE = object()  # the worker did not answer in time
#: a worker started ahead of need by :func:`prestart` (at most one), taken by the next session that needs one
_SPARE: list[_SQLiteWorker] = []


def prestart() -> None:
    """Start a SQLite worker now, without waiting for it: the next session's first query takes it, so the
    worker's start-up (a fresh Python, ~40 ms) overlaps what the caller does meanwhile (importing the
    scanner, reading suites). A worker that is never taken is killed at exit, like every worker. It is the
    same worker as any other: each statement still sets its memory cap, deadline and read-only checks."""
    if _SPARE:
        return
    try:
        _SPARE.append(_SQLiteWorker())
    except DatabaseUnavailable:  # the session will start its own and report the problem
        return


def prestart_for(url: str) -> None:
    """:func:`prestart` when ``url`` is a plain ``sqlite:///`` URL of an existing file (else nothing)."""
    prefix = "sqlite:///"
    if url.startswith(prefix) and not any(c in url for c in "?%#") and Path(url[len(prefix):]).is_file():
        prestart()


def _take_spare() -> _SQLiteWorker | None:
    while _SPARE:
        try:
            worker = _SPARE.pop()
        except IndexError:  # another thread took it
            return None
        if worker.alive():
            return worker
        worker.stop()
    return None


class _SQLiteWorker:
    """The worker process and a thread that reads its replies (:meth:`wait_ready` before the first call)."""

    _ready = False

    def __init__(self) -> None:
        import watchdog

        paths = [str(Path(watchdog.__file__).resolve().parent.parent)]
        regex_spec = importlib.util.find_spec("regex")
        if regex_spec is not None and regex_spec.origin:
            paths.append(str(Path(regex_spec.origin).resolve().parent.parent))
        boot = f"import sys; sys.path[:0] = {paths!r}; from watchdog.sandbox.sqlite_worker import main; main()"
        try:
            # -I: no environment or user site; -S: no site-packages beyond the paths above (starts in ~40 ms)
            self._proc = subprocess.Popen([sys.executable, "-I", "-S", "-c", boot], stdin=subprocess.PIPE,
                                          stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, bufsize=0)
        except OSError as exc:
            raise DatabaseUnavailable(f"cannot start the SQLite worker: {exc}") from None
        self._replies: queue.Queue = queue.Queue()
        # the reader holds no reference to self, so that a dropped session can be collected (and its worker killed)
        threading.Thread(target=read_replies, args=(self._proc.stdout, self._replies, sqlite_worker.receive),
                         name="watchdog-sqlite-worker", daemon=True).start()
        # a Sandbox that is dropped without close() must not leave its worker behind
        self._finalizer = weakref.finalize(self, kill, self._proc)

    def wait_ready(self) -> None:
        """Wait for the worker's ``("ready",)`` (once); a worker that does not say it is stopped."""
        if self._ready:
            return
        if self._next(CONNECT_TIMEOUT_S) != ("ready",):
            self.stop()
            raise DatabaseUnavailable("the SQLite worker did not start")
        self._ready = True

    def _next(self, wait_s: float) -> Any:
        try:
            return self._replies.get(timeout=max(wait_s, 0.0))
        except queue.Empty:
            return _LATE

    def alive(self) -> bool:
        return self._proc.poll() is None

    def call(self, request: tuple, *, wait_s: float) -> Any:
        """The worker's reply, None if it died, or _LATE if it did not answer within ``wait_s``."""
        try:
            sqlite_worker.send(pipe(self._proc.stdin), request)
        except OSError:
            return None
        return self._next(wait_s)

    def stop(self) -> None:
        self._finalizer()
