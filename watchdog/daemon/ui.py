"""``watchdog serve --ui [HOST:]PORT``: the dashboard served live over HTTP, in a thread beside the scheduler.

Read-only: GET and HEAD only (every other method is 405); the pages come from
:class:`watchdog.report.live.LiveSite`. Every reply carries the static site's Content-Security-Policy (no
script, no frame, no form) as a header, ``nosniff`` and ``no-store``.

Who may ask: on a loopback address, only requests whose ``Host`` is a loopback name (a web page elsewhere
cannot read the dashboard through DNS rebinding). Any other address needs a token (``$WATCHDOG_UI_TOKEN``,
as ``watchdog mcp --http`` needs ``$WATCHDOG_MCP_TOKEN``), sent as ``Authorization: Bearer <token>`` or
as the password of HTTP Basic (a browser asks for it); without the variable such a bind is refused.
"""

from __future__ import annotations

import base64
import errno
import hmac
import logging
import signal
import socket
import socketserver
import sys
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from watchdog.errors import ConfigError, WatchdogError
from watchdog.mcp.transport import is_loopback, parse_bind
from watchdog.report.live import LiveSite, Reply

log = logging.getLogger("watchdog.ui")

TOKEN_ENV = "WATCHDOG_UI_TOKEN"
CSP = ("default-src 'none'; style-src 'unsafe-inline'; img-src data:; frame-ancestors 'none'; base-uri 'none'; "
       "form-action 'none'")
HEADERS = {"Content-Security-Policy": CSP, "X-Content-Type-Options": "nosniff", "X-Frame-Options": "DENY",
           "Referrer-Policy": "no-referrer", "Cache-Control": "no-store", "Cross-Origin-Resource-Policy": "same-origin"}
LOOPBACK_NAMES = frozenset({"localhost", "127.0.0.1", "::1"})


def host_name(header: str | None) -> str:
    """The host of a ``Host`` header, without its port and brackets, lower case."""
    value = (header or "").strip().lower()
    if value.startswith("["):
        return value[1:value.find("]")] if "]" in value else ""
    return value.rpartition(":")[0] if value.count(":") == 1 else value


class _Handler(BaseHTTPRequestHandler):
    server: UiServer
    server_version = "watchdog"
    sys_version = ""
    timeout = 30  # seconds a connection may stay silent (a slow client holds a thread no longer)

    def do_GET(self) -> None:  # noqa: N802 -- http.server's naming
        self._answer(send_body=True)

    def do_HEAD(self) -> None:  # noqa: N802
        self._answer(send_body=False)

    def __getattr__(self, name: str) -> Any:
        """Every other method (POST, PUT, DELETE, …, even unknown ones) is 405, not http.server's 501."""
        if name.startswith("do_"):
            return self._not_allowed
        raise AttributeError(name)

    def _not_allowed(self) -> None:
        self._send(Reply(405, b"method not allowed: this server is read-only (GET, HEAD)\n"), True,
                   {"Allow": "GET, HEAD", "Connection": "close"})

    def _answer(self, send_body: bool) -> None:
        gate = self.server.refusal(self.headers)
        if gate is not None:
            reply, extra = gate
            self._send(reply, send_body, extra)
            return
        self._send(self.server.site.get(self.path), send_body)

    def _send(self, reply: Reply, send_body: bool, extra: dict[str, str] | None = None) -> None:
        self.send_response(reply.status)
        for name, value in {**HEADERS, **(extra or {})}.items():
            self.send_header(name, value)
        self.send_header("Content-Type", reply.content_type)
        self.send_header("Content-Length", str(len(reply.body)))
        self.end_headers()
        if send_body:
            self.wfile.write(reply.body)

    def log_message(self, format: str, *args: Any) -> None:  # noqa: A002 -- http.server's signature
        log.debug("ui %s: " + format, self.address_string(), *args)


class UiServer(ThreadingHTTPServer):
    """The HTTP server; bound (or one-line :class:`WatchdogError`) when constructed."""

    daemon_threads = True

    def __init__(self, host: str, port: int, site: LiveSite, token: str | None = None):
        self.site = site
        self.loopback = is_loopback(host)
        self.token = token
        self.address_family = socket.AF_INET6 if ":" in host else socket.AF_INET
        try:
            super().__init__((host, port), _Handler)
        except OSError as exc:
            why = "the address is already in use" if exc.errno == errno.EADDRINUSE else (exc.strerror or str(exc))
            raise WatchdogError(f"cannot serve the pages on {host}:{port}: {why}") from None

    def server_bind(self) -> None:
        socketserver.TCPServer.server_bind(self)   # not HTTPServer's: it looks up the host's FQDN
        self.server_name, self.server_port = str(self.server_address[0]), int(self.server_address[1])

    def handle_error(self, request: Any, client_address: Any) -> None:
        """A client that went away mid-reply: one debug line, not socketserver's traceback on stderr."""
        log.debug("ui: request from %s ended early: %s", client_address, sys.exc_info()[1])

    def refusal(self, headers: Any) -> tuple[Reply, dict[str, str]] | None:
        """Why a request may not be answered (a reply and its extra headers), or None."""
        if self.token is not None:
            if not self._authorised(headers.get("Authorization") or ""):
                return (Reply(401, b"unauthorized: a token is required (Bearer, or the password of Basic)\n"),
                        {"WWW-Authenticate": 'Basic realm="watchdog", charset="UTF-8"'})
            return None
        if self.loopback and host_name(headers.get("Host")) not in LOOPBACK_NAMES:
            return Reply(403, b"forbidden: this server answers only to a loopback host name\n"), {}
        return None

    def _authorised(self, given: str) -> bool:
        assert self.token is not None
        scheme, _, value = given.partition(" ")
        if scheme.lower() == "bearer":
            return hmac.compare_digest(value.strip().encode(), self.token.encode())
        if scheme.lower() == "basic":
            try:
                password = base64.b64decode(value.strip(), validate=True).decode().partition(":")[2]
            except ValueError:
                return False
            return hmac.compare_digest(password.encode(), self.token.encode())
        return False


class LiveUi:
    """The server running in a thread; :meth:`stop` ends it."""

    def __init__(self, server: UiServer):
        self.server = server
        host, port = str(server.server_address[0]), int(server.server_address[1])
        self.url = f"http://{f'[{host}]' if ':' in host else host}:{port}/"
        self.thread = threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.2},
                                       name="watchdog-ui", daemon=True)

    def stop(self) -> None:
        self.server.shutdown()
        self.server.server_close()
        self.server.site.close()
        log.info("pages: stopped serving %s", self.url)


def start_ui(settings: Any, bind: str, token: str | None = None) -> LiveUi:
    """Bind ``bind`` (``[HOST:]PORT``; loopback when no host) and serve the pages in a thread.
    A non-loopback address without ``token`` is refused; so is a port in use (one line each)."""
    host, port = parse_bind(bind, "--ui")
    if not is_loopback(host) and not token:
        raise ConfigError(f"serving the pages on {host} (not loopback) needs a token: set ${TOKEN_ENV} "
                          f"(sent as a bearer token or the password of HTTP Basic)")
    site = LiveSite(settings)
    try:
        server = UiServer(host, port, site, token)
    except BaseException:
        site.close()
        raise
    ui = LiveUi(server)
    ui.thread.start()
    log.info("pages: serving the dashboard at %s (read-only%s)", ui.url,
             f"; token from ${TOKEN_ENV} required" if token else "; loopback only")
    return ui


def wait_for_stop(duration: float | None = None, poll_s: float = 0.2) -> str:
    """Block until SIGTERM/SIGINT (or ``duration`` seconds); returns why (``serve --ui --no-schedule``)."""
    signals: list[int] = []
    previous: dict[int, Any] = {}
    if threading.current_thread() is threading.main_thread():
        for wanted in (signal.SIGTERM, signal.SIGINT):
            previous[wanted] = signal.signal(wanted, lambda number, _frame: signals.append(number))
    deadline = None if duration is None else time.monotonic() + duration
    try:
        while not signals:
            if deadline is not None and time.monotonic() >= deadline:
                return f"--for {duration:g}s elapsed"
            time.sleep(poll_s)
        return f"{signal.Signals(signals[0]).name} received"
    finally:
        for signum, handler in previous.items():
            signal.signal(signum, handler)

