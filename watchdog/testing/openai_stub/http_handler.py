"""The HTTP layer of the stub: the threading server and the request handler that routes
``GET /v1/models``, ``GET /health`` and ``POST /v1/chat/completions`` and performs the chosen step
(JSON answer, SSE stream, scripted error, slow answer or dropped connection)."""

from __future__ import annotations

import contextlib
import json
import socket
import socketserver
import sys
from collections.abc import Iterable
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import TYPE_CHECKING, Any

from . import responses
from .errors import StubError
from .steps import Step, reply

if TYPE_CHECKING:
    from .server import StubOpenAI


class StubHTTPServer(ThreadingHTTPServer):
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


class StubRequestHandler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server_version = "watchdog-openai-stub/1.0"
    timeout = 60  # idle keep-alive connections give up after this
    server: StubHTTPServer

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
        self._send_json(status, responses.error_body(message, type_, code), headers)

    def _read_body(self) -> bytes:
        length = self.headers.get("Content-Length")
        if length is not None:
            return self.rfile.read(int(length))
        if "chunked" in (self.headers.get("Transfer-Encoding") or "").lower():
            parts: list[bytes] = []
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
            self._send_json(200, {"object": "list", "data": [responses.model_object(m) for m in stub.models]})
        elif path.startswith(("/v1/models/", "/models/")):
            model = path.split("/models/", 1)[1]
            if model in stub.models:
                self._send_json(200, responses.model_object(model))
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
        except StubError as exc:
            record["served"] = "stub-error"
            self._send_error_json(500, str(exc), "server_error", "stub_script_exhausted")
            return
        record["served"] = step.describe()
        try:
            self._perform(step, body)
        except (BrokenPipeError, ConnectionResetError, ConnectionAbortedError):
            self.close_connection = True
        except StubError as exc:
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
        message, finish_reason = responses.completion_message(step, body, stub._new_id)
        usage = responses.usage_block(step.usage, body, responses.completion_text(message))
        model = body.get("model") or (stub.models[0] if stub.models else "gpt-test")
        if body.get("stream"):
            include_usage = bool((body.get("stream_options") or {}).get("include_usage"))
            self._stream(responses.stream_chunks(stub._new_id("chatcmpl"), model, message, finish_reason,
                                                 usage, include_usage), step)
            return
        self._send_json(200, responses.chat_completion(stub._new_id("chatcmpl"), model, message, finish_reason, usage))

    def _drop(self) -> None:
        self.close_connection = True
        with contextlib.suppress(OSError):
            self.connection.shutdown(socket.SHUT_RDWR)

    def _stream(self, events: Iterable[dict[str, Any]], step: Step | None = None) -> None:
        """Send ``events`` as a chunked ``text/event-stream``, then ``data: [DONE]`` (paced as ``step`` says)."""
        self.send_response(200)
        self.send_header("Content-Type", "text/event-stream; charset=utf-8")
        self.send_header("Cache-Control", "no-cache")
        self.send_header("Transfer-Encoding", "chunked")
        self.end_headers()
        self.wfile.flush()
        stopping = self.server.stub._stopping
        pieces = 0
        for event in events:
            delta = (event.get("choices") or [{}])[0].get("delta") or {}
            if delta.get("content") and step is not None:
                if step.pause_after is not None and pieces == step.pause_after and stopping.wait(step.pause_s):
                    return self._drop()
                if pieces and step.piece_delay_s and stopping.wait(step.piece_delay_s):
                    return self._drop()
                pieces += 1
            self._write_chunk(f"data: {json.dumps(event)}\n\n".encode())
            self.wfile.flush()
        self._write_chunk(b"data: [DONE]\n\n")
        self.wfile.write(b"0\r\n\r\n")

    def _write_chunk(self, data: bytes) -> None:
        self.wfile.write(f"{len(data):x}\r\n".encode() + data + b"\r\n")
