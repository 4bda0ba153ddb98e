"""What every delivery channel gets (a filed run) and the small interface each implements."""

from __future__ import annotations

import json
import socket
import ssl
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol

from watchdog.errors import Transient, WatchdogError
from watchdog.exit_codes import read_status
from watchdog.trends import counts


class DeliveryError(WatchdogError, Transient):
    """A sender could not deliver (SMTP down, HTTP 500...): retried, then kept in the outbox."""


def network_reason(exc: BaseException, timeout_s: float, peer: str) -> str | None:
    """A short, human reason for a network-level failure (None when ``exc`` is not one)."""
    if isinstance(exc, ConnectionRefusedError):
        return f"connection refused (is the {peer} running?)"
    if isinstance(exc, (socket.timeout, TimeoutError)):
        return f"timed out after {timeout_s:g} s"
    if isinstance(exc, socket.gaierror):
        return f"cannot resolve the host name ({exc.strerror or exc})"
    if isinstance(exc, ssl.SSLCertVerificationError):
        return f"TLS certificate verification failed: {exc.verify_message or exc.reason}"
    if isinstance(exc, ssl.SSLError):
        return f"TLS error: {exc.reason or exc}"
    if isinstance(exc, OSError):
        return exc.strerror or str(exc) or type(exc).__name__
    return None


@dataclass
class RunPackage:
    """A run as filed on disk: everything a channel needs to send it."""

    run_id: str
    audit: str
    status: str                                   # passed | warned | failed | error
    run_dir: Path
    summary: dict[str, int]
    trends: dict[str, str] = field(default_factory=dict)
    report_markdown: str = ""
    report_html: str = ""
    #: the findings JSON held in memory, when filing the run failed (then ``filing_error`` says why)
    findings_json: str | None = None
    filing_error: str | None = None
    #: check name -> a small inline SVG of its figure over the audit's last runs (drawn from the history)
    sparklines: dict[str, str] = field(default_factory=dict)

    @property
    def findings_path(self) -> Path:
        return self.run_dir / "findings.json"

    def findings_bytes(self) -> bytes:
        if self.findings_json is not None:
            return self.findings_json.encode("utf-8")
        return self.findings_path.read_bytes()

    def findings(self) -> dict[str, Any]:
        return json.loads(self.findings_bytes())

    @property
    def subject(self) -> str:
        """``[watchdog] <audit>: N failed, M warned`` plus what changed since the previous run."""
        s = self.summary
        subject = f"[watchdog] {self.audit}: {s.get('failed', 0)} failed, {s.get('warned', 0)} warned"
        if s.get("errors"):
            subject += f", {s['errors']} errors"
        changed = {k: v for k, v in counts(self.trends).items() if v and k != "unchanged"}
        if changed:
            subject += " (" + ", ".join(f"{n} {mark}" for mark, n in changed.items()) + ")"
        return subject

    @classmethod
    def load(cls, run_dir: Path) -> RunPackage:
        """Rebuild a package from a filed run folder (used by the outbox and the review gate)."""
        meta = json.loads((run_dir / "audit.json").read_text(encoding="utf-8"))
        return cls(run_id=meta["run_id"], audit=meta["audit"], status=read_status(meta["status"]) or "error",
                   run_dir=run_dir,
                   summary=meta["summary"], trends=meta.get("trends") or {},
                   report_markdown=(run_dir / "report.md").read_text(encoding="utf-8"),
                   report_html=(run_dir / "report.html").read_text(encoding="utf-8")
                   if (run_dir / "report.html").is_file() else "")


class Sender(Protocol):
    kind: str

    def targets(self) -> list[str]:
        """Where this channel sends (recipients, a folder, a URL): each is delivered and recorded apart."""
        ...

    def send(self, package: RunPackage, target: str) -> None:
        """Deliver ``package`` to ``target``; raise DeliveryError on failure."""
        ...
