"""Keep secrets out of every message, log line, report and file watchdog writes.

One function decides how a URL may be shown: :func:`redact_url`. Every path that prints, logs or
stores a URL (findings, reports, history, daemon logs, e-mail, webhooks, tracebacks) goes through it,
directly or through :func:`redact`, which applies the same rules to every URL inside a text and
masks every secret registered so far.

What a URL may not show:

* **credentials** -- the password by the one rule of :mod:`watchdog.urls` (the user info ends at the
  *last* ``@`` before the host, so ``u:p@ss#word@host`` hides all of ``p@ss#word``). The user name
  stays for database URLs (``postgresql://reader:***@db/shop``);
* **secret query parameters** -- ``password``, ``sslpassword``, ``passfile``, ``sslkey`` and any
  name holding *password*, *secret*, *token*, *key*, *auth*, *credential* or *signature*
  (``api_key``, ``access_token``, ``client_secret``...);
* for **web URLs** (http, https -- webhooks carry their secret anywhere): the user name too, the
  whole query string, the fragment, and token-like path segments (Slack- and Discord-style hooks);
* in any text, libpq's ``password=...`` keyword (``password='a b'`` quoted too);
* a database string that is no URL (``user:pw@host/db``, ``postgresql:/user:pw@host``), given to
  :func:`redact_url`: everything from the first ``:`` to the last ``@``
  (:func:`watchdog.urls.loose_password_span`).

Each secret found is also remembered (:func:`register_secret`), so it is masked wherever else it
shows up later -- a driver's error message, a traceback, a libpq ``password=...`` string.
"""

from __future__ import annotations

import hashlib
import logging
import re
from dataclasses import replace
from urllib.parse import unquote

from watchdog.urls import (
    WEB_SCHEMES,
    is_secret_param,
    join_query,
    loose_password_span,
    query_pairs,
    split_url,
    url_secrets,
)

MASK = "***"
_secrets: set[str] = set()

#: a URL inside a text: a scheme, ``://`` and everything up to white space
_URL_IN_TEXT = re.compile(r"[a-zA-Z][a-zA-Z0-9+.\-]*://[^\s]+")
#: a secret keyword of libpq's ``keyword=value`` form inside a text, and its value (quoted or not); written
#: without spaces around ``=``, as connection strings are (SQL's ``password = 'x'`` is left alone)
_DSN_SECRET = re.compile(r"(\b(?:password|sslpassword)=)(?!\*\*\*(?:[&;\s]|$))(?:'(?:[^'\\]|\\.)*'?|[^\s'][^\s]*)",
                         re.IGNORECASE)  # (a value already masked in a URL is left as it is)
#: a path segment that looks like a token (long, with a digit): masked in web URLs
_TOKEN_SEGMENT = re.compile(r"^(?=.*\d)[A-Za-z0-9_\-.~%]{16,}$")


def register_secret(value: str | None) -> None:
    """Remember ``value`` as a secret to be masked from now on (short values are ignored)."""
    for form in {value, unquote(value)} if value else ():
        if len(form) >= 3:
            _secrets.add(form)


def register_url_secrets(url: str) -> None:
    """Remember every secret ``url`` carries (see :func:`watchdog.urls.url_secrets`)."""
    for secret in url_secrets(str(url)):
        register_secret(secret)


def redact_url(url: str) -> str:
    """``url`` as it may be shown, printed, logged or stored (see the module's rules)."""
    return _mask_registered(_mask_keywords(_mask_url(str(url), web_rules=True)))


def redact(text: object) -> str:
    """``text`` as a string with the credentials and secret parameters of every URL in it masked,
    and every registered secret too. (The stricter web-URL rules apply to :func:`redact_url` only:
    a link in prose keeps its query.)"""
    out = _URL_IN_TEXT.sub(lambda m: _mask_url(m.group(0), web_rules=False), str(text))
    return _mask_registered(_mask_keywords(out))


def _mask_registered(text: str) -> str:
    for secret in sorted(_secrets, key=len, reverse=True):
        text = text.replace(secret, MASK)
    return text


def _mask_url(url: str, *, web_rules: bool) -> str:
    parts = split_url(url)
    if parts is None:  # no URL (``user:pw@host/db``, ``postgresql:/user:pw@host``): its password all the same
        span = loose_password_span(url)
        if span is None:
            return url
        for secret in url_secrets(url):
            register_secret(secret)
        return url[:span[0]] + MASK + url[span[1]:]
    for secret in url_secrets(url, web_rules=web_rules):
        register_secret(secret)
    web = web_rules and parts.scheme.lower() in WEB_SCHEMES
    user, password = parts.user, parts.password
    if user is not None and (web or password is not None):
        user, password = (MASK, None) if web else (user, MASK)
    path, query = parts.path, parts.query
    if web:  # a web URL's fragment is dropped, its token-like path segments masked
        path = "/".join(_mask_segment(seg) for seg in path.partition("#")[0].split("/"))
        query = MASK if query else ""
    elif parts.has_query:
        query = join_query([(sep, name, MASK if value not in ("", "\0") and is_secret_param(name) else value)
                            for sep, name, value in query_pairs(query)])
    return replace(parts, path=path, query=query, has_query=parts.has_query and bool(query)).shown(user, password)


def _mask_segment(segment: str) -> str:
    if _TOKEN_SEGMENT.match(segment):
        register_secret(segment)
        return MASK
    return segment


def _mask_keywords(text: str) -> str:
    """libpq's keyword form in a text (``password=secret``, ``password='a b'``): the value masked."""
    return _DSN_SECRET.sub(lambda m: m.group(1) + MASK, text)


class RedactingFilter(logging.Filter):
    """A logging filter that masks secrets in every record it passes, tracebacks included."""

    def filter(self, record: logging.LogRecord) -> bool:
        record.msg = redact(record.getMessage())
        record.args = ()
        if record.exc_info and not record.exc_text:
            record.exc_text = logging.Formatter().formatException(record.exc_info)
        if record.exc_text:
            record.exc_text = redact(record.exc_text)
        if record.stack_info:
            record.stack_info = redact(record.stack_info)
        return True


def secret_digest(secret: str) -> str:
    """What stands for a secret (a webhook URL, a token) where it must be told apart and never shown: 12 hex
    digits of its SHA-256."""
    return hashlib.sha256(secret.encode()).hexdigest()[:12]
