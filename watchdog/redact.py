"""Keep secrets out of every message, log line, report and file watchdog writes.

Passwords found in database URLs (and any other secret a caller registers) are
remembered process-wide and replaced by ``***`` wherever :func:`redact` is applied.
URL credentials (``scheme://user:password@host``) are masked even when the secret
was never registered.
"""

from __future__ import annotations

import logging
import re
from urllib.parse import unquote, urlsplit

MASK = "***"
_secrets: set[str] = set()
_URL_PASSWORD = re.compile(r"(?P<head>[a-zA-Z][a-zA-Z0-9+.\-]*://[^:/@\s]*:)(?P<pw>[^@\s]+)(?=@)")


def register_secret(value: str | None) -> None:
    """Remember ``value`` as a secret to be masked from now on (short values are ignored)."""
    if value and len(value) >= 3:
        _secrets.add(value)
        if unquote(value) != value:
            _secrets.add(unquote(value))


def redact(text: object) -> str:
    """Return ``text`` as a string with every known secret and URL password masked."""
    out = _URL_PASSWORD.sub(lambda m: m.group("head") + MASK, str(text))
    for secret in sorted(_secrets, key=len, reverse=True):
        out = out.replace(secret, MASK)
    return out


def safe_url(url: str) -> str:
    """The URL as it may be shown: the password replaced by ``***`` (and remembered as a secret)."""
    if url.startswith("sqlite:///") and "@" not in url:  # a file path: nothing to hide, no SQLAlchemy to import
        return redact(url)
    if url.startswith(("postgresql://", "postgresql+psycopg://")):  # read without SQLAlchemy too
        try:
            password = urlsplit(url).password
        except ValueError:
            password = None
        if password:
            register_secret(password)
            register_secret(unquote(password))
        return redact(url)
    try:
        from sqlalchemy.engine import make_url  # only when a URL is shown: SQLAlchemy is slow to import

        parsed = make_url(url)
    except Exception:  # not a SQLAlchemy URL: mask anything that looks like credentials
        return redact(url)
    register_secret(parsed.password if isinstance(parsed.password, str) else None)
    return redact(parsed.render_as_string(hide_password=True))


class RedactingFilter(logging.Filter):
    """A logging filter that masks secrets in every record it passes."""

    def filter(self, record: logging.LogRecord) -> bool:
        record.msg = redact(record.getMessage())
        record.args = ()
        return True
