"""The ``webhook`` channel: POST a small JSON summary of the run to a URL (standard library only).

The request carries ``Idempotency-Key: <run_id>`` so a receiver can discard a retried delivery.
Anything but a 2xx answer (redirects included: a POST silently turned into a GET would lose the
body) is a :class:`DeliveryError`. URLs often hold a token (in the query string, the user info or
a long path segment, as Slack and Discord hooks do), so messages show a masked URL; user info in
the URL is sent as HTTP Basic authentication.
"""

from __future__ import annotations

import base64
import http.client
import json
import re
import urllib.error
import urllib.request
from collections.abc import Mapping
from typing import Any
from urllib.parse import unquote

from pydantic import SecretStr

from watchdog import __version__ as _version
from watchdog.delivery.base import DeliveryError, RunPackage, network_reason
from watchdog.delivery.routing import Select, problem_findings, resolved_findings
from watchdog.findings import FindingsDoc
from watchdog.redact import redact, redact_url, register_secret
from watchdog.report.escape import plain_text
from watchdog.report.live import public_links
from watchdog.urls import split_url

_SECRET_HEADER = re.compile(r"auth|token|key|secret|signature|cookie|password", re.IGNORECASE)
BODY_EXCERPT = 200


class _NoRedirect(urllib.request.HTTPRedirectHandler):
    def redirect_request(self, *args: Any, **kwargs: Any) -> None:
        return None  # urllib then raises HTTPError for the 3xx answer


class WebhookSender:
    kind = "webhook"

    def __init__(self, url: str, headers: Mapping[str, str | SecretStr] | None = None, timeout_s: float = 10.0, *,
                 public_url: str | None = None, select: Select | None = None):
        self.url = url
        self.public_url = public_url
        #: the problem checks the payload lists (routing; set per message by the outbox)
        self.select = select or Select()
        self.headers = {name: value.get_secret_value() if isinstance(value, SecretStr) else value
                        for name, value in (headers or {}).items()}
        self.timeout_s = timeout_s
        for name, value in self.headers.items():
            if _SECRET_HEADER.search(name):
                register_secret(value)
                register_secret(value.split()[-1] if value.split() else None)  # "Bearer <token>": the token
        redact_url(url)  # remembers the URL's secrets, so they are masked wherever they show up
        self._opener = urllib.request.build_opener(_NoRedirect())

    def targets(self) -> list[str]:
        """The URL as shown and recorded (history, outbox, logs): masked. :meth:`send` posts to the real one."""
        return [redact_url(self.url)]

    def payload(self, package: RunPackage) -> dict[str, Any]:
        """The JSON posted: the run's outcome, the problem checks this destination selects (with owners, tags
        and their change), the checks resolved, and the pages to open (with ``public_url``)."""
        body: dict[str, Any] = {
            "run_id": package.run_id, "audit": package.audit, "status": package.status, "summary": package.summary,
            "trends": package.trends, "subject": package.subject, "report_path": str(package.run_dir / "report.md")}
        trends = package.trends or {}
        doc = FindingsDoc.from_json(package.findings_bytes())
        body["checks"] = [{"name": f.name, "status": f.status, "failing": f.failing, "total": f.total,
                           "rate": f.rate, "observed": f.observed, "change": trends.get(f.name),
                           "owners": list(f.owners or ()), "tags": list(f.tags or ())}
                          for f in problem_findings(doc, trends, self.select)]
        body["resolved"] = [f.name for f in resolved_findings(doc, trends, self.select)]
        if self.select.group is not None:
            body["owner"] = self.select.group
        if self.public_url and not package.filing_error:
            (_, report), (_, audit) = public_links(self.public_url, package.audit, package.run_id)
            body["links"] = {"report": report, "audit": audit}
        if package.filing_error:  # the run is not on disk: say so, and carry the findings
            body.update(report_path=None, filing_error=package.filing_error, findings=package.findings())
        return body

    def send(self, package: RunPackage, target: str) -> None:
        target = self.url  # ``target`` is the masked form from targets(): the channel has one URL
        body = json.dumps(self.payload(package), ensure_ascii=False).encode("utf-8")
        key = package.run_id + (f":{self.select.group}" if self.select.group is not None else "")
        headers = {"User-Agent": f"watchdog/{_version}", **self.headers,
                   "Content-Type": "application/json; charset=utf-8", "Idempotency-Key": key}
        shown = redact_url(target)
        try:
            url, basic = _split_userinfo(target)
            if basic and not any(k.lower() == "authorization" for k in headers):
                headers["Authorization"] = basic
            request = urllib.request.Request(url, data=body, headers=headers, method="POST")
            with self._opener.open(request, timeout=self.timeout_s) as response:
                status = response.status
                response.read(65536)
        except urllib.error.HTTPError as exc:
            raise DeliveryError(self._mask(f"webhook {shown} answered HTTP {exc.code} {exc.reason}"
                                           f"{_excerpt(exc)}", target)) from None
        except (urllib.error.URLError, OSError, http.client.HTTPException, ValueError) as exc:
            raise DeliveryError(self._mask(f"cannot POST to webhook {shown}: {_describe(exc, self.timeout_s)}",
                                           target)) from None
        if not 200 <= status < 300:
            raise DeliveryError(self._mask(f"webhook {shown} answered HTTP {status} (expected 2xx)", target))

    @staticmethod
    def _mask(text: str, url: str) -> str:
        return redact(text.replace(url, redact_url(url)))


def _split_userinfo(url: str) -> tuple[str, str | None]:
    """``https://user:password@host/...`` -> (the URL without them, a Basic Authorization header). The user
    info ends at the last ``@`` before the host (:func:`watchdog.urls.split_url`), so a raw ``@`` or ``#``
    in the password stays in it."""
    parts = split_url(url)
    if parts is None or parts.user is None:
        return url, None
    user, password = unquote(parts.user), unquote(parts.password or "")
    register_secret(password)
    token = base64.b64encode(f"{user}:{password}".encode()).decode("ascii")
    register_secret(token)
    return parts.shown(None, None), f"Basic {token}"


def _excerpt(exc: urllib.error.HTTPError) -> str:
    try:
        body = exc.read(4096).decode("utf-8", "replace").strip()
    except Exception:
        return ""
    finally:
        exc.close()
    return f": {plain_text(body, BODY_EXCERPT)}" if body else ""


def _describe(exc: BaseException, timeout_s: float) -> str:
    reason: Any = exc.reason if isinstance(exc, urllib.error.URLError) else exc
    known = network_reason(reason, timeout_s, "receiver") if isinstance(reason, BaseException) else None
    if known:
        return known
    if isinstance(reason, ValueError):
        return "not a valid URL"
    return plain_text(str(reason) or type(reason).__name__, 300)
