"""A real SMTP server on 127.0.0.1 that keeps what it receives, for tests (needs ``aiosmtpd``).

::

    from watchdog.testing.smtp_sink import SmtpSink, self_signed_cert

    with SmtpSink() as sink:                       # plain SMTP on a free port
        ...send to sink.host, sink.port...
        sink.messages[0]["Subject"]                # parsed email.message.EmailMessage
        sink.received[0].raw                       # the bytes as received, envelope beside them

Options: ``tls_context=`` offers STARTTLS; ``ssl_context=`` speaks implicit TLS (SMTPS) from the
first byte; ``users={"name": "password"}`` enables AUTH (LOGIN/PLAIN; over STARTTLS it is only
offered after the TLS handshake, otherwise it is offered on the connection as is); ``fail=`` answers
every DATA with that reply (e.g. ``"451 4.3.0 try again later"``) -- set ``fail_times=n`` to fail only
the first n messages, or change ``sink.fail`` while it runs. :func:`unused_port` gives a port with
nothing listening (an SMTP server that is down). :func:`self_signed_cert` makes a throw-away
certificate for 127.0.0.1/localhost with the ``openssl`` command, and :func:`tls_contexts` the
matching server and (verifying) client contexts.
"""

from __future__ import annotations

import email
import email.policy
import shutil
import socket
import ssl
import subprocess
import threading
from dataclasses import dataclass, field
from email.message import EmailMessage
from pathlib import Path
from typing import Any

from aiosmtpd.controller import Controller
from aiosmtpd.smtp import AuthResult, Envelope, LoginPassword, Session

__all__ = ["Received", "SmtpSink", "self_signed_cert", "tls_contexts", "unused_port"]


@dataclass
class Received:
    mail_from: str
    rcpt_tos: list[str]
    raw: bytes
    message: EmailMessage
    tls: bool
    login: str | None = None
    extra: dict[str, Any] = field(default_factory=dict)


def unused_port(host: str = "127.0.0.1") -> int:
    """A TCP port that nothing listens on (at the time of asking)."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind((host, 0))
        return sock.getsockname()[1]


def self_signed_cert(directory: Path, name: str = "localhost") -> tuple[Path, Path]:
    """(cert.pem, key.pem): a one-day self-signed EC certificate for ``name``, 127.0.0.1 and localhost."""
    openssl = shutil.which("openssl")
    if not openssl:
        raise RuntimeError("the openssl command is needed to make a test certificate")
    directory.mkdir(parents=True, exist_ok=True)
    cert, key = directory / "cert.pem", directory / "key.pem"
    subprocess.run([openssl, "req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1",
                    "-nodes", "-days", "1", "-subj", f"/CN={name}", "-keyout", str(key), "-out", str(cert),
                    "-addext", f"subjectAltName=DNS:{name},DNS:localhost,IP:127.0.0.1"],
                   check=True, capture_output=True, timeout=30)
    return cert, key


def tls_contexts(cert: Path, key: Path) -> tuple[ssl.SSLContext, ssl.SSLContext]:
    """(server context, client context that trusts exactly this certificate and checks the host name)."""
    server = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
    server.load_cert_chain(cert, key)
    client = ssl.create_default_context(cafile=str(cert))
    return server, client


class _Handler:
    def __init__(self, sink: SmtpSink):
        self.sink = sink

    async def handle_DATA(self, server: Any, session: Session, envelope: Envelope) -> str:
        return self.sink._accept(session, envelope)


class SmtpSink:
    """A context manager running an aiosmtpd server in a thread; see the module docstring."""

    def __init__(self, *, tls_context: ssl.SSLContext | None = None, ssl_context: ssl.SSLContext | None = None,
                 users: dict[str, str] | None = None, fail: str | None = None, fail_times: int | None = None,
                 host: str = "127.0.0.1"):
        if tls_context is not None and ssl_context is not None:
            raise ValueError("give tls_context (STARTTLS) or ssl_context (implicit TLS), not both")
        self.host = host
        self.port = 0
        self.users = dict(users or {})
        self.fail = fail
        self.fail_times = fail_times
        self.ssl_context = ssl_context
        self.tls_context = tls_context
        self.received: list[Received] = []
        self.failed_attempts = 0
        self.auth_attempts: list[tuple[str, bool]] = []   # (login, success)
        self._lock = threading.Lock()
        self._controller: Controller | None = None

    @property
    def messages(self) -> list[EmailMessage]:
        return [r.message for r in self.received]

    def start(self) -> SmtpSink:
        kwargs: dict[str, Any] = {}
        if self.tls_context is not None:
            kwargs.update(tls_context=self.tls_context)
        if self.users:
            kwargs.update(authenticator=self._authenticate, auth_require_tls=self.tls_context is not None)
        else:
            kwargs.update(auth_require_tls=False)
        self.port = unused_port(self.host)
        self._controller = Controller(_Handler(self), hostname=self.host, port=self.port,
                                      ssl_context=self.ssl_context, ready_timeout=5.0, **kwargs)
        self._controller.start()
        return self

    def stop(self) -> None:
        if self._controller is not None:
            self._controller.stop()
            self._controller = None

    def __enter__(self) -> SmtpSink:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    def _authenticate(self, server: Any, session: Session, envelope: Envelope, mechanism: str,
                      auth_data: Any) -> AuthResult:
        if not isinstance(auth_data, LoginPassword):
            return AuthResult(success=False, handled=False)
        login = auth_data.login.decode("utf-8", "replace")
        ok = login in self.users and self.users[login] == auth_data.password.decode("utf-8", "replace")
        with self._lock:
            self.auth_attempts.append((login, ok))
        # handled=False on failure: aiosmtpd then answers 535 itself
        return AuthResult(success=ok, handled=ok, auth_data=login if ok else None)

    def _accept(self, session: Session, envelope: Envelope) -> str:
        with self._lock:
            if self.fail and (self.fail_times is None or self.failed_attempts < self.fail_times):
                self.failed_attempts += 1
                return self.fail
            raw = envelope.original_content or envelope.content or b""
            raw = raw if isinstance(raw, bytes) else raw.encode("utf-8")
            message = email.message_from_bytes(raw, policy=email.policy.default)
            self.received.append(Received(
                mail_from=envelope.mail_from or "", rcpt_tos=list(envelope.rcpt_tos), raw=raw,
                message=message,
                tls=bool(session.ssl) or self.ssl_context is not None,
                login=session.auth_data if session.authenticated else None))
        return "250 OK"
