"""Keep secrets out of every message, log line, report and file watchdog writes.

One function decides how a URL may be shown: :func:`redact_url`. Every path that prints, logs or
stores a URL (findings, reports, history, daemon logs, e-mail, webhooks, tracebacks) goes through it,
directly or through :func:`redact`, which applies the same rules to every URL inside a text and
masks every secret registered so far.

What a URL may not show:

* **credentials** -- everything between ``scheme://`` and the *last* ``@`` of the authority, so an
  unescaped ``@`` in a password (``u:Abc@TAIL@host``) hides the whole password. The user name before
  the first ``:`` stays for database URLs (``postgresql://reader:***@db/shop``);
* **secret query parameters** -- ``password``, ``sslpassword``, ``passfile``, ``sslkey`` and any
  name holding *password*, *secret*, *token*, *key*, *auth*, *credential* or *signature*
  (``api_key``, ``access_token``, ``client_secret``...);
* for **web URLs** (http, https -- webhooks carry their secret anywhere): the user name too, the
  whole query string, the fragment, and token-like path segments (Slack- and Discord-style hooks).

Each secret found is also remembered (:func:`register_secret`), so it is masked wherever else it
shows up later -- a driver's error message, a traceback, a libpq ``password=...`` string.
"""

from __future__ import annotations

import logging
import re
from urllib.parse import unquote

MASK = "***"
_secrets: set[str] = set()

#: a URL inside a text: a scheme, ``://`` and everything up to white space
_URL_IN_TEXT = re.compile(r"[a-zA-Z][a-zA-Z0-9+.\-]*://[^\s]+")
_SCHEME = re.compile(r"(?P<scheme>[a-zA-Z][a-zA-Z0-9+.\-]*)://")
#: a query parameter whose value is a secret
_SECRET_PARAM = re.compile(r"passfile|[\w.\-]*(?:pass(?:word|wd)?|pwd|secret|token|key|auth|credential|signature)"
                           r"[\w.\-]*", re.IGNORECASE)
#: a path segment that looks like a token (long, with a digit): masked in web URLs
_TOKEN_SEGMENT = re.compile(r"^(?=.*\d)[A-Za-z0-9_\-.~%]{16,}$")
_WEB_SCHEMES = frozenset({"http", "https"})


def register_secret(value: str | None) -> None:
    """Remember ``value`` as a secret to be masked from now on (short values are ignored)."""
    if value and len(value) >= 3:
        _secrets.add(value)
        if unquote(value) != value:
            _secrets.add(unquote(value))


def redact_url(url: str) -> str:
    """``url`` as it may be shown, printed, logged or stored (see the module's rules)."""
    return _mask_registered(_mask_url(str(url), web_rules=True))


def redact(text: object) -> str:
    """``text`` as a string with the credentials and secret parameters of every URL in it masked,
    and every registered secret too. (The stricter web-URL rules apply to :func:`redact_url` only:
    a link in prose keeps its query.)"""
    out = _URL_IN_TEXT.sub(lambda m: _mask_url(m.group(0), web_rules=False), str(text))
    return _mask_registered(out)


def _mask_registered(text: str) -> str:
    for secret in sorted(_secrets, key=len, reverse=True):
        text = text.replace(secret, MASK)
    return text


def _mask_url(url: str, *, web_rules: bool) -> str:
    match = _SCHEME.match(url)
    if not match:
        return url
    scheme, rest = match.group("scheme"), url[match.end():]
    web = web_rules and scheme.lower() in _WEB_SCHEMES
    userinfo, rest = _split_credentials(rest)
    shown = ""
    if userinfo is not None:
        user, colon, password = userinfo.partition(":")
        register_secret(password)
        for piece in password.split("@"):  # a driver may read "Abc@TAIL@host" as password Abc, host TAIL@host
            _register_found(piece)
        if web:
            if not colon and len(user) >= 8:
                register_secret(user)  # a token given as the user name
            shown = f"{MASK}@"
        else:
            shown = f"{user}:{MASK}@" if colon else f"{user}@"
    rest, hash_mark, fragment = rest.partition("#")
    rest, question, query = rest.partition("?")
    host, slash, path = rest.partition("/")
    if web:
        path = "/".join(_mask_segment(seg) for seg in path.split("/"))
        if query:
            _register_query(query, every_value=True)
            query = MASK
        hash_mark = fragment = ""
    elif query:
        query = _mask_query(query)
    return f"{scheme}://{shown}{host}{slash}{path}{question}{query}{hash_mark}{fragment}"


def _split_credentials(rest: str) -> tuple[str | None, str]:
    """(user info, the rest) of what follows ``scheme://``; user info ends at the authority's last ``@``.

    The authority ends at the first ``/``, ``?`` or ``#`` after the first ``@`` -- so ``@``, ``/`` and
    ``?`` inside a password stay part of it. An ``@`` that only appears in the path or query (no ``:``
    before the first ``/``) is not user info.
    """
    first_at = rest.find("@")
    if first_at < 0:
        return None, rest
    before = rest[:first_at]
    cut = min((i for i in (before.find("/"), before.find("?"), before.find("#")) if i >= 0), default=-1)
    if cut >= 0 and ":" not in before[:cut]:
        return None, rest  # user@ cannot hold "/": this @ is in the path or query
    ends = [i for i in (rest.find(c, first_at) for c in "/?#") if i >= 0]
    authority_end = min(ends) if ends else len(rest)
    last_at = rest.rfind("@", 0, authority_end)
    return rest[:last_at], rest[last_at + 1:]


#: values found in a URL are remembered only from this length on (a short one would mask common words)
MIN_FOUND_SECRET = 6


def _register_found(value: str) -> None:
    if len(value) >= MIN_FOUND_SECRET:
        register_secret(value)


def _mask_segment(segment: str) -> str:
    if _TOKEN_SEGMENT.match(segment):
        register_secret(segment)
        return MASK
    return segment


def _register_query(query: str, *, every_value: bool) -> None:
    for pair in re.split(r"[&;]", query):
        name, _eq, value = pair.partition("=")
        if every_value or _SECRET_PARAM.fullmatch(unquote(name)):
            _register_found(value)


def _mask_query(query: str) -> str:
    parts = []
    for pair in re.split(r"([&;])", query):
        name, eq, value = pair.partition("=")
        if eq and value and _SECRET_PARAM.fullmatch(unquote(name)):
            _register_found(value)
            pair = f"{name}={MASK}"
        parts.append(pair)
    return "".join(parts)


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
