"""A scripted, OpenAI-compatible HTTP server for tests and benchmarks (standard library only).

It is a real server: it binds ``127.0.0.1`` on a free port, speaks HTTP/1.1 through
``http.server.ThreadingHTTPServer`` in a background thread, and answers the Chat Completions
API the way the ``openai`` client (and therefore ``langchain_openai.ChatOpenAI``) expects,
both as one JSON document and, when the request asks for ``"stream": true``, as an SSE stream.

What it answers is scripted by the caller, one *step* per request::

    from watchdog.testing.openai_stub import StubOpenAI, reply, tool_call, structured, error, slow, drop

    with StubOpenAI([reply("hello", usage=(12, 3)), error(429, "slow down")]) as stub:
        llm = ChatOpenAI(base_url=stub.base_url, api_key="sk-test", model="gpt-test", max_retries=0)
        ...
        stub.requests[0]["max_completion_tokens"]

Routing
    * ``script=[...]`` is a FIFO queue: each request takes the next step.
    * ``by_marker={"[role:evaluator]": [...], ...}`` adds one queue per marker. A request goes to
      the queue of the marker found in its messages' text (system/developer messages are searched
      first, then all messages; the earliest occurrence wins). Requests without a known marker go
      to ``script``.
    * A step may carry ``when=`` (a predicate on the JSON body, or a string that must occur in the
      messages' text). Within a queue, the earliest pending step whose ``when`` accepts the
      request is served first; otherwise the earliest pending step without ``when``.
    * When a queue is exhausted, its last served step is repeated (``when_empty="repeat"``, the
      default) or the request is answered ``500`` with a message saying which queue ran dry
      (``when_empty="error"``).

Everything received is recorded in ``stub.requests`` (the Authorization header's value never is:
it is stored as ``"present"``).
"""

from __future__ import annotations

import argparse
import itertools
import json
import re
import socket
import socketserver
import sys
import threading
import time
import uuid
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, Literal

__all__ = [
    "Step",
    "StubOpenAI",
    "drop",
    "error",
    "reply",
    "slow",
    "structured",
    "tool_call",
]

Matcher = Callable[[dict], bool] | str | None
Usage = tuple[int, int] | Mapping[str, int] | None

#: Headers whose values are never recorded.
_SECRET_HEADERS = frozenset({"authorization", "api-key", "x-api-key", "openai-api-key", "proxy-authorization"})
_ROLE_MARKER = re.compile(r"\[role:[^\]\s]+\]")
_DEFAULT_ERROR_TYPES = {
    400: ("invalid_request_error", None),
    401: ("authentication_error", "invalid_api_key"),
    403: ("permission_denied_error", None),
    404: ("not_found_error", "model_not_found"),
    408: ("timeout_error", None),
    409: ("conflict_error", None),
    422: ("invalid_request_error", None),
    429: ("rate_limit_error", "rate_limit_exceeded"),
}


# --------------------------------------------------------------------------------------------------
# Steps


@dataclass(frozen=True)
class Step:
    """One scripted answer. Build steps with :func:`reply`, :func:`tool_call`, :func:`structured`,
    :func:`error`, :func:`slow` and :func:`drop` rather than directly."""

    kind: Literal["reply", "tool_call", "structured", "error", "slow", "drop"]
    text: str | None = None
    calls: tuple[tuple[str, Any, str | None], ...] = ()
    obj: Any = None
    name: str | None = None
    status: int = 200
    message: str = ""
    error_type: str | None = None
    code: str | None = None
    headers: tuple[tuple[str, str], ...] = ()
    seconds: float = 0.0
    then: Step | None = None
    usage: Usage = None
    finish_reason: str | None = None
    when: Matcher = field(default=None, compare=False)

    def describe(self) -> str:
        if self.kind == "slow":
            return f"slow({self.seconds:g})>" + (self.then.describe() if self.then else "reply")
        return self.kind


def reply(text: str = "", *, usage: Usage = None, finish_reason: str = "stop", when: Matcher = None) -> Step:
    """An assistant message with ``content=text``. ``usage=(prompt_tokens, completion_tokens)``;
    without it, rough word counts are reported. ``finish_reason="length"`` simulates truncation."""
    return Step("reply", text=text, usage=usage, finish_reason=finish_reason, when=when)


def tool_call(
    name: str | Sequence[tuple[str, Any]],
    args: Mapping[str, Any] | str | None = None,
    *,
    content: str | None = None,
    usage: Usage = None,
    call_id: str | None = None,
    when: Matcher = None,
) -> Step:
    """An assistant message with ``tool_calls`` and ``finish_reason="tool_calls"``.

    ``tool_call("lookup", {"q": "x"})`` makes one call; ``tool_call([("a", {...}), ("b", {...})])``
    makes several. ``args`` may be a string, sent verbatim (e.g. to simulate malformed JSON)."""
    if isinstance(name, str):
        calls: tuple[tuple[str, Any, str | None], ...] = ((name, {} if args is None else args, call_id),)
    else:
        if args is not None:
            raise TypeError("tool_call([...]) takes its arguments inside the list of (name, args) pairs")
        calls = tuple((n, {} if a is None else a, None) for n, a in name)
        if not calls:
            raise ValueError("tool_call([]) needs at least one (name, args) pair")
    return Step("tool_call", text=content, calls=calls, usage=usage, finish_reason="tool_calls", when=when)


def structured(obj: Any, *, name: str | None = None, usage: Usage = None, when: Matcher = None) -> Step:
    """A structured answer carrying ``obj`` (a pydantic model instance, a dict/list, or JSON text).

    It adapts to the request: with ``response_format`` (``json_schema``/``json_object``) the JSON
    text is the message content; with tools, it becomes a call of the tool that ``tool_choice``
    forces, or of the only tool offered, or of the tool named ``name`` (or named like ``obj``'s
    class); with neither, the JSON text is the content."""
    return Step("structured", obj=obj, name=name, usage=usage, when=when)


def error(
    status: int,
    message: str = "scripted error",
    *,
    type: str | None = None,  # noqa: A002 - mirrors the OpenAI error field
    code: str | None = None,
    headers: Mapping[str, str] | None = None,
    when: Matcher = None,
) -> Step:
    """HTTP ``status`` with an OpenAI-style body ``{"error": {"message", "type", "param", "code"}}``.
    A 429 also carries ``retry-after: 0`` (unless ``headers`` sets it)."""
    fallback = ("server_error" if status >= 500 else "invalid_request_error", None)
    default_type, default_code = _DEFAULT_ERROR_TYPES.get(status, fallback)
    hdrs = {k.lower(): str(v) for k, v in (headers or {}).items()}
    if status == 429:
        hdrs.setdefault("retry-after", "0")
        hdrs.setdefault("retry-after-ms", "1")  # the openai client ignores a 0 delay and backs off 0.5 s
    return Step("error", status=status, message=message, error_type=type or default_type,
                code=code if code is not None else default_code, headers=tuple(hdrs.items()), when=when)


def slow(seconds: float, then: Step | None = None, *, when: Matcher = None) -> Step:
    """Wait ``seconds`` (interrupted when the stub closes), then answer with ``then``
    (default: ``reply("slow reply")``)."""
    if seconds < 0:
        raise ValueError("slow(seconds) needs seconds >= 0")
    return Step("slow", seconds=float(seconds), then=then if then is not None else reply("slow reply"), when=when)


def drop(*, when: Matcher = None) -> Step:
    """Read the request, then shut the connection down without answering."""
    return Step("drop", when=when)


# --------------------------------------------------------------------------------------------------
# Helpers


def _message_text(message: Any) -> str:
    if not isinstance(message, dict):
        return ""
    content = message.get("content")
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "\n".join(p["text"] for p in content if isinstance(p, dict) and isinstance(p.get("text"), str))
    return ""


def _messages_text(body: dict, roles: tuple[str, ...] | None = None) -> str:
    messages = body.get("messages") if isinstance(body.get("messages"), list) else []
    return "\n".join(_message_text(m) for m in messages
                     if roles is None or (isinstance(m, dict) and m.get("role") in roles))


def _words(text: str) -> int:
    return len(text.split())


def _usage(given: Usage, body: dict, completion_text: str) -> dict[str, int]:
    if given is None:
        prompt, completion = max(1, _words(_messages_text(body))), max(1, _words(completion_text))
    elif isinstance(given, Mapping):
        prompt, completion = int(given.get("prompt_tokens", 0)), int(given.get("completion_tokens", 0))
    else:
        prompt, completion = int(given[0]), int(given[1])
    return {"prompt_tokens": prompt, "completion_tokens": completion, "total_tokens": prompt + completion}


def _to_json_value(obj: Any) -> Any:
    dump = getattr(obj, "model_dump", None)  # pydantic v2 model instance
    if callable(dump) and not isinstance(obj, type):
        return dump(mode="json")
    if isinstance(obj, (str, bytes)):
        return json.loads(obj)
    return obj


def _json_text(obj: Any) -> str:
    if isinstance(obj, str):
        return obj  # verbatim: lets a script send malformed JSON on purpose
    return json.dumps(_to_json_value(obj))


def _matches(matcher: Matcher, body: dict) -> bool:
    if matcher is None:
        return True
    try:
        if isinstance(matcher, str):
            return matcher in _messages_text(body)
        return bool(matcher(body))
    except Exception:  # noqa: BLE001 - a failing predicate just does not match
        return False


def _tools_of(body: dict) -> list[str]:
    names = []
    for tool in body.get("tools") or []:
        if isinstance(tool, dict):
            fn = tool.get("function") if isinstance(tool.get("function"), dict) else {}
            names.append(fn.get("name") or tool.get("name") or tool.get("type") or "?")
    return names


def _forced_tool(body: dict) -> str | None:
    choice = body.get("tool_choice")
    if isinstance(choice, dict):
        fn = choice.get("function")
        if isinstance(fn, dict) and fn.get("name"):
            return fn["name"]
        return choice.get("name")
    return None


class _StubError(Exception):
    """The stub cannot answer a request (answered 500 with this message)."""


class _Queue:
    def __init__(self, name: str, steps: Iterable[Step]):
        self.name = name
        self.pending: list[Step] = [_as_step(s) for s in steps]
        self.last: Step | None = None
        self.served = 0

    def take(self, body: dict, when_empty: str) -> Step:
        chosen = None
        for i, step in enumerate(self.pending):
            if step.when is not None and _matches(step.when, body):
                chosen = i
                break
        if chosen is None:
            chosen = next((i for i, s in enumerate(self.pending) if s.when is None), None)
        if chosen is not None:
            step = self.pending.pop(chosen)
            self.last = step
            self.served += 1
            return step
        if self.pending:
            raise _StubError(f"stub: queue {self.name} has {len(self.pending)} pending step(s) "
                             f"but none accepts this request (their when= predicates all refused it)")
        if when_empty == "repeat" and self.last is not None:
            self.served += 1
            return self.last
        raise _StubError(f"stub: queue {self.name} is exhausted after {self.served} step(s); "
                         f"no scripted answer left for this request")


def _as_step(step: Step | str) -> Step:
    if isinstance(step, Step):
        return step
    if isinstance(step, str):
        return reply(step)
    raise TypeError(f"a script holds Step objects (reply(), tool_call(), ...), not {type(step).__name__}")


# --------------------------------------------------------------------------------------------------
# The server


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
        self._queue = _Queue("script", script)
        self._marker_queues: dict[str, _Queue] = {m: _Queue(repr(m), steps) for m, steps in (by_marker or {}).items()}
        self._models: list[str] = list(models)
        self.requests: list[dict[str, Any]] = []
        self.errors: list[str] = []  # internal failures of the stub itself (should stay empty)
        self._ids = itertools.count(1)
        self._stopping = threading.Event()
        self._server: _Server | None = None
        self._thread: threading.Thread | None = None
        self._conns: set[socket.socket] = set()
        self._handler_threads: set[threading.Thread] = set()
        self.port: int | None = None

    # ---- lifecycle -------------------------------------------------------------------------------

    def start(self) -> StubOpenAI:
        if self._server is not None:
            return self
        self._stopping.clear()
        server = _Server((self.host, self._requested_port), _Handler)
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
            try:
                conn.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass
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
                queue = self._marker_queues.setdefault(marker, _Queue(repr(marker), ()))
            queue.pending.extend(_as_step(s) for s in steps)

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
        for text in (_messages_text(body, ("system", "developer")), _messages_text(body)):
            hits = [(text.find(m), i, m) for i, m in enumerate(markers) if m and m in text]
            if hits:
                return min(hits)[2], True
        for text in (_messages_text(body, ("system", "developer")), _messages_text(body)):
            found = _ROLE_MARKER.search(text)
            if found:
                return found.group(0), False
        return None, False

    def _record(self, method: str, path: str, headers: Mapping[str, str], body: Any) -> dict[str, Any]:
        safe_headers = {k.lower(): ("present" if k.lower() in _SECRET_HEADERS else v) for k, v in headers.items()}
        record: dict[str, Any] = {
            "method": method,
            "path": path,
            "headers": safe_headers,
            "authorization": "present" if "authorization" in safe_headers else None,
            "body": body,
            "marker": None,
            "model": None,
            "max_tokens": None,
            "max_completion_tokens": None,
            "temperature": None,
            "stream": False,
            "has_tools": False,
            "tool_names": [],
            "tool_choice": None,
            "has_response_format": False,
            "response_format_type": None,
            "served": None,
        }
        if isinstance(body, dict):
            rf = body.get("response_format")
            record.update(
                marker=self._find_marker(body)[0],
                model=body.get("model"),
                max_tokens=body.get("max_tokens"),
                max_completion_tokens=body.get("max_completion_tokens"),
                temperature=body.get("temperature"),
                stream=bool(body.get("stream")),
                has_tools=bool(body.get("tools")),
                tool_names=_tools_of(body),
                tool_choice=body.get("tool_choice"),
                has_response_format=rf is not None,
                response_format_type=rf.get("type") if isinstance(rf, dict) else None,
            )
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

    def _completion(self, step: Step, body: dict) -> tuple[dict[str, Any], str]:
        """The assistant ``message`` (content/tool_calls) and the finish_reason for a success step."""
        if step.kind == "reply":
            return {"role": "assistant", "content": step.text or "", "refusal": None}, step.finish_reason or "stop"
        if step.kind == "tool_call":
            return self._tool_message(step.calls, step.text), "tool_calls"
        # structured: adapt to what the request asked for
        text = _json_text(step.obj)
        rf = body.get("response_format")
        tools = _tools_of(body)
        if step.name is not None and tools:
            return self._tool_message(((step.name, text, None),), None), "tool_calls"
        if isinstance(rf, dict) and rf.get("type") in ("json_schema", "json_object"):
            return {"role": "assistant", "content": text, "refusal": None}, "stop"
        if tools:
            name = step.name or _forced_tool(body)
            if name is None and len(tools) == 1:
                name = tools[0]
            if name is None and type(step.obj).__name__ in tools:
                name = type(step.obj).__name__
            if name is None:
                raise _StubError(f"stub: structured() cannot tell which of the tools {tools} to call "
                                 f"(none is forced by tool_choice); use structured(obj, name=...)")
            return self._tool_message(((name, text, None),), None), "tool_calls"
        return {"role": "assistant", "content": text, "refusal": None}, "stop"

    def _tool_message(self, calls: Iterable[tuple[str, Any, str | None]], content: str | None) -> dict[str, Any]:
        return {
            "role": "assistant",
            "content": content,
            "refusal": None,
            "tool_calls": [
                {"id": cid or self._new_id("call"), "type": "function",
                 "function": {"name": name,
                              "arguments": args if isinstance(args, str) else json.dumps(_to_json_value(args))}}
                for name, args, cid in calls
            ],
        }


class _Server(ThreadingHTTPServer):
    daemon_threads = True
    block_on_close = False  # StubOpenAI.close() joins the handler threads itself, with a timeout
    stub: StubOpenAI

    def server_bind(self) -> None:
        # HTTPServer.server_bind would call socket.getfqdn() (a possibly slow DNS lookup).
        socketserver.TCPServer.server_bind(self)
        host, port = self.server_address[:2]
        self.server_name, self.server_port = str(host), int(port)

    def handle_error(self, request: Any, client_address: Any) -> None:
        exc = sys.exc_info()[1]
        if not isinstance(exc, OSError):
            self.stub.errors.append(f"{type(exc).__name__}: {exc}")


def _piece_text(text: str, words_per_piece: int = 3) -> list[str]:
    tokens = re.findall(r"\s*\S+\s*|\s+", text)
    return ["".join(tokens[i:i + words_per_piece]) for i in range(0, len(tokens), words_per_piece)] or [text]


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server_version = "watchdog-openai-stub/1.0"
    timeout = 60  # idle keep-alive connections give up after this
    server: _Server

    # ---- plumbing --------------------------------------------------------------------------------

    def setup(self) -> None:
        super().setup()
        # Headers and body go out in separate writes: without TCP_NODELAY, Nagle's algorithm and
        # the client's delayed ACK add ~40 ms to every response.
        self.connection.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        self.server.stub._track(self.connection, True)

    def finish(self) -> None:
        try:
            super().finish()
        finally:
            self.server.stub._track(self.connection, False)

    def log_message(self, format: str, *args: Any) -> None:  # noqa: A002 - silence stderr logging
        pass

    def _send_json(self, status: int, obj: Any, headers: Iterable[tuple[str, str]] = ()) -> None:
        data = json.dumps(obj).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.send_header("x-request-id", self.server.stub._new_id("req"))
        for k, v in headers:
            self.send_header(k, v)
        self.end_headers()
        self.wfile.write(data)

    def _send_error_json(self, status: int, message: str, type_: str, code: str | None = None,
                         headers: Iterable[tuple[str, str]] = ()) -> None:
        self._send_json(status, {"error": {"message": message, "type": type_, "param": None, "code": code}}, headers)

    def _read_body(self) -> bytes:
        length = self.headers.get("Content-Length")
        if length is not None:
            return self.rfile.read(int(length))
        if "chunked" in (self.headers.get("Transfer-Encoding") or "").lower():
            parts = []
            while True:
                size = int(self.rfile.readline().split(b";")[0].strip() or b"0", 16)
                if size == 0:
                    while self.rfile.readline() not in (b"\r\n", b"\n", b""):
                        pass
                    return b"".join(parts)
                parts.append(self.rfile.read(size))
                self.rfile.readline()
        return b""

    def _path(self) -> str:
        return self.path.split("?", 1)[0].rstrip("/") or "/"

    # ---- verbs -----------------------------------------------------------------------------------

    def do_GET(self) -> None:  # noqa: N802
        stub = self.server.stub
        path = self._path()
        stub._record("GET", path, self.headers, None)
        if path in ("/v1/models", "/models"):
            self._send_json(200, {"object": "list", "data": [self._model(m) for m in stub.models]})
        elif path.startswith(("/v1/models/", "/models/")):
            model = path.split("/models/", 1)[1]
            if model in stub.models:
                self._send_json(200, self._model(model))
            else:
                self._send_error_json(404, f"The model '{model}' does not exist", "invalid_request_error",
                                      "model_not_found")
        elif path in ("/health", "/v1/health"):
            self._send_json(200, {"status": "ok"})
        else:
            self._send_error_json(404, f"stub: no route GET {path}", "invalid_request_error", "not_found")

    def do_POST(self) -> None:  # noqa: N802
        stub = self.server.stub
        path = self._path()
        raw = self._read_body()
        try:
            body = json.loads(raw) if raw else {}
        except ValueError:
            stub._record("POST", path, self.headers, raw.decode("utf-8", "replace"))
            self._send_error_json(400, "stub: the request body is not valid JSON", "invalid_request_error")
            return
        record = stub._record("POST", path, self.headers, body)
        if path not in ("/v1/chat/completions", "/chat/completions"):
            hint = (" (the stub implements Chat Completions only: ChatOpenAI chose the Responses API; "
                    "pass use_responses_api=False)") if path.endswith("/responses") else ""
            self._send_error_json(404, f"stub: no route POST {path}{hint}", "invalid_request_error", "not_found")
            return
        if not isinstance(body, dict):
            self._send_error_json(400, "stub: the request body must be a JSON object", "invalid_request_error")
            return
        try:
            step = stub._next_step(body)
        except _StubError as exc:
            record["served"] = "stub-error"
            self._send_error_json(500, str(exc), "server_error", "stub_script_exhausted")
            return
        record["served"] = step.describe()
        try:
            self._perform(step, body)
        except (BrokenPipeError, ConnectionResetError, ConnectionAbortedError):
            self.close_connection = True
        except _StubError as exc:
            self._send_error_json(500, str(exc), "server_error", "stub_error")

    # ---- steps -----------------------------------------------------------------------------------

    def _perform(self, step: Step, body: dict) -> None:
        stub = self.server.stub
        if step.kind == "slow":
            if stub._stopping.wait(step.seconds):
                self._drop()  # the stub is closing
                return
            self._perform(step.then or reply("slow reply"), body)
            return
        if step.kind == "drop":
            self._drop()
            return
        if step.kind == "error":
            self._send_error_json(step.status, step.message, step.error_type or "server_error", step.code, step.headers)
            return
        message, finish_reason = stub._completion(step, body)
        completion_text = message.get("content") or "".join(
            c["function"]["arguments"] for c in message.get("tool_calls") or [])
        usage = _usage(step.usage, body, completion_text)
        model = body.get("model") or (stub.models[0] if stub.models else "gpt-test")
        if body.get("stream"):
            self._stream(message, finish_reason, usage, model, body)
            return
        self._send_json(200, {
            "id": stub._new_id("chatcmpl"),
            "object": "chat.completion",
            "created": int(time.time()),
            "model": model,
            "system_fingerprint": "fp_watchdog_stub",
            "choices": [{"index": 0, "message": message, "logprobs": None, "finish_reason": finish_reason}],
            "usage": usage,
        })

    def _drop(self) -> None:
        self.close_connection = True
        try:
            self.connection.shutdown(socket.SHUT_RDWR)
        except OSError:
            pass

    def _stream(self, message: dict, finish_reason: str, usage: dict, model: str, body: dict) -> None:
        stub = self.server.stub
        include_usage = bool((body.get("stream_options") or {}).get("include_usage"))
        base = {"id": stub._new_id("chatcmpl"), "object": "chat.completion.chunk", "created": int(time.time()),
                "model": model, "system_fingerprint": "fp_watchdog_stub"}
        if include_usage:
            base["usage"] = None

        def chunk(delta: dict, finish: str | None = None) -> dict:
            return {**base, "choices": [{"index": 0, "delta": delta, "logprobs": None, "finish_reason": finish}]}

        events = [chunk({"role": "assistant", "content": "", "refusal": None})]
        if message.get("content"):
            events += [chunk({"content": piece}) for piece in _piece_text(message["content"])]
        for i, call in enumerate(message.get("tool_calls") or []):
            events.append(chunk({"tool_calls": [{"index": i, "id": call["id"], "type": "function",
                                                 "function": {"name": call["function"]["name"], "arguments": ""}}]}))
            arguments = call["function"]["arguments"]
            events.append(chunk({"tool_calls": [{"index": i, "function": {"arguments": arguments}}]}))
        events.append(chunk({}, finish_reason))
        if include_usage:
            events.append({**base, "choices": [], "usage": usage})

        self.send_response(200)
        self.send_header("Content-Type", "text/event-stream; charset=utf-8")
        self.send_header("Cache-Control", "no-cache")
        self.send_header("Transfer-Encoding", "chunked")
        self.end_headers()
        for event in events:
            self._write_chunk(f"data: {json.dumps(event)}\n\n".encode())
        self._write_chunk(b"data: [DONE]\n\n")
        self.wfile.write(b"0\r\n\r\n")

    def _write_chunk(self, data: bytes) -> None:
        self.wfile.write(f"{len(data):x}\r\n".encode() + data + b"\r\n")

    @staticmethod
    def _model(name: str) -> dict[str, Any]:
        return {"id": name, "object": "model", "created": 0, "owned_by": "watchdog-stub"}


# --------------------------------------------------------------------------------------------------
# CLI: python -m watchdog.testing.openai_stub --port 8099 --reply "text"


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m watchdog.testing.openai_stub",
                                     description="Serve a scripted OpenAI-compatible API on 127.0.0.1.")
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=8099, help="0 picks a free port")
    parser.add_argument("--reply", action="append", default=[], help="a scripted reply (repeatable, FIFO)")
    parser.add_argument("--structured", action="append", default=[], help="a scripted structured answer (JSON text)")
    parser.add_argument("--model", action="append", default=[], help="a model listed by GET /v1/models")
    parser.add_argument("--when-empty", choices=("repeat", "error"), default="repeat")
    args = parser.parse_args(argv)
    script = [reply(t) for t in args.reply] + [structured(json.loads(s)) for s in args.structured]
    stub = StubOpenAI(script or [reply("stub reply")], when_empty=args.when_empty,
                      models=args.model or ["gpt-test"], host=args.host, port=args.port)
    with stub:
        print(f"OpenAI stub listening on {stub.base_url} (Ctrl-C to stop)", flush=True)
        try:
            while True:
                time.sleep(3600)
        except KeyboardInterrupt:
            pass
    return 0


if __name__ == "__main__":
    sys.exit(main())
