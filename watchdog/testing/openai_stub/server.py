"""``StubOpenAI``: the scripted server's lifecycle (start/close in a background thread), its
queues of steps (the FIFO script and the per-marker queues) and the requests it recorded."""

from __future__ import annotations

import contextlib
import itertools
import socket
import threading
import uuid
from collections.abc import Iterable, Mapping
from email.message import Message
from typing import Any, Literal

from .http_handler import StubHTTPServer, StubRequestHandler
from .recording import request_record
from .routing import StepQueue, find_marker
from .steps import Step, as_step


class StubOpenAI:
    """A scripted OpenAI-compatible server on ``127.0.0.1`` (use as a context manager).

    After :meth:`start` / ``__enter__``: ``base_url`` (``http://127.0.0.1:PORT/v1``) and ``port``.

    ``requests`` holds one dict per request received, in arrival order, with the keys
    ``method``, ``path``, ``headers`` (lower-cased; secret headers' values replaced by
    ``"present"``), ``authorization`` (``"present"`` or ``None``), ``body`` (the parsed JSON),
    ``marker`` (the role marker found, or ``None``), ``model``, ``max_tokens``,
    ``max_completion_tokens``, ``temperature``, ``stream``, ``has_tools``, ``tool_names``,
    ``tool_choice``, ``has_response_format``, ``response_format_type`` and ``served`` (what the
    stub answered: ``"reply"``, ``"tool_call"``, ``"structured"``, ``"error"``, ``"drop"``,
    ``"slow(2)>reply"``, or ``"stub-error"`` when no step was left)."""

    def __init__(
        self,
        script: Iterable[Step | str] = (),
        *,
        by_marker: Mapping[str, Iterable[Step | str]] | None = None,
        when_empty: Literal["repeat", "error"] = "repeat",
        models: Iterable[str] = ("gpt-test",),
        host: str = "127.0.0.1",
        port: int = 0,
    ):
        if when_empty not in ("repeat", "error"):
            raise ValueError("when_empty must be 'repeat' or 'error'")
        self.when_empty = when_empty
        self.host = host
        self._requested_port = port
        self._lock = threading.Lock()
        self._queue = StepQueue("script", script)
        self._marker_queues: dict[str, StepQueue] = {
            m: StepQueue(repr(m), steps) for m, steps in (by_marker or {}).items()}
        self._models: list[str] = list(models)
        self.requests: list[dict[str, Any]] = []
        self.errors: list[str] = []  # internal failures of the stub itself (should stay empty)
        self._ids = itertools.count(1)
        self._stopping = threading.Event()
        self._server: StubHTTPServer | None = None
        self._thread: threading.Thread | None = None
        self._conns: set[socket.socket] = set()
        self._handler_threads: set[threading.Thread] = set()
        self.port: int | None = None

    # ---- lifecycle -------------------------------------------------------------------------------

    def start(self) -> StubOpenAI:
        if self._server is not None:
            return self
        self._stopping.clear()
        server = StubHTTPServer((self.host, self._requested_port), StubRequestHandler)
        server.stub = self
        self._server = server
        self.port = server.server_address[1]
        self._thread = threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.05},
                                        name=f"openai-stub-{self.port}", daemon=True)
        self._thread.start()
        return self

    def close(self) -> None:
        server, self._server = self._server, None
        if server is None:
            return
        self._stopping.set()  # wakes slow() steps
        server.shutdown()
        with self._lock:
            conns, threads = list(self._conns), list(self._handler_threads)
        for conn in conns:  # idle keep-alive connections would otherwise block their threads
            with contextlib.suppress(OSError):
                conn.shutdown(socket.SHUT_RDWR)
        server.server_close()
        if self._thread is not None:
            self._thread.join(timeout=5)
        for thread in threads:
            thread.join(timeout=5)

    def __enter__(self) -> StubOpenAI:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.close()

    @property
    def base_url(self) -> str:
        if self.port is None:
            raise RuntimeError("the stub is not started (use `with StubOpenAI(...) as stub:` or .start())")
        return f"http://{self.host}:{self.port}/v1"

    # ---- scripting -------------------------------------------------------------------------------

    def enqueue(self, *steps: Step | str, marker: str | None = None) -> None:
        """Append steps to the FIFO script, or to ``marker``'s queue (created if new)."""
        with self._lock:
            if marker is None:
                queue = self._queue
            else:
                queue = self._marker_queues.setdefault(marker, StepQueue(repr(marker), ()))
            queue.pending.extend(as_step(s) for s in steps)

    @property
    def pending(self) -> dict[str | None, int]:
        """Steps not yet served, per queue (``None`` is the FIFO script)."""
        with self._lock:
            out: dict[str | None, int] = {None: len(self._queue.pending)}
            out.update({m: len(q.pending) for m, q in self._marker_queues.items()})
            return out

    @property
    def chat_requests(self) -> list[dict[str, Any]]:
        """The recorded ``POST .../chat/completions`` requests only."""
        return [r for r in self.requests if r["path"].endswith("/chat/completions")]

    @property
    def models(self) -> list[str]:
        with self._lock:
            return list(dict.fromkeys(self._models))

    # ---- request handling (called from handler threads) ------------------------------------------

    def _track(self, conn: socket.socket, add: bool) -> None:
        with self._lock:
            if add:
                self._conns.add(conn)
                self._handler_threads.add(threading.current_thread())
            else:
                self._conns.discard(conn)
                self._handler_threads.discard(threading.current_thread())

    def _find_marker(self, body: dict) -> tuple[str | None, bool]:
        """(marker, known): a configured marker if one occurs, else any ``[role:...]`` tag."""
        with self._lock:
            markers = list(self._marker_queues)
        return find_marker(body, markers)

    def _record(self, method: str, path: str, headers: Mapping[str, str] | Message, body: Any) -> dict[str, Any]:
        marker = self._find_marker(body)[0] if isinstance(body, dict) else None
        record = request_record(method, path, headers, body, marker)
        with self._lock:
            if isinstance(record["model"], str):
                self._models.append(record["model"])
            self.requests.append(record)
        return record

    def _next_step(self, body: dict) -> Step:
        marker, known = self._find_marker(body)
        with self._lock:
            queue = self._marker_queues[marker] if known and marker is not None else self._queue
            return queue.take(body, self.when_empty)

    def _new_id(self, prefix: str) -> str:
        return f"{prefix}-{next(self._ids)}{uuid.uuid4().hex[:12]}"
