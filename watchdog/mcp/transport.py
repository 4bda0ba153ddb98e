"""How ``watchdog mcp`` is reached: stdio, or streamable HTTP on loopback (a bearer token required for any
other address)."""

from __future__ import annotations

import hmac
import ipaddress
import logging
from typing import Any

from watchdog.errors import ConfigError
from watchdog.settings import Settings

log = logging.getLogger("watchdog.mcp")

TOKEN_ENV = "WATCHDOG_MCP_TOKEN"


def parse_bind(text: str, option: str = "--http") -> tuple[str, int]:
    """``HOST:PORT``, ``:PORT`` or ``PORT`` (loopback) -> (host, port); ``option`` names the flag in the error."""
    host, _, port = text.rpartition(":")
    if not port.isdigit() or not 0 < int(port) < 65536:
        raise ConfigError(f"{option} takes [HOST:]PORT (e.g. 127.0.0.1:8765), not {text!r}")
    return (host.strip("[]") or "127.0.0.1"), int(port)


def is_loopback(host: str) -> bool:
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


class BearerGate:
    """ASGI middleware: every HTTP request must carry ``Authorization: Bearer <token>``."""

    def __init__(self, app: Any, token: str):
        self.app = app
        self.expected = f"Bearer {token}".encode()

    async def __call__(self, scope: dict[str, Any], receive: Any, send: Any) -> None:
        if scope.get("type") == "http":
            given = dict(scope.get("headers") or []).get(b"authorization", b"")
            if not hmac.compare_digest(given, self.expected):
                await send({"type": "http.response.start", "status": 401,
                            "headers": [(b"content-type", b"text/plain"), (b"www-authenticate", b"Bearer")]})
                await send({"type": "http.response.body", "body": b"unauthorized: a bearer token is required\n"})
                return
        await self.app(scope, receive, send)


def serve(settings: Settings, http: str | None = None, token: str | None = None) -> None:
    """Serve MCP on stdio (``http`` None) or streamable HTTP at ``http`` until stopped."""
    from watchdog.mcp.server import build_server

    server = build_server(settings)
    if http is None:
        server.run("stdio")
        return
    host, port = parse_bind(http)
    if not is_loopback(host) and not token:
        raise ConfigError(f"serving MCP on {host} (not loopback) needs a bearer token: set ${TOKEN_ENV}")
    import uvicorn
    from mcp.server.transport_security import TransportSecuritySettings

    security = None if is_loopback(host) else TransportSecuritySettings(enable_dns_rebinding_protection=False)
    app: Any = server.streamable_http_app(host=host, transport_security=security)
    if token:
        app = BearerGate(app, token)
    log.info("watchdog mcp: streamable HTTP on http://%s:%d/mcp%s", host, port, " (bearer token)" if token else "")
    uvicorn.run(app, host=host, port=port, log_level="warning")
