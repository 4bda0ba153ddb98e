"""Run a scan's statements on a second connection when they are slow (SQLite).

The scanner's statements are independent reads: one aggregate pass per table, a ``GROUP BY``, an anti-join.
SQLite runs each of them on one core, so on a big table a scan that sends them one by one leaves the other
cores idle. Here a scan starts on its own sandbox, and when a statement has run for :data:`HELPER_AFTER_S`
while others wait, a helper opens a second sandbox on the same file (:meth:`Sandbox.sibling`: the same
read-only worker, limits and deadline) and takes the waiting statements, up to ``parallel`` sandboxes in all.
A small scan never opens one (its start-up stays what it was); the figures are the same either way, since
each statement's result does not depend on where it ran (tests/test_scan_parallel.py).

Ctrl-C stops the helpers' running statements (their workers are killed) and they take no more; the
scanner then marks what did not finish as not run, as it does for one sandbox.
"""

from __future__ import annotations

import threading
from collections import deque
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Generic, TypeVar

from watchdog.defaults import DEFAULT_PARALLEL

if TYPE_CHECKING:
    from watchdog.sandbox import Sandbox

#: seconds a statement runs before a helper sandbox is opened for the statements still waiting
HELPER_AFTER_S = 0.25
#: dialects whose engine runs a statement on one core (PostgreSQL, DuckDB and Spark spread one statement
#: over the cores themselves)
PARALLEL_DIALECTS = frozenset({"sqlite", "strictsqlite"})

S = TypeVar("S")


def run_statements(sandbox: Sandbox, statements: Sequence[S], run_one: Callable[[Sandbox, S], None], *,
                   parallel: int = DEFAULT_PARALLEL,
                   on_start: Callable[[int, S], None] | None = None, stop: threading.Event | None = None,
                   heavy: Callable[[S], bool] | None = None) -> None:
    """``run_one(box, statement)`` for every statement, on ``sandbox`` and, when statements are slow, on up
    to ``parallel - 1`` helper sandboxes. ``on_start(i, statement)`` is called as the i-th statement starts.
    Where helpers may be opened, the statements ``heavy`` picks (joins, GROUP BYs) are started first, so the
    longest one does not start last while the other sandbox has nothing left to do.
    KeyboardInterrupt sets ``stop`` (so ``run_one`` can tell a statement that failed because it was stopped),
    stops the helpers' statements, then propagates."""
    possible = sandbox.dialect in PARALLEL_DIALECTS and sandbox.can_open_sibling()
    allowed = max(1, parallel) - 1 if possible else 0
    if heavy is not None and allowed:
        statements = [s for s in statements if heavy(s)] + [s for s in statements if not heavy(s)]
    Pool(sandbox, statements, run_one, allowed, on_start, stop).run()


def split_for(sandbox: Sandbox, parallel: int = DEFAULT_PARALLEL) -> int:
    """How many sandboxes a scan's statements may run on at once: what the planner may cut a long pass into."""
    return max(1, parallel) if sandbox.dialect in PARALLEL_DIALECTS and sandbox.can_open_sibling() else 1


class Pool(Generic[S]):
    """The waiting statements and the sandboxes taking them (see the module's docstring)."""

    def __init__(self, sandbox: Sandbox, statements: Sequence[S], run_one: Callable[[Sandbox, S], None],
                 allowed: int, on_start: Callable[[int, S], None] | None, stop: threading.Event | None = None):
        self.sandbox = sandbox
        self.waiting: deque[S] = deque(statements)
        self.run_one = run_one
        self.on_start = on_start
        self.started = 0
        self.lock = threading.Lock()
        self.stop = stop or threading.Event()
        self.allowed = allowed  # helper sandboxes it may open
        self.helpers: list[threading.Thread] = []
        self.boxes: list[Sandbox] = []
        self.error: BaseException | None = None  # a helper's unexpected error, raised in the caller's thread

    def take(self) -> S | None:
        with self.lock:
            if self.stop.is_set() or not self.waiting:
                return None
            statement = self.waiting.popleft()
            i, self.started = self.started, self.started + 1
        if self.on_start is not None:
            self.on_start(i, statement)
        return statement

    def run(self) -> None:
        try:
            while (statement := self.take()) is not None:
                timer = self._helper_timer()
                try:
                    self.run_one(self.sandbox, statement)
                finally:
                    if timer is not None:
                        timer.cancel()
            for thread in list(self.helpers):
                thread.join()
        except KeyboardInterrupt:
            self.stop.set()
            with self.lock:
                boxes = list(self.boxes)
            for box in boxes:
                box.interrupt()
            for thread in list(self.helpers):
                thread.join(timeout=10)
            raise
        if self.error is not None:
            raise self.error

    def _helper_timer(self) -> threading.Timer | None:
        """A timer that opens a helper if the statement just started is still running after HELPER_AFTER_S."""
        with self.lock:
            if len(self.helpers) >= self.allowed or not self.waiting:
                return None
        timer = threading.Timer(HELPER_AFTER_S, self._start_helper)
        timer.daemon = True
        timer.start()
        return timer

    def _start_helper(self) -> None:
        with self.lock:
            if self.stop.is_set() or not self.waiting or len(self.helpers) >= self.allowed:
                return
            thread = threading.Thread(target=self._helper, name=f"watchdog-scan-{len(self.helpers) + 1}",
                                      daemon=True)
            self.helpers.append(thread)
        thread.start()

    def _helper(self) -> None:
        box = self.sandbox.sibling()
        if box is None:
            return
        with self.lock:
            self.boxes.append(box)
        try:
            while (statement := self.take()) is not None:
                self.run_one(box, statement)
        except BaseException as exc:  # noqa: BLE001 -- a bug: stop taking statements, raise it in the caller
            self.stop.set()
            self.error = exc
        finally:
            box.close()
