"""The sandbox against real SQLite, PostgreSQL and MariaDB: reads pass, nothing else does.

Two guards are shown separately: the parser policy refuses anything but one read, and, with
the parser switched off, the database's own read-only session still refuses every write.
"""

from __future__ import annotations

import time
import uuid
from collections.abc import Iterator

import pytest
import sqlalchemy as sa
from sqlglot import exp

from tests.dbs import KINDS, TestDatabase, create_database
from watchdog.errors import DatabaseUnavailable, QueryError, QueryRefused, QueryTimeout, SandboxError
from watchdog.sandbox import ReadOnlyPolicy, Sandbox

WORDS = ["apple", "avocado", "banana", "cherry", "date", "elderberry", "fig", "grape", "kiwi", "lemon"]
ROWS = list(enumerate(WORDS, start=1))


def load_words(db: TestDatabase) -> None:
    db.create_table("t", {"id": "int", "s": "text"}, ROWS)
    if db.kind == "postgresql":
        db.run("CREATE SEQUENCE t_seq")


def snapshot(db: TestDatabase) -> tuple:
    """Everything a write could change, read through the admin engine."""
    with db.engine.connect() as conn:
        rows = conn.exec_driver_sql("SELECT id, s FROM t ORDER BY id").fetchall() if _has_t(conn) else None
        sequence = (conn.exec_driver_sql("SELECT last_value, is_called FROM t_seq").one()
                    if db.kind == "postgresql" else None)
    return rows, sorted(sa.inspect(db.engine).get_table_names()), sequence


def _has_t(conn: sa.Connection) -> bool:
    return sa.inspect(conn).has_table("t")


@pytest.fixture(scope="module")
def loaded_database(request: pytest.FixtureRequest, tmp_path_factory) -> Iterator[TestDatabase]:
    """A database of ``request.param`` kind holding table t (10 rows), shared by this module's read-only tests."""
    db = create_database(request.param, tmp_path_factory.mktemp(request.param))
    load_words(db)
    yield db
    db.close()


# ---------------------------------------------------------------- the parser refuses

COMMON_REFUSED = [
    "UPDATE t SET s = 'changed'",
    "DELETE FROM t",
    "INSERT INTO t (id, s) VALUES (99, 'zzz')",
    "DROP TABLE t",
    "CREATE TABLE t_new (x INT)",
    "SELECT 1; DELETE FROM t",
    "SELECT count(*) FROM t; SELECT 1",
    "SELECT * FROM t FOR UPDATE",
    "SELECT * INTO t_copy FROM t",
]
DIALECT_REFUSED = {
    "sqlite": ["WITH gone AS (DELETE FROM t RETURNING *) SELECT * FROM gone", "SELECT load_extension('evil')",
               "SELECT writefile('/tmp/wd_evil', 'x')", "PRAGMA query_only = OFF", "PRAGMA table_info(t)",
               "ATTACH DATABASE '/tmp/wd_evil.db' AS evil", "SET x = 1", "VACUUM"],
    "postgresql": ["WITH gone AS (DELETE FROM t RETURNING *) SELECT * FROM gone", "SELECT pg_sleep(5)",
                   "SELECT set_config('statement_timeout', '0', false)", "SELECT nextval('t_seq')",
                   "SELECT pg_advisory_lock(1)", "SELECT * FROM t FOR SHARE", "SET statement_timeout = 0",
                   "SET TRANSACTION READ WRITE", "COPY t TO STDOUT", "TRUNCATE t"],
    "mariadb": ["SELECT sleep(5)", "SELECT benchmark(1000000, md5('x'))", "SELECT get_lock('wd', 1)",
                "SELECT * FROM t LOCK IN SHARE MODE", "SELECT id INTO @x FROM t LIMIT 1", "SELECT @x := 1",
                "SET @x = 1", "SET SESSION max_statement_time = 0", "SELECT 1 /*!50000 , sleep(5) */",
                "LOCK TABLES t WRITE", "REPLACE INTO t VALUES (1, 'replaced')"],
}
REFUSED = [(kind, sql) for kind in KINDS for sql in COMMON_REFUSED + DIALECT_REFUSED[kind]]


@pytest.mark.parametrize(("loaded_database", "sql"), REFUSED, indirect=["loaded_database"])
def test_anything_but_one_read_is_refused_and_changes_nothing(loaded_database, sql):
    before = snapshot(loaded_database)
    with Sandbox(loaded_database.url) as sandbox, pytest.raises(QueryRefused):
        sandbox.query(sql)
    assert snapshot(loaded_database) == before


# ---------------------------------------------------------------- the database refuses what slips past the parser


class AcceptEverything(ReadOnlyPolicy):
    """A broken parser guard: waves every statement through."""

    def vet(self, sql: str) -> exp.Expression:
        return exp.Select()


COMMON_WRITES = [
    "INSERT INTO t (id, s) VALUES (99, 'zzz')",
    "UPDATE t SET s = 'changed'",
    "DELETE FROM t",
    "CREATE TABLE t_new (x INT)",
    "DROP TABLE t",
    "CREATE TABLE t_copy AS SELECT * FROM t",
]
DIALECT_WRITES = {
    "sqlite": ["PRAGMA query_only = OFF", "PRAGMA user_version = 7", "SELECT 1; DELETE FROM t"],
    "postgresql": ["WITH gone AS (DELETE FROM t RETURNING *) SELECT count(*) FROM gone", "SELECT * INTO t_into FROM t",
                   "SELECT nextval('t_seq')", "SELECT 1; DELETE FROM t"],
    "mariadb": ["REPLACE INTO t VALUES (1, 'replaced')", "TRUNCATE TABLE t", "SELECT 1; DELETE FROM t"],
}
WRITES = [(kind, sql) for kind in KINDS for sql in COMMON_WRITES + DIALECT_WRITES[kind]]


@pytest.mark.parametrize(("kind", "sql"), WRITES)
def test_a_write_which_slips_past_the_parser_still_fails_in_the_database(make_database, kind, sql):
    db = make_database(kind)
    load_words(db)
    before = snapshot(db)
    with Sandbox(db.url, policy=AcceptEverything(db.kind)) as sandbox:
        with pytest.raises(SandboxError):
            sandbox.query(sql)
        assert sandbox.query("SELECT count(*) FROM t").scalar() == 10  # the session is still a good reader
    assert snapshot(db) == before
    if kind == "sqlite":
        assert db.scalar("PRAGMA user_version") == 0


# ---------------------------------------------------------------- time limits


def long_query(kind: str, marker: str) -> str:
    if kind == "postgresql":
        return f"SELECT count(*) AS {marker} FROM generate_series(1, 10000000000)"
    if kind == "sqlite":
        return (f"WITH RECURSIVE c(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM c WHERE n < 100000000000) "
                f"SELECT count(*) AS {marker} FROM c")
    # MariaDB stops a recursive CTE after max_recursive_iterations (1000 on many servers) without an
    # error, so count a cross join of four 1000-row CTEs instead: 10^12 rows
    return (f"WITH RECURSIVE c(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM c WHERE n < 1000) "
            f"SELECT count(*) AS {marker} FROM c AS c1, c AS c2, c AS c3, c AS c4")


def still_running(db: TestDatabase, marker: str) -> int:
    """How many server sessions other than the admin's are still running the statement marked ``marker``."""
    if db.kind == "postgresql":
        return db.scalar("SELECT count(*) FROM pg_stat_activity WHERE pid <> pg_backend_pid() "
                         f"AND state = 'active' AND strpos(query, '{marker}') > 0")
    return db.scalar("SELECT count(*) FROM information_schema.PROCESSLIST WHERE ID <> CONNECTION_ID() "
                     f"AND INSTR(INFO, '{marker}') > 0")


@pytest.mark.parametrize("kind", KINDS)
def test_a_long_query_is_cancelled_at_the_timeout(make_database, kind):
    db = make_database(kind)
    load_words(db)
    marker = f"wd_probe_{uuid.uuid4().hex[:10]}"
    with Sandbox(db.url, timeout_s=1) as sandbox:
        started = time.monotonic()
        with pytest.raises(QueryTimeout):
            sandbox.query(long_query(kind, marker))
        assert time.monotonic() - started < 3
        if kind != "sqlite":
            assert still_running(db, marker) == 0  # cancelled on the server, not just abandoned
        assert sandbox.query("SELECT count(*) FROM t").scalar() == 10  # and the next query runs normally


# ---------------------------------------------------------------- limits and errors


@pytest.mark.parametrize("loaded_database", KINDS, indirect=True)
def test_max_rows_caps_the_rows_and_says_so(loaded_database):
    with Sandbox(loaded_database.url, max_rows=3) as sandbox:
        capped = sandbox.query("SELECT id FROM t ORDER BY id")
        assert capped.rows == [(1,), (2,), (3,)] and capped.truncated
        exact = sandbox.query("SELECT id FROM t ORDER BY id", max_rows=10)  # exactly all rows: nothing cut
        assert len(exact.rows) == 10 and not exact.truncated
        roomy = sandbox.query("SELECT id FROM t ORDER BY id", max_rows=500)
        assert len(roomy.rows) == 10 and not roomy.truncated


UNREACHABLE = [
    "postgresql+psycopg://u:S3cretPw@127.0.0.1:1/x",
    "mysql+pymysql://u:S3cretPw@127.0.0.1:1/x",
]


@pytest.mark.parametrize("url", UNREACHABLE)
def test_an_unreachable_database_is_unavailable_without_leaking_the_password(url):
    with Sandbox(url) as sandbox:
        with pytest.raises(DatabaseUnavailable) as caught:
            sandbox.query("SELECT 1")
        assert "S3cretPw" not in sandbox.display_url
    assert "S3cretPw" not in str(caught.value) and "S3cretPw" not in repr(caught.value)


def test_a_missing_sqlite_file_is_unavailable_and_not_created(tmp_path):
    missing = tmp_path / "missing.db"
    with Sandbox(f"sqlite:///{missing}") as sandbox, pytest.raises(DatabaseUnavailable, match="not found"):
        sandbox.query("SELECT 1")
    assert not missing.exists()


@pytest.mark.parametrize("loaded_database", KINDS, indirect=True)
def test_an_unknown_column_or_table_is_a_query_error(loaded_database):
    with Sandbox(loaded_database.url) as sandbox:
        with pytest.raises(QueryError, match="no_such_column"):
            sandbox.query("SELECT no_such_column FROM t")
        with pytest.raises(QueryError, match="no_such_table"):
            sandbox.query("SELECT * FROM no_such_table")


# ---------------------------------------------------------------- legitimate reads pass

LEGIT_READS = [
    ("SELECT count(*) FROM t WHERE s <> 'x; DELETE FROM t'", [(10,)]),
    ("SELECT 'DROP TABLE t; DELETE FROM t' AS s", [("DROP TABLE t; DELETE FROM t",)]),
    ("-- DELETE FROM t\nSELECT count(*) /* DROP TABLE t; */ FROM t -- ; UPDATE t SET s = 1", [(10,)]),
    ("SELECT id, row_number() OVER (ORDER BY id DESC) AS rn FROM t WHERE id <= 3 ORDER BY id",
     [(1, 3), (2, 2), (3, 1)]),
    ("WITH late AS (SELECT id FROM t WHERE id > 7) SELECT count(*) FROM late", [(3,)]),
    ("SELECT s FROM t WHERE s LIKE 'a%' ORDER BY s", [("apple",), ("avocado",)]),
    ("SELECT s FROM t WHERE id = 1 UNION ALL SELECT s FROM t WHERE id = 2", [("apple",), ("avocado",)]),
]
CATALOG_READS = {
    "sqlite": "SELECT name FROM pragma_table_info('t') ORDER BY cid",
    "postgresql": "SELECT column_name FROM information_schema.columns WHERE table_schema = 'public' "
                  "AND table_name = 't' ORDER BY ordinal_position",
    "mariadb": "SELECT column_name FROM information_schema.columns WHERE table_schema = DATABASE() "
               "AND table_name = 't' ORDER BY ordinal_position",
}


@pytest.mark.parametrize(("loaded_database", "sql", "expected"),
                         [(kind, sql, expected) for kind in KINDS for sql, expected in LEGIT_READS],
                         indirect=["loaded_database"])
def test_a_legitimate_read_passes(loaded_database, sql, expected):
    with Sandbox(loaded_database.url) as sandbox:
        assert sandbox.query(sql).rows == expected


@pytest.mark.parametrize("loaded_database", KINDS, indirect=True)
def test_the_catalog_can_be_read(loaded_database):
    with Sandbox(loaded_database.url) as sandbox:
        result = sandbox.query(CATALOG_READS[loaded_database.kind])
    assert [row[0] for row in result.rows] == ["id", "s"]


def test_jit_off_holds_for_that_statement_only_on_postgresql(make_database, tmp_path):
    """The diagnosis's statements (hundreds of expressions) run without PostgreSQL's JIT; others keep the
    server's setting, and the flag changes nothing elsewhere."""
    db = make_database("postgresql")
    with Sandbox(db.url) as box:
        server = box.query("SELECT current_setting('jit')").rows[0][0]
        assert box.query("SELECT current_setting('jit')", jit=False).rows[0][0] == "off"
        assert box.query("SELECT current_setting('jit')", parallel=True, jit=False).rows[0][0] == "off"
        assert box.query("SELECT current_setting('jit')").rows[0][0] == server
    import sqlite3

    sqlite3.connect(tmp_path / "x.db").close()
    with Sandbox(f"sqlite:///{tmp_path / 'x.db'}") as box:
        assert box.query("SELECT 1", jit=False).rows == [(1,)]


def test_ship_rows_holds_for_that_statement_only_on_postgresql(make_database, tmp_path):
    """The diagnosis's failing-rows statement tells PostgreSQL a row handed on by a parallel worker is cheap (so
    the rows are searched by its workers); the next statement has the server's setting again, and the flag changes
    nothing elsewhere."""
    db = make_database("postgresql")
    with Sandbox(db.url) as box:
        server = box.query("SELECT current_setting('parallel_tuple_cost')").rows[0][0]
        assert float(box.query("SELECT current_setting('parallel_tuple_cost')", parallel=True,
                               ship_rows=True).rows[0][0]) < 0.01
        assert box.query("SELECT current_setting('parallel_tuple_cost')").rows[0][0] == server
    import sqlite3

    sqlite3.connect(tmp_path / "y.db").close()
    with Sandbox(f"sqlite:///{tmp_path / 'y.db'}") as box:
        assert box.query("SELECT 1", ship_rows=True).rows == [(1,)]
