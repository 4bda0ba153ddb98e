"""The URL password rule, property-tested: for a password of any printable characters, in every form a URL
carries one (user info as written, user info percent-encoded, ``?password=``, libpq keywords), the parser
finds exactly that password, the driver gets it intact (SQLAlchemy's and libpq's own parsers read it back),
and no redacted form shows any of it.

Pure functions only (no I/O), so hypothesis runs many examples fast; ``test_password_outputs.py`` takes a
handful of nasty passwords through every output against real servers.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from contextlib import contextmanager
from urllib.parse import quote

import psycopg
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st
from sqlalchemy.engine import make_url

from watchdog import redact as redaction
from watchdog.redact import MASK, redact, redact_url
from watchdog.urls import driver_url, dsn_url, needs_encoding_hint, split_url, url_secrets

#: every printable character: letters, digits, punctuation and symbols of any script, and the space
PRINTABLE = st.characters(codec="utf-8", categories=("L", "M", "N", "P", "S", "Zs"))
PASSWORDS = st.text(PRINTABLE, min_size=1, max_size=24)
#: the characters that cut a URL, so the examples hit them often
NASTY = st.text(st.sampled_from("@#:/?%&;= '\"\\`$!+,[]{}|~^ü✓"), min_size=1, max_size=12)
ANY_PASSWORD = st.one_of(PASSWORDS, NASTY, st.builds(lambda a, b: a + b, NASTY, PASSWORDS))
USERS = st.sampled_from(["reader", "me@srv", "dq_ro"])
HOSTS = st.sampled_from(["127.0.0.1:5432", "db.example.com", "[::1]:5433", "h1:5432,h2:5433"])
SCHEMES = st.sampled_from(["postgresql", "postgresql+psycopg", "postgres", "mysql+pymysql", "mariadb+pymysql"])
ESCAPE = re.compile(r"%[0-9A-Fa-f]{2}")
EXAMPLES = settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow])


@contextmanager
def secrets_restored() -> Iterator[None]:
    """Each example registers its secrets; take them out again so they mask nothing in other tests."""
    saved = set(redaction._secrets)
    try:
        yield
    finally:
        redaction._secrets.clear()
        redaction._secrets.update(saved)


def masked(expected: str) -> str:
    """``expected`` with the registered secrets masked too: a password that is also a common piece of text
    (``://``, ``shop``) is hidden wherever it shows up, which hides more than needed but never too little."""
    return redaction._mask_registered(expected)


def _driver_reads(url: str, password: str, user: str, database: str) -> None:
    """SQLAlchemy (every driver) and libpq (psycopg without SQLAlchemy) read the driver URL as meant."""
    parsed = make_url(driver_url(url))
    assert (parsed.password, parsed.username, parsed.database) == (password, user, database)
    if parsed.get_backend_name() == "postgresql" and "," not in (parsed.host or ""):
        libpq = psycopg.conninfo.conninfo_to_dict("postgresql://" + driver_url(url).split("://", 1)[1])
        assert (libpq["password"], libpq["user"], libpq["dbname"]) == (password, user, database)


@EXAMPLES
@given(password=ANY_PASSWORD, user=USERS, host=HOSTS, scheme=SCHEMES)
def test_user_info_as_written_is_read_masked_and_encoded(password, user, host, scheme):
    assume(not ESCAPE.search(password))  # a raw "%41" is an escape by the URL standard: written %2541
    url = f"{scheme}://{user}:{password}@{host}/shop?sslmode=require"
    parts = split_url(url)
    assert (parts.user, parts.password, parts.authority, parts.path) == (user, password, host, "/shop")
    with secrets_restored():
        assert redact_url(url) == masked(f"{scheme}://{user}:{MASK}@{host}/shop?sslmode=require")
        assert redact(f"cannot connect to {url}: refused") == \
            masked(f"cannot connect to {scheme}://{user}:{MASK}@{host}/shop?sslmode=require: refused") or \
            any(c.isspace() for c in password)  # a URL in prose ends at white space: the registry masks the rest
        if len(password) >= 3:  # registered: masked wherever it shows up later (shorter ones would mask words)
            assert password not in redact(f"a driver said {password!r} and {password}")
    if "," not in host:
        _driver_reads(url, password, user, "shop")
    assert driver_url(driver_url(url)) == driver_url(url)


@EXAMPLES
@given(password=ANY_PASSWORD, user=USERS, host=HOSTS, scheme=SCHEMES)
def test_user_info_percent_encoded_is_read_and_masked(password, user, host, scheme):
    url = f"{scheme}://{quote(user, safe='')}:{quote(password, safe='')}@{host}/shop"
    with secrets_restored():
        assert redact_url(url) == masked(f"{scheme}://{quote(user, safe='')}:{MASK}@{host}/shop")
        if len(password) >= 3:
            assert password not in redact(f"it said: {password}")
    if "," not in host:
        _driver_reads(url, password, user, "shop")


@EXAMPLES
@given(password=ANY_PASSWORD, encoded=st.booleans())
def test_password_query_parameter_is_read_and_masked(password, encoded):
    written = quote(password, safe="") if encoded else password
    if not encoded:  # as written, "&name=" starts another parameter and "%41" is an escape (RFC 3986)
        assume(not re.search(r"[&;][A-Za-z_][\w.\-]*=", password) and not ESCAPE.search(password))
    url = f"postgresql+psycopg://reader@127.0.0.1:5432/shop?password={written}&sslmode=require"
    with secrets_restored():
        shown = redact_url(url)
        if "@" in written:  # after the port's ":", a raw @ ends the user info: more is hidden, and the
            assert needs_encoding_hint(url)  # connection fails saying to percent-encode
            assert password not in shown.split("://", 1)[1] or len(password) < 3
            return
        assert shown == masked("postgresql+psycopg://reader@127.0.0.1:5432/shop?password=***&sslmode=require")
        if len(password) >= 3:
            assert password not in redact(f"libpq: {password}")
    assert make_url(driver_url(url)).query["password"] == password
    libpq = psycopg.conninfo.conninfo_to_dict("postgresql://" + driver_url(url).split("://", 1)[1])
    assert libpq["password"] == password


def _libpq_quoted(value: str) -> str:
    return "'" + value.replace("\\", "\\\\").replace("'", "\\'") + "'"


@EXAMPLES
@given(password=ANY_PASSWORD)
def test_libpq_keyword_string_is_read_and_masked(password):
    dsn = f"host=127.0.0.1 port=5432 user=reader password={_libpq_quoted(password)} dbname=shop"
    assert psycopg.conninfo.conninfo_to_dict(dsn)["password"] == password  # libpq reads our quoting so
    url = dsn_url(dsn)
    _driver_reads(url, password, "reader", "shop")
    with secrets_restored():
        assert redact(f"connection string: {dsn}") == \
            masked("connection string: host=127.0.0.1 port=5432 user=reader password=*** dbname=shop")
        assert password not in redact_url(url).split("@", 1)[0].split(":", 2)[-1] or password in "***"


#: the ways a database string misses being a URL: no scheme, one slash, no colon, a space in the scheme
NO_URL = st.sampled_from(["{user}:{pw}@{host}/shop", "postgresql:/{user}:{pw}@{host}/shop",
                          "mysql+pymysql//{user}:{pw}@{host}/shop", "postgresql :{user}:{pw}@{host}"])


@EXAMPLES
@given(password=ANY_PASSWORD, user=st.sampled_from(["reader", "dq_ro"]), host=HOSTS, form=NO_URL)
def test_a_string_that_is_no_url_still_hides_its_password(password, user, host, form):
    """A ``--db`` that is no URL at all (split_url cannot cut it) is shown with everything from the first ``:``
    of its user info to its last ``@`` masked, and the password is registered: a later message hides it too."""
    text = form.format(user=user, pw=password, host=host)
    assume(split_url(text) is None)
    with secrets_restored():
        shown = redact_url(text)
        assert MASK in shown and shown.endswith(f"@{host}" + ("/shop" if "shop" in form else ""))
        if len(password) >= 3:
            assert password not in shown.replace(MASK, "")
            assert password not in redact(f"the driver said: {password}")


@EXAMPLES
@given(password=ANY_PASSWORD)
def test_every_secret_form_is_registered(password):
    """What url_secrets returns covers the password as written, decoded and encoded (all masked later)."""
    assume(not ESCAPE.search(password))
    found = url_secrets(f"postgresql://u:{password}@h/db")
    if len(password) >= 3:
        assert password in found and quote(password, safe="") in found


def test_the_issue_examples():
    assert redact_url("postgresql+psycopg://postgres:s3cr3t@tpass@127.0.0.1/db") == \
        "postgresql+psycopg://postgres:***@127.0.0.1/db"
    assert redact_url("postgresql+psycopg://postgres:p@ss#word@127.0.0.1/db") == \
        "postgresql+psycopg://postgres:***@127.0.0.1/db"
    assert driver_url("postgresql+psycopg://postgres:p@ss#word@127.0.0.1/db") == \
        "postgresql+psycopg://postgres:p%40ss%23word@127.0.0.1/db"
    assert driver_url("postgres://u@h/db") == "postgresql://u@h/db"
    # an @ in the path or query of a URL without a password is not user info
    assert redact_url("postgresql://h/db?application_name=a@b") == "postgresql://h/db?application_name=a@b"
    assert driver_url("postgresql://u@h/db?application_name=a@b") == "postgresql://u@h/db?application_name=a@b"
    # SQLite and DuckDB paths are never user info
    assert driver_url("sqlite:////srv/a@b/x.db") == "sqlite:////srv/a@b/x.db"
    # a web URL: the whole user info, query and fragment hidden, whatever the password holds
    assert redact_url("https://bot:p@ss#w/rd@hooks.example/x?token=abc#frag") == "https://***@hooks.example/x?***"
