"""The ``email`` channel: one message per recipient over SMTP (plain, STARTTLS or implicit TLS).

The recipients are the configured ``to`` and, unless ``mail_owners: false``, the owners of the listed problem
checks whose ``owners:`` entry gives an ``email:``; each is a recipient of its own message (``To:``), sent,
recorded and retried apart. Routing (:mod:`watchdog.delivery.routing`) chooses the checks a message lists.

The message is ``multipart/alternative`` (text and HTML, both rendered by Jinja2 from the findings),
with ``findings.json`` attached when asked. Its ``Message-ID`` is derived from the run and the
recipient, so a retried delivery of the same run to the same recipient carries the same id and
receiving systems can discard the duplicate. Errors become :class:`DeliveryError` with a message
that names the server and the cause, with every secret masked.
"""

from __future__ import annotations

import base64
import hashlib
import re
import smtplib
import ssl
from datetime import UTC, datetime
from email.message import EmailMessage
from email.utils import format_datetime
from typing import Any

from markupsafe import Markup

from watchdog.delivery.base import DeliveryError, RunPackage, network_reason
from watchdog.delivery.routing import Select, destination_of, problem_findings, resolved_findings
from watchdog.findings import FindingsDoc
from watchdog.redact import MASK, redact, register_secret
from watchdog.report.diagnosis_text import sentences
from watchdog.report.escape import WHOLE, plain_text
from watchdog.report.html import environment, figures
from watchdog.report.live import public_links
from watchdog.report.view import ordered
from watchdog.settings import SmtpConfig
from watchdog.trends import counts

_MSGID_UNSAFE = re.compile(r"[^A-Za-z0-9._+\-]")


def message_id(run_id: str, target: str) -> str:
    """``<run_id.sha1(recipient)[:12]@watchdog>``: the same run to the same recipient, the same id."""
    digest = hashlib.sha1(target.encode("utf-8")).hexdigest()[:12]
    return f"<{_MSGID_UNSAFE.sub('-', run_id)}.{digest}@watchdog>"


def email_context(package: RunPackage, doc: FindingsDoc, *, attached: bool, select: Select | None = None,
                  public_url: str | None = None) -> dict[str, Any]:
    """What the two e-mail templates show: summary, changes, a row per problem this destination selects, the
    pages to open (under ``public_url``) or else where the run is filed on the server."""
    trends = package.trends or {}
    chosen = select or Select()
    listed = {f.name for f in problem_findings(doc, trends, chosen)}
    # problems first, suite order within a status; checks never run are counted under the scan's error
    rows = [{"name": f.name, "status": f.status, "mark": trends.get(f.name, ""),
             "figures": (f"could not run: {plain_text(f.error, WHOLE)}" if f.status == "error" else figures(f)),
             "diagnosis": " ".join(sentences(f)), "owners": ", ".join(f.owners or ())}
            for f in ordered(doc.findings) if f.name in listed and not f.not_run]
    changes = [f"{n} {mark}" for mark, n in counts(trends).items() if n and mark != "unchanged"]
    resolved = [f.name for f in resolved_findings(doc, trends, chosen)]
    html_report = package.run_dir / "report.html"
    report_path = html_report if package.report_html or html_report.is_file() else package.run_dir / "report.md"
    links = (public_links(public_url, package.audit, package.run_id, report_path.name)
             if public_url and not package.filing_error else [])
    subject = package.subject + (f" · owner {chosen.group}" if chosen.group else "")
    return {"subject": subject, "links": links, "owner": chosen.group, "audit": package.audit,
            "run_id": package.run_id,
            "status": package.status, "doc": doc, "s": doc.summary, "trends": trends, "rows": rows,
            "changes": changes, "resolved": resolved, "report_path": str(report_path),
            "findings_path": str(package.findings_path), "attached": attached,
            "filing_error": package.filing_error, "not_run": sum(f.not_run for f in doc.findings),
            "whole": WHOLE,
            # drawn by watchdog.report.charts (numbers formatted, labels escaped there): markup, not text
            "sparklines": {name: Markup(svg) for name, svg in package.sparklines.items()}}


class EmailSender:
    kind = "email"

    def __init__(self, smtp: SmtpConfig, to: list[str], attach_findings: bool = True, *,
                 ssl_context: ssl.SSLContext | None = None, public_url: str | None = None,
                 select: Select | None = None):
        self.smtp = smtp
        self.to = list(to)
        self.attach_findings = attach_findings
        #: where the people it goes to open ``watchdog serve --ui``: the message links to its pages
        self.public_url = public_url
        #: the problem checks the message lists (routing; set per message by the outbox)
        self.select = select or Select()
        #: the route of the message being sent (set by the outbox): names its recipient apart from the target
        self.route: dict[str, Any] = {}
        #: the TLS context for starttls/ssl (default: ssl.create_default_context(), verifying the server)
        self.ssl_context = ssl_context
        register_secret(smtp.password.get_secret_value())

    def targets(self) -> list[str]:
        return list(self.to)

    def build_message(self, package: RunPackage, target: str) -> EmailMessage:
        """The message for one recipient (rendered, not sent). ``target``: the recipient, and with
        ``group_by: owner`` the owner group (:func:`watchdog.delivery.routing.target_of`)."""
        try:
            raw = package.findings_bytes()
            doc = FindingsDoc.from_json(raw)
        except (OSError, ValueError) as exc:
            raise DeliveryError(redact(f"cannot read the findings of run {package.run_id} "
                                       f"({package.findings_path}): {getattr(exc, 'strerror', None) or exc}")) from None
        context = email_context(package, doc, attached=self.attach_findings, select=self.select,
                                public_url=self.public_url)
        env = environment()
        msg = EmailMessage()
        msg["Subject"] = context["subject"]
        msg["From"] = self.smtp.sender
        msg["To"] = destination_of(target, self.route)
        msg["Date"] = format_datetime(datetime.now(UTC))
        msg["Message-ID"] = message_id(package.run_id, target)
        msg["X-Watchdog-Run"] = package.run_id
        msg["Auto-Submitted"] = "auto-generated"
        # findings are filed with secrets masked already; redact again in case one slipped into a value
        msg.set_content(redact(env.get_template("email.txt.j2").render(context)), subtype="plain", charset="utf-8")
        msg.add_alternative(redact(env.get_template("email.html.j2").render(context)), subtype="html",
                            charset="utf-8")
        if self.attach_findings:
            msg.add_attachment(redact(raw.decode("utf-8")).encode("utf-8"), maintype="application",
                               subtype="json", filename="findings.json")
        return msg

    def send(self, package: RunPackage, target: str) -> None:
        msg = self.build_message(package, target)
        c = self.smtp
        try:
            with self._connect() as client:
                if c.username:
                    client.login(c.username, c.password.get_secret_value())
                client.send_message(msg, from_addr=c.sender, to_addrs=[destination_of(target, self.route)])
        except (smtplib.SMTPException, OSError) as exc:  # socket.timeout and ssl.SSLError are OSErrors
            raise DeliveryError(self._mask(f"cannot send the e-mail to {target} through {c.host}:{c.port} "
                                           f"(security: {c.security}): {_describe(exc, c.timeout_s)}")) from None

    def _connect(self) -> smtplib.SMTP:
        c = self.smtp
        if c.security == "ssl":
            return smtplib.SMTP_SSL(c.host, c.port, timeout=c.timeout_s, context=self._context())
        client = smtplib.SMTP(c.host, c.port, timeout=c.timeout_s)
        if c.security == "starttls":
            try:
                client.starttls(context=self._context())
                client.ehlo()
            except BaseException:
                client.close()
                raise
        return client

    def _context(self) -> ssl.SSLContext:
        return self.ssl_context or ssl.create_default_context()

    def _mask(self, text: str) -> str:
        """:func:`redact`, and also the password as an SMTP AUTH exchange would carry it (base64)."""
        out = redact(text)
        password, user = self.smtp.password.get_secret_value(), self.smtp.username
        if password:
            for plain in (password, f"\0{user}\0{password}", f"{user}\0{password}"):
                encoded = base64.b64encode(plain.encode("utf-8")).decode("ascii")
                for variant in (encoded, encoded.rstrip("=")):
                    out = out.replace(variant, MASK)
            out = out.replace(password, MASK)
        return out


def _describe(exc: BaseException, timeout_s: float) -> str:
    """A short, human reason for an SMTP/socket failure."""
    if isinstance(exc, smtplib.SMTPAuthenticationError):
        return f"authentication failed ({_reply(exc)})"
    if isinstance(exc, smtplib.SMTPRecipientsRefused):
        refused = "; ".join(f"{rcpt}: {code} {_text(msg)}" for rcpt, (code, msg) in exc.recipients.items())
        return f"recipient refused ({refused})"
    if isinstance(exc, smtplib.SMTPSenderRefused):
        return f"sender {exc.sender} refused ({_reply(exc)})"
    if isinstance(exc, smtplib.SMTPResponseException):
        return f"the server answered {_reply(exc)}"
    if isinstance(exc, smtplib.SMTPNotSupportedError):
        return f"the server does not support it: {exc}"
    if isinstance(exc, smtplib.SMTPServerDisconnected):
        return f"the server closed the connection ({exc or 'no reason given'})"
    return network_reason(exc, timeout_s, "SMTP server") or str(exc) or type(exc).__name__


def _reply(exc: smtplib.SMTPResponseException) -> str:
    return f"{exc.smtp_code} {_text(exc.smtp_error)}".strip()


def _text(value: bytes | str) -> str:
    text = value.decode("utf-8", "replace") if isinstance(value, bytes) else str(value)
    return plain_text(text, 300)
