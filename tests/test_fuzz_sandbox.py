"""Fuzzing the read-only sandbox against live SQLite, PostgreSQL and MariaDB databases.

Hypothesis builds statements from allowed SELECTs with forbidden fragments (stacked writes, SELECT
INTO, locking reads, side-effect functions, executable comments...) and random quoting, comments,
odd whitespace and unicode look-alikes spliced in anywhere. Every statement runs through a
``Sandbox`` (``timeout_s=1``) on one loaded database per kind. Whatever the parser and the
database make of it, the run must raise nothing but a ``SandboxError`` subclass, be over within
``timeout_s + 1`` seconds, and leave the database, the server and the sandbox's session exactly as
they were (the same full check as the attack corpus, after every example).

``derandomize=True``: CI runs the same examples every time.
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st

from tests.dbs import KINDS
from tests.test_attack_corpus import GRACE_S, MAX_ROWS, TIMEOUT_S, Target, attempt, build_target
from watchdog.errors import QueryRefused

EXAMPLES_PER_DATABASE = 150

#: reads that pass on every database
TEMPLATES = [
    "SELECT id, s FROM t WHERE id < 5",
    "SELECT count(*) FROM t",
    "SELECT s FROM t WHERE s <> 'x' ORDER BY id",
    "WITH x AS (SELECT id FROM t WHERE id > 2) SELECT count(*) FROM x",
    "SELECT s FROM t UNION SELECT v FROM u",
    "SELECT t.id, u.v FROM t JOIN u ON u.v = t.s",
    "SELECT id, row_number() OVER (ORDER BY id) AS rn FROM t",
    "SELECT max(id) AS m FROM t GROUP BY length(s) HAVING count(*) > 0",
    "SELECT 'literal; DELETE FROM t' AS s",
    "SELECT * FROM (SELECT id FROM t) AS sub WHERE id IN (SELECT id FROM u)",
]

#: pieces that must never get a statement through to a change
FORBIDDEN = [
    "; DROP TABLE t", "; DELETE FROM t", ";DELETE FROM t", "; UPDATE t SET s = 'pwned'",
    "; INSERT INTO t VALUES (99, 'x')",
    " INTO wd_fuzz_into", " INTO @wd_x", " FOR UPDATE", " FOR SHARE", " LOCK IN SHARE MODE",
    " INTO OUTFILE '__TMP__fuzz'", " INTO DUMPFILE '__TMP__fuzz_dump'",
    ", pg_advisory_lock(4242)", ", pg_catalog.pg_advisory_lock(4242)", ", GET_LOCK('wd_attack', 0)",
    ", nextval('t_seq')", ", NEXTVAL(s_seq)", ", setval('t_seq', 99)", ", set_config('search_path', 'x', false)",
    ", pg_sleep(5)", ", SLEEP(5)",
    ", load_extension('x')", ", lo_import('/etc/hostname')", ', U&"pg\\005fadvisory\\005flock"(4242)',
    ", pg_read_file('/etc/hostname')", ", LOAD_FILE('/etc/hostname')", ", @wd_x := 1", ", txid_current()",
    "; PRAGMA query_only = OFF", "; PRAGMA user_version = 7", "; ATTACH DATABASE '__TMP__fuzz.db' AS evil",
    "; SET GLOBAL net_read_timeout = 31", "; SET SESSION max_statement_time = 0", "; SET statement_timeout = 0",
    "; LOCK TABLES t WRITE", "; HANDLER t OPEN", "; LISTEN wd_fuzz", "; COMMIT; DELETE FROM t", "); DELETE FROM t; --",
    "/*! DELETE FROM t */", "/*!50000 , SLEEP(5) */", "/*M!100000 , GET_LOCK('wd_attack', 0) */",
    "; COPY t TO '__TMP__fuzz_copy'", "; VACUUM INTO '__TMP__fuzz_vacuum.db'", " RETURNING *",
    "WITH d AS (DELETE FROM t RETURNING *) ", "; CREATE TABLE wd_fuzz (x INT)", "; TRUNCATE t", "; DO $$BEGIN END$$",
]

#: quoting, comments, whitespace and look-alikes
NOISE = [
    "/* */", "/* ; */", "/*", "*/", "--", "-- x\n", "#", "# x\n", "'", "''", '"', "`", "$$", "$q$", "\\", "\\'",
    "E'", "U&", ";", ";;", "(", ")", ",", " ", "\t", "\n", "\r\n", "\x0b", "\x0c", "\u00a0", "\u037e", "\uff1b",
    "\u200b", "\u0415", "\u0405", "\uff24\uff25\uff2c\uff25\uff34\uff25", "\x00", "ü", "表", "%s", "%(x)s", ":x", "?",
]

#: tricky but valid between two tokens: these keep the statement a read that reaches the database
VALID_NOISE = [
    "/* DELETE FROM t; */", "/* ; DROP TABLE t */", "-- ; DROP TABLE t\n", "/* ' */", '/* " */', "/* $$ */",
    "/*+ hint */", "\n", "\t", "  ", "\r\n", "\x0c", "/* /* nested */ */",
]

#: each kind of piece is drawn as often as the others, however long its list
PIECES = st.one_of(st.sampled_from(FORBIDDEN), st.sampled_from(NOISE), st.sampled_from(VALID_NOISE))

statements = st.builds(
    lambda template, insertions, upper, between_tokens: _splice(template, insertions, upper, between_tokens),
    st.sampled_from(TEMPLATES),
    st.lists(st.tuples(st.integers(min_value=0, max_value=400), PIECES), min_size=1, max_size=4),
    st.booleans(),
    st.booleans(),
)


def _splice(template: str, insertions: list[tuple[int, str]], upper: bool, between_tokens: bool) -> str:
    """Insert each piece anywhere (between_tokens=False) or only where the template has a space."""
    sql = template.upper() if upper else template
    for position, piece in insertions:
        if between_tokens:
            spaces = [i for i, char in enumerate(sql) if char == " "] + [len(sql)]
            at = spaces[position % len(spaces)]
            piece = f" {piece} "
        else:
            at = position % (len(sql) + 1)
        sql = sql[:at] + piece + sql[at:]
    return sql


@pytest.fixture(scope="module")
def fuzz_targets(tmp_path_factory) -> Iterator:
    built: dict[str, Target] = {}

    def get(kind: str) -> Target:
        if kind not in built:
            built[kind] = build_target(kind, tmp_path_factory.mktemp(f"fuzz_{kind}"))
        return built[kind]

    yield get
    for target in built.values():
        target.close()


@pytest.mark.parametrize("kind", KINDS)
@settings(max_examples=EXAMPLES_PER_DATABASE, deadline=None, derandomize=True, database=None,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture])
@given(sql=statements)
def test_no_fuzzed_statement_changes_anything(fuzz_targets, kind: str, sql: str):
    target = fuzz_targets(kind)
    outcome = attempt(target, target.sql(sql))  # anything but a SandboxError fails the test here
    # shown by --hypothesis-show-statistics: how much of the fuzz reached the database
    if outcome.error is None:
        event("ran: returned rows")
    elif isinstance(outcome.error, QueryRefused) and not str(outcome.error).startswith("the database refused"):
        event("refused by the parser")
    else:
        event(f"reached the database: {type(outcome.error).__name__}")
    assert outcome.elapsed < TIMEOUT_S + GRACE_S, f"{sql!r} took {outcome.elapsed:.2f}s: {outcome.label}"
    assert outcome.rows <= MAX_ROWS
    target.assert_unchanged()
