"""The sandbox on DuckDB: the function allowlist against the engine's catalogue, the attack corpus, the lock-down.

* Every function ``duckdb_functions()`` lists is classified (allowed or refused), so a name a new
  DuckDB version adds is refused until reviewed.
* The attack corpus' generic cases (writes, tricks, exhaustion: those for SQLite or PostgreSQL) and
  the DuckDB cases of ``attacks/duckdb.yaml`` run through a ``Sandbox`` on a DuckDB file with a CSV
  file table; each is refused, or fails or returns harmlessly within ``timeout_s + 1`` s, and
  afterwards the database file, the CSV and the folder are byte for byte as before and the session
  still reads both tables.
* The engine's own lock-down holds without the parser: statements sent straight to the session
  that read other files, write, attach, install or change settings are refused by DuckDB itself.
"""

from __future__ import annotations

import hashlib
import os
import re
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import duckdb
import pytest

from tests.dbs import create_database
from tests.test_attack_corpus import ATTACK_FILES, TMP_PLACEHOLDER, Case, load_cases
from tests.test_attack_corpus import load_fixture as load_corpus_fixture
from tests.test_function_allowlist import _refused_everywhere
from watchdog.errors import QueryRefused, QueryTimeout, SandboxError
from watchdog.sandbox import Sandbox
from watchdog.sandbox.duckdb_session import DuckDBSession
from watchdog.sandbox.functions.duckdb import DUCKDB_FUNCTIONS, DUCKDB_REFUSED, DUCKDB_VOLATILE_ALLOWED
from watchdog.sandbox.policy import ReadOnlyPolicy

TIMEOUT_S = 1.0
GRACE_S = 1.0
GENERIC = [c for c in load_cases(*ATTACK_FILES) if {"sqlite", "postgresql"} & set(c.dialects)]
DUCKDB_CASES = load_cases("duckdb.yaml")
#: generic cases written for another database's syntax that DuckDB's parser reads as something harmless
#: (each is still run, and must leave everything unchanged; it only need not be refused by the parser)
NOT_REFUSED_ON_DUCKDB = {
    # PostgreSQL's file and password views: DuckDB has no such table (a QueryError, nothing read)
    "pg-hba-file-rules-view", "pg-ident-file-mappings-view", "pg-file-settings-view", "pg-authid-hashes",
    # nested /* /* */ */ comments: DuckDB, like PostgreSQL and sqlglot, reads one comment, so one SELECT 1
    "nested-comment-hides-stack", "nested-comment-leading",
}


# ---------------------------------------------------------------- the function catalogue


def _catalogue(where: str = "true") -> set[str]:
    con = duckdb.connect(":memory:", config={"autoinstall_known_extensions": False,
                                             "autoload_known_extensions": False})
    try:
        rows = con.execute(f"SELECT DISTINCT function_name FROM duckdb_functions() WHERE {where}").fetchall()
        names = {str(r[0]).lower() for r in rows}
    finally:
        con.close()
    return {n for n in names if re.fullmatch(r"[a-z_][a-z0-9_]*", n)}  # the rest are operators (+, ~~, ->>...)


def test_every_refused_name_is_refused_in_every_call_form():
    policy = ReadOnlyPolicy("duckdb")
    names = sorted(DUCKDB_REFUSED | {n for n in _catalogue() if n.startswith("__")})
    leaks = {name: passed for name in names if (passed := _refused_everywhere(policy, name))}
    assert not leaks


def test_no_volatile_function_is_allowed_unless_reviewed():
    volatile = _catalogue("stability = 'VOLATILE'")
    assert {"random", "nextval", "setseed"} <= volatile
    assert not sorted((volatile & DUCKDB_FUNCTIONS) - DUCKDB_VOLATILE_ALLOWED)


def test_every_function_in_the_engines_catalogue_is_classified():
    names = _catalogue()
    assert len(names) > 900
    unclassified = sorted(n for n in names if n not in DUCKDB_FUNCTIONS and n not in DUCKDB_REFUSED
                          and not n.startswith("__"))
    assert not unclassified, f"review these DuckDB functions and list them in functions/duckdb.py: {unclassified}"
    assert not DUCKDB_FUNCTIONS & DUCKDB_REFUSED
    assert not {n for n in DUCKDB_FUNCTIONS if n.startswith("__")}


@pytest.mark.parametrize("name", ["read_csv", "read_csv_auto", "read_parquet", "parquet_scan", "read_json",
                                  "read_json_auto", "read_ndjson", "read_text", "read_blob", "glob", "sniff_csv",
                                  "query", "query_table", "current_setting", "getvariable", "duckdb_settings",
                                  "duckdb_secrets", "duckdb_databases", "which_secret", "json_serialize_plan",
                                  "checkpoint", "nextval", "setseed", "pragma_version", "read_duckdb"])
def test_file_state_and_sql_functions_are_refused(name):
    assert name not in DUCKDB_FUNCTIONS
    with pytest.raises(QueryRefused, match=f"function '{name}' is not allowed"):
        Sandbox("duckdb:///:memory:").vet(f"SELECT * FROM {name}('x')")


# ---------------------------------------------------------------- the attack corpus on DuckDB


@dataclass
class DuckTarget:
    sandbox: Sandbox
    directory: Path
    watched: list[Path]
    tmp_prefix: str

    def state(self) -> dict[str, str]:
        files = {p.name: hashlib.sha256(p.read_bytes()).hexdigest() for p in self.watched}
        return {**files, "folder": ",".join(sorted(os.listdir(self.directory)))}

    def reads(self) -> list:
        return self.sandbox.query("SELECT (SELECT count(*) FROM t), (SELECT count(*) FROM f), "
                                  "(SELECT count(*) FROM information_schema.tables)", timeout_s=10).rows

    def leftovers(self) -> list[str]:
        folder, prefix = os.path.split(self.tmp_prefix)
        return [name for name in os.listdir(folder) if name.startswith(prefix)]


@pytest.fixture(scope="module")
def duck(tmp_path_factory) -> Iterator[DuckTarget]:
    directory = tmp_path_factory.mktemp("duck_attack")
    db = create_database("duckdb", directory)
    load_corpus_fixture(db)
    db.engine.dispose()
    csv = directory / "f.csv"
    csv.write_text("id,name\n1,alpha\n2,beta\n", encoding="utf-8")
    sandbox = Sandbox(db.url, files={"f": str(csv)}, timeout_s=TIMEOUT_S, max_rows=200, max_bytes=1_000_000)
    target = DuckTarget(sandbox, directory, [Path(db.url.removeprefix("duckdb:///")), csv],
                        f"/tmp/wd_duck_{os.getpid()}_")
    target.baseline = target.state()  # type: ignore[attr-defined]
    target.baseline_reads = target.reads()  # type: ignore[attr-defined]
    yield target
    sandbox.close()


def _attempt(target: DuckTarget, case: Case) -> tuple[Exception | None, float]:
    sql = case.sql.replace(TMP_PLACEHOLDER, target.tmp_prefix)
    start = time.monotonic()
    try:
        target.sandbox.query(sql)
        error = None
    except SandboxError as exc:
        error = exc
    return error, time.monotonic() - start


def _check_after(target: DuckTarget) -> None:
    assert target.state() == target.baseline, "a file changed"  # type: ignore[attr-defined]
    assert not target.leftovers(), "a file was written under /tmp"
    assert target.reads() == target.baseline_reads  # type: ignore[attr-defined]


@pytest.mark.parametrize("case", GENERIC + DUCKDB_CASES, ids=lambda c: c.id)
def test_attack_on_duckdb(duck, case):
    error, elapsed = _attempt(duck, case)
    assert elapsed < TIMEOUT_S + GRACE_S, f"took {elapsed:.2f}s"
    if case.expect == "refused" and case.id not in NOT_REFUSED_ON_DUCKDB:
        assert isinstance(error, QueryRefused), f"not refused: {error!r}"
    _check_after(duck)


def test_the_legitimate_reads_still_work(duck):
    assert duck.sandbox.query("SELECT id, name FROM f ORDER BY id").rows == [(1, "alpha"), (2, "beta")]
    assert duck.sandbox.query('SELECT count(*) FROM "Order Lines; DELETE"').scalar() == 2
    assert duck.sandbox.query("SELECT list_sum([1, 2]), regexp_matches('ab', 'b'), CAST(id AS VARCHAR) FROM f "
                              "ORDER BY id").rows == [(3, True, "1"), (3, True, "2")]


# ---------------------------------------------------------------- the engine's lock-down, without the parser


@pytest.mark.parametrize("sql", [
    "SELECT * FROM read_text('/etc/passwd')",
    "SELECT * FROM glob('/*')",
    "SELECT * FROM '/etc/hosts'",
    "COPY t TO '{tmp}out.csv'",
    "ATTACH '{tmp}x.duckdb' AS x",
    "INSTALL httpfs",
    "LOAD httpfs",
    "SET enable_external_access = true",
    "SET allowed_directories = ['/']",
    "SET lock_configuration = false",
    "CREATE TABLE x AS SELECT 1 AS a",
    "INSERT INTO t VALUES (99, 'x')",
    "CHECKPOINT",
    "SELECT * FROM read_csv('{csv_dir}/*.csv')",
])
def test_the_engine_refuses_without_the_parser(duck, sql):
    csv_dir = duck.watched[1].parent
    session: DuckDBSession = duck.sandbox._session  # type: ignore[assignment]
    with pytest.raises(SandboxError):
        session.run(sql.format(tmp=duck.tmp_prefix, csv_dir=csv_dir), max_rows=10, max_bytes=10_000, timeout_s=5)
    _check_after(duck)


def test_the_configured_file_is_the_only_one_readable(duck):
    session: DuckDBSession = duck.sandbox._session  # type: ignore[assignment]
    csv = str(duck.watched[1])
    rows = session.run(f"SELECT content FROM read_text('{csv}')", max_rows=10, max_bytes=10_000, timeout_s=5).rows
    assert rows == [("id,name\n1,alpha\n2,beta\n",)]
    with pytest.raises(QueryRefused, match="disabled by configuration"):
        session.run(f"SELECT * FROM read_text('{csv}.bak')", max_rows=10, max_bytes=10_000, timeout_s=5)


def test_in_memory_nothing_but_a_read_runs(tmp_path):
    csv = tmp_path / "a.csv"
    csv.write_text("x\n1\n", encoding="utf-8")
    session = DuckDBSession("duckdb:///:memory:", {"a": str(csv)})
    try:
        with pytest.raises(QueryRefused, match="CREATE"):  # DuckDB's own parser reads it as no SELECT
            session.run("CREATE TABLE kept AS SELECT 1 AS y", max_rows=1, max_bytes=100, timeout_s=5)
        with pytest.raises(SandboxError, match="kept"):
            session.run("SELECT * FROM kept", max_rows=1, max_bytes=100, timeout_s=5)
        assert session.run("SELECT x FROM a", max_rows=5, max_bytes=100, timeout_s=5).rows == [(1,)]
    finally:
        session.close()


def test_timeout_interrupts_and_the_session_goes_on(duck):
    start = time.monotonic()
    with pytest.raises(QueryTimeout):
        duck.sandbox.query("SELECT count(*) FROM range(1000000000000) a", timeout_s=0.5)
    assert time.monotonic() - start < 0.5 + GRACE_S
    assert duck.sandbox.query("SELECT count(*) FROM t").scalar() == 10


def test_row_and_byte_caps(duck):
    result = duck.sandbox.query("SELECT * FROM range(100000)", max_rows=7)
    assert (len(result.rows), result.truncated) == (7, True)
    big = Sandbox("duckdb:///:memory:", max_bytes=3000)
    try:
        result = big.query("SELECT repeat('x', 1000) FROM range(10)")
        assert (len(result.rows), result.truncated) == (3, True)
    finally:
        big.close()
