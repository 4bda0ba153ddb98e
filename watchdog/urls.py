"""How watchdog reads a URL: one rule for credentials, used wherever a URL is parsed.

Settings, the sandbox, the history store, delivery (webhooks), the MCP server, the dashboard and the
redaction of every message (:mod:`watchdog.redact`) read a URL's credentials through :func:`split_url`:

* the **user info** is everything between ``scheme://`` and the *last* ``@`` before the host, so a
  password may hold any printable character, ``@ # / ? : %`` and spaces included
  (``postgresql://u:p@ss#word@db/shop`` is user ``u``, password ``p@ss#word``, host ``db``);
* the **password** is everything between the first ``:`` of the user info and that ``@``;
* "the host" is the last ``@``-free run after an ``@`` that reads as ``host[:port]`` (a comma-separated
  list for libpq) and is followed by ``/``, ``?`` or the end. Without a ``:`` (no password) the user
  info cannot hold ``/``, ``?`` or ``#``: an ``@`` behind those is in the path or query. Where a URL has
  a ``:`` before an ``@`` (a password, or a port), an ``@`` in its path or query must be written ``%40``:
  it is read as the end of the user info, so more is hidden, and the connection fails with a hint to
  percent-encode. Hiding too much is the safe way to be wrong.

:func:`driver_url` writes such a URL as drivers read it -- the user name, the password and secret query
values percent-encoded (``%40`` for ``@``, ``%23`` for ``#``; an existing ``%XX`` stays an escape), the
scheme ``postgres://`` as ``postgresql://`` -- so it connects as written. :func:`dsn_url` turns a libpq
keyword string (``host=db user=u password='p w' dbname=shop``) into the same URL form.

This module is pure (no I/O, no SQLAlchemy): :mod:`watchdog.redact` registers what
:func:`url_secrets` finds before anything can print it.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from urllib.parse import quote, unquote

_SCHEME = re.compile(r"(?P<scheme>[a-zA-Z][a-zA-Z0-9+.\-]*)://")
#: one ``host[:port]`` of an authority: a bracketed IPv6 literal or a name without separators
_HOSTPORT = re.compile(r"(?:\[[0-9A-Fa-f:.]+(?:%[\w.\-]+)?\]|[A-Za-z0-9\-._~%]*)(?::\d+)?")
#: a query parameter whose value is a secret
SECRET_PARAM = re.compile(r"passfile|[\w.\-]*(?:pass(?:word|wd)?|pwd|secret|token|key|auth|credential|signature)"
                          r"[\w.\-]*", re.IGNORECASE)
#: where a new query parameter starts: ``&`` or ``;`` before ``name=`` (a raw ``&`` elsewhere stays in the value)
_PARAM_START = re.compile(r"[&;](?=[A-Za-z_][\w.\-]*=)")
_ESCAPE = re.compile(r"%[0-9A-Fa-f]{2}")
#: ``postgres://`` is what Heroku, Render and most docs write; SQLAlchemy knows only ``postgresql``
SCHEME_ALIASES = {"postgres": "postgresql"}
WEB_SCHEMES = frozenset({"http", "https"})
#: what the percent-encoding hint names (the characters that cut a URL when left raw)
ENCODE_HINT = "percent-encode @ as %40, # as %23, / as %2F, ? as %3F, : as %3A and % as %25"


@dataclass(frozen=True)
class UrlParts:
    """A URL cut by the credentials rule; every part as written (not decoded)."""

    scheme: str
    user: str | None      #: None: no user info
    password: str | None  #: None: no ``:`` in the user info
    authority: str        #: ``host[:port]`` (or a comma-separated list)
    path: str             #: from the ``/`` after the authority, without the query
    query: str            #: after the ``?`` (``#`` belongs to the query in a database URL)
    has_query: bool
    #: more than one ``@`` could end the user info (the last one was taken): a failure suggests encoding
    ambiguous: bool = False

    def shown(self, user: str | None, password: str | None, query: str | None = None) -> str:
        """The URL again with these user, password and query parts."""
        info = "" if user is None else (f"{user}:{password}@" if password is not None else f"{user}@")
        q = self.query if query is None else query
        return f"{self.scheme}://{info}{self.authority}{self.path}{'?' if self.has_query else ''}{q}"


def split_url(url: str) -> UrlParts | None:
    """``url`` cut into its parts by the module's rule, or None when it is not ``scheme://...``."""
    match = _SCHEME.match(url)
    if not match:
        return None
    scheme, rest = match.group("scheme"), url[match.end():]
    web = scheme.lower() in WEB_SCHEMES
    userinfo, rest, ambiguous = _cut_userinfo(rest, "/?#" if web else "/?")
    user = password = None
    if userinfo is not None:
        user, colon, pw = userinfo.partition(":")
        password = pw if colon else None
    ends = [i for i in (rest.find(c) for c in ("/?#" if web else "/?")) if i >= 0]
    cut = min(ends) if ends else len(rest)
    authority, tail = rest[:cut], rest[cut:]
    path, question, query = tail.partition("?")
    return UrlParts(scheme, user, password, authority, path, query, bool(question), ambiguous)


def _cut_userinfo(rest: str, ends: str) -> tuple[str | None, str, bool]:
    """(user info, what follows its ``@``, ambiguous) of what follows ``scheme://``; ``ends``: the characters
    that may follow a host (a database URL has no fragment: ``#`` is not one of them)."""
    first_at = rest.find("@")
    if first_at < 0 or rest.startswith("/"):
        return None, rest, False
    colon = rest.find(":")
    if colon < 0 or rest.find("@", colon) < 0:  # no password: "user@" holds no "/", "?" or "#"
        stops = [i for i in (rest.find(c) for c in "/?#") if i >= 0]
        last = rest.rfind("@", 0, min(stops) if stops else len(rest))
        return (None, rest, False) if last < 0 else (rest[:last], rest[last + 1:], False)
    hosts = [i for i in _ats(rest) if i > colon and _reads_as_host(rest, i, ends)]
    if not hosts:  # no @ is followed by a host: all of it may be the password (it is hidden, and fails)
        return rest, "", True
    last = hosts[-1]
    return rest[:last], rest[last + 1:], len(hosts) > 1


def _ats(text: str) -> list[int]:
    return [i for i, c in enumerate(text) if c == "@"]


def _reads_as_host(rest: str, at: int, ends: str) -> bool:
    tail = rest[at + 1:]
    cuts = [i for i in (tail.find(c) for c in ends) if i >= 0]
    authority = tail[:min(cuts)] if cuts else tail
    return "@" not in authority and all(_HOSTPORT.fullmatch(part) for part in authority.split(","))


def query_pairs(query: str) -> list[tuple[str, str, str]]:
    """``(separator, name, value)`` per parameter of a query (``sep`` is "" for the first one). A raw ``&``
    or ``;`` starts a parameter only before ``name=``: elsewhere it stays in the value (``password=p&ss``)."""
    out = []
    start, sep = 0, ""
    for match in _PARAM_START.finditer(query):
        out.append((sep, *_pair(query[start:match.start()])))
        start, sep = match.end(), match.group(0)
    out.append((sep, *_pair(query[start:])))
    return out


def _pair(text: str) -> tuple[str, str]:
    name, eq, value = text.partition("=")
    return (name, value) if eq else (name, "\0")  # "\0": a parameter without "=" (kept as written)


def join_query(pairs: list[tuple[str, str, str]]) -> str:
    return "".join(f"{sep}{name}" if value == "\0" else f"{sep}{name}={value}" for sep, name, value in pairs)


def is_secret_param(name: str) -> bool:
    return bool(SECRET_PARAM.fullmatch(unquote(name)))


def encode(text: str) -> str:
    """``text`` percent-encoded for a URL's user info or query value; an existing ``%XX`` stays an escape."""
    out, i = [], 0
    for match in _ESCAPE.finditer(text):
        out.append(quote(text[i:match.start()], safe=""))
        out.append(match.group(0))
        i = match.end()
    out.append(quote(text[i:], safe=""))
    return "".join(out)


#: what a web URL's query values and user name must be at least to count as secrets (a shorter one would
#: mask common words everywhere); a password or a secret parameter counts from :data:`MIN_SECRET` on
MIN_WEB_VALUE, MIN_WEB_USER, MIN_SECRET = 6, 8, 3


def url_secrets(url: str, *, web_rules: bool = True) -> list[str]:
    """Every secret ``url`` carries, as written, decoded and encoded: the password (and its pieces between
    raw ``@`` and ``#``, as a driver misreading it might print them), secret query values, and for web URLs
    under ``web_rules`` every query value and a token given as the user name."""
    parts = split_url(url)
    if parts is None:
        return _forms(loose_passwords(url))
    found: list[str] = []
    web = web_rules and parts.scheme.lower() in WEB_SCHEMES
    if parts.password is not None:
        found.append(parts.password)
        found += [piece for piece in re.split(r"[@#]", parts.password) if len(piece) >= MIN_WEB_VALUE]
    elif web and parts.user and len(parts.user) >= MIN_WEB_USER:
        found.append(parts.user)
    for _sep, name, value in query_pairs(parts.query) if parts.has_query else ():
        if value != "\0" and (is_secret_param(name) or (web and len(value) >= MIN_WEB_VALUE)):
            found.append(value)
    found += _secret_params_anywhere(url)
    return _forms(found)


def _forms(found: list[str]) -> list[str]:
    """Each value as written, decoded and encoded (those of at least :data:`MIN_SECRET` characters)."""
    out: list[str] = []
    for value in found:
        for form in (value, unquote(value), encode(value)):
            if len(form) >= MIN_SECRET and form not in out:
                out.append(form)
    return out


def loose_password_span(text: str) -> tuple[int, int] | None:
    """Where the password of a string that is *not* a URL (:func:`split_url` cannot cut it) would be:
    ``user:password@host/db`` without a scheme, ``postgresql:/user:password@host`` with one slash. The
    user info ends at the last ``@``; what may be the password runs from the string's first ``:`` to that
    ``@`` (a scheme's user name is hidden with it). None when the string has no ``:`` before an ``@``. Hiding
    too much is the safe way to be wrong."""
    if split_url(text) is not None:
        return None
    at = text.rfind("@")
    colon = text.find(":", 0, at) if at > 0 else -1
    # from the very first ``:``: ``reader:/pw@h`` may be a password starting with ``/`` or a scheme with one
    # slash, and ``postgresql:/reader:pw@h`` then shows no user name either
    return (colon + 1, at) if colon >= 0 else None


def loose_passwords(text: str) -> list[str]:
    """The password of a string that is no URL (see :func:`loose_password_span`), and each tail of it after a
    ``:`` (had the user name held a ``:``, the password is one of them)."""
    span = loose_password_span(text)
    if span is None:
        return []
    secret = text[span[0]:span[1]]
    tails = [secret[i + 1:] for i, c in enumerate(secret) if c == ":"]
    return [secret, *(tail for tail in tails if len(tail) >= MIN_SECRET)]


_ANY_PARAM = re.compile(r"[?&;]([A-Za-z_][\w.\-]*)=")


def _secret_params_anywhere(url: str) -> list[str]:
    """Secret ``name=value`` pairs wherever they stand, also where a raw ``@`` in a value made the parser
    read them as user info: their values are registered all the same."""
    out = []
    for match in _ANY_PARAM.finditer(url):
        if is_secret_param(match.group(1)):
            end = _PARAM_START.search(url, match.end())
            out.append(url[match.end():end.start() if end else len(url)])
    return out


def driver_url(url: str) -> str:
    """``url`` as drivers read it: scheme aliases resolved, user, password and secret query values
    percent-encoded. Idempotent; a URL it cannot cut is returned unchanged."""
    parts = split_url(url)
    if parts is None:
        return url
    backend, plus, driver = parts.scheme.partition("+")
    scheme = SCHEME_ALIASES.get(backend.lower(), backend) + plus + driver
    user = None if parts.user is None else encode(parts.user)
    password = None if parts.password is None else encode(parts.password)
    query = parts.query
    if parts.has_query:
        query = join_query([(sep, name, encode(value) if value != "\0" and is_secret_param(name) else value)
                            for sep, name, value in query_pairs(parts.query)])
    return UrlParts(scheme, user, password, parts.authority, parts.path, query, parts.has_query).shown(
        user, password)


def needs_encoding_hint(url: str) -> bool:
    """Whether a connection failure on ``url`` should say how to percent-encode its password: the password
    holds characters that cut a URL (as written), or more than one ``@`` could end its user info."""
    parts = split_url(url)
    if parts is None or parts.password is None:
        return False
    return parts.ambiguous or any(c in parts.password for c in "@#/?:% ") or (
        "%" in parts.password and not _ESCAPE.search(parts.password))


def database_url(text: str) -> str | None:
    """``--db`` (or an MCP ``database``) as a URL: a URL as given, a libpq keyword string as a URL; None for
    a name to look up in the configuration. Raises ValueError (naming no value) for a broken keyword string."""
    if looks_like_dsn(text):
        return dsn_url(text)
    return text if "://" in text else None


def file_url_hint(text: str, exists: bool) -> str:
    """What to write instead of a bare file path given where a URL or a name was expected ("" for none)."""
    if not exists:
        return ""
    kind = "duckdb" if text.lower().endswith((".duckdb", ".ddb")) else "sqlite"
    return f"; {text!r} is a file: write {kind}:///{text.removeprefix('./')} (a URL) to read it"


# --------------------------------------------------------------------------- libpq keyword strings

_DSN_WORD = re.compile(r"\s*([A-Za-z_][A-Za-z0-9_]*)\s*=\s*")
_DSN_START = re.compile(r"\s*[A-Za-z_][A-Za-z0-9_]*\s*=")


def looks_like_dsn(text: str) -> bool:
    """``host=... password=...`` (libpq's keyword form) rather than a URL or a configured name."""
    return "://" not in text.split("=", 1)[0] and bool(_DSN_START.match(text))


def dsn_pairs(text: str) -> list[tuple[str, str]]:
    """The ``(keyword, value)`` pairs of a libpq keyword string (values quoted ``'...'`` with ``\\'`` and
    ``\\\\`` escapes, or a run of non-space characters). Raises ValueError naming the position, not the value."""
    pairs, i = [], 0
    while i < len(text):
        if text[i:].strip() == "":
            break
        match = _DSN_WORD.match(text, i)
        if not match:
            raise ValueError(f"expected keyword=value at character {i + 1}")
        key, i = match.group(1), match.end()
        if i < len(text) and text[i] == "'":
            value, i = _quoted(text, i + 1)
        else:
            j = i
            while j < len(text) and not text[j].isspace():
                j += 1
            value, i = text[i:j], j
        pairs.append((key, value))
    return pairs


def _quoted(text: str, i: int) -> tuple[str, int]:
    out = []
    while i < len(text):
        c = text[i]
        if c == "\\" and i + 1 < len(text):
            out.append(text[i + 1])
            i += 2
        elif c == "'":
            return "".join(out), i + 1
        else:
            out.append(c)
            i += 1
    raise ValueError("a quoted value is not closed (a ' is missing)")


def dsn_url(text: str) -> str:
    """A libpq keyword string as a ``postgresql+psycopg://`` URL (every value percent-encoded: a ``%`` in
    a keyword value is a plain character)."""
    values = dict(dsn_pairs(text))
    user, password = values.pop("user", None), values.pop("password", None)
    host, port = values.pop("host", ""), values.pop("port", "")
    dbname = values.pop("dbname", "")
    if "/" in host or "," in host:  # a socket directory (or a list): libpq takes it as a parameter
        values = {"host": host, **values}
        host = ""
    info = ""
    if user is not None or password is not None:
        info = literal(user or "") + ("" if password is None else ":" + literal(password)) + "@"
    authority = (f"[{host}]" if ":" in host else host) + (f":{port}" if port else "")
    query = "&".join(f"{k}={literal(v)}" for k, v in values.items())
    return f"postgresql+psycopg://{info}{authority}/{literal(dbname)}" + (f"?{query}" if query else "")


def literal(text: str) -> str:
    """``text`` percent-encoded entirely (a ``%`` included): for values that hold no escapes."""
    return quote(text, safe="")
