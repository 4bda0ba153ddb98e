"""The sandbox's limits and its second line of defence, under attack on real databases.

* Memory: while a read offers 10 GB of 10 MB rows, the result is cut by the byte cap and the
  watchdog process grows by less than ``MEMORY_BOUND_MB`` (the SQLite worker process too).
* Parser bombs (deep nesting, huge statements) are refused quickly, never crash the process.
* The database layer, with the parser switched off, still leaves no session state behind:
  PostgreSQL advisory locks, MariaDB named locks, table locks, HANDLERs and variables; a MariaDB
  result cut by the caps is killed on the server instead of drained. (SQLite function calls that
  cannot be interrupted, stopped by killing the worker, are in the corpus: exhaustion.yaml.)
* MariaDB reads a statement's quotes as the parser did, whatever sql_mode the server starts with.
"""

from __future__ import annotations

import gc
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager, suppress
from pathlib import Path

import pytest
from sqlglot import exp

from tests.dbs import KINDS
from tests.test_attack_corpus import GRACE_S, TIMEOUT_S, Target, build_target
from watchdog.errors import QueryRefused, SandboxError
from watchdog.sandbox import ReadOnlyPolicy, Sandbox
from watchdog.sandbox.policy import MAX_STATEMENT_CHARS

#: the stated bound: the watchdog process (and the SQLite worker) grows by less than this while
#: a read offers 10 GB in 10 MB rows, with max_bytes = HUGE_MAX_BYTES
MEMORY_BOUND_MB = 200
HUGE_MAX_BYTES = 32 * 1024 * 1024
ROW_BYTES = 10_000_000
HUGE_ROWS = {
    "sqlite": f"WITH RECURSIVE c(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM c WHERE n < 1000) "
              f"SELECT randomblob({ROW_BYTES}) FROM c",
    "postgresql": f"SELECT repeat('x', {ROW_BYTES}) FROM generate_series(1, 1000)",
    "mariadb": f"SELECT REPEAT('x', {ROW_BYTES}) FROM seq_1_to_1000",
}


@pytest.fixture(scope="module")
def limit_targets(tmp_path_factory) -> Iterator:
    built: dict[str, Target] = {}

    def get(kind: str) -> Target:
        if kind not in built:
            built[kind] = build_target(kind, tmp_path_factory.mktemp(f"limits_{kind}"))
        return built[kind]

    yield get
    for target in built.values():
        target.close()


def rss_mb(pid: int | str = "self", field: str = "VmRSS") -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith(field + ":"):
            return int(line.split()[1]) / 1024
    raise AssertionError(f"no {field} for {pid}")


@contextmanager
def peak_rss() -> Iterator[dict[str, float]]:
    """Samples this process's resident memory every 5 ms; yields {'base': .., 'peak': ..}."""
    gc.collect()
    seen = {"base": rss_mb(), "peak": rss_mb()}
    stop = threading.Event()

    def sample() -> None:
        while not stop.is_set():
            seen["peak"] = max(seen["peak"], rss_mb())
            stop.wait(0.005)

    sampler = threading.Thread(target=sample, daemon=True)
    sampler.start()
    try:
        yield seen
    finally:
        stop.set()
        sampler.join()
        seen["peak"] = max(seen["peak"], rss_mb())


# ---------------------------------------------------------------- memory


@pytest.mark.parametrize("kind", KINDS)
def test_memory_stays_bounded_while_a_read_offers_ten_gigabytes(limit_targets, kind):
    target = limit_targets(kind)
    with Sandbox(target.db.url, timeout_s=5, max_rows=1000, max_bytes=HUGE_MAX_BYTES) as sandbox:
        sandbox.query("SELECT count(*) FROM t")  # connections, imports and the SQLite worker are warm
        with peak_rss() as rss:
            started = time.monotonic()
            result = sandbox.query(HUGE_ROWS[kind])
            elapsed = time.monotonic() - started
            sizes = [len(row[0]) for row in result.rows]
            del result.rows[:]
        growth = rss["peak"] - rss["base"]
        worker = kind == "sqlite" and sandbox._session._worker  # noqa: SLF001 - its peak, measured by the kernel
        worker_peak = rss_mb(worker._proc.pid, "VmHWM") if worker else 0.0  # noqa: SLF001
    print(f"\n{kind}: {len(sizes)} rows of 10 MB kept in {elapsed:.2f}s, RSS +{growth:.0f} MB"
          + (f", SQLite worker peak {worker_peak:.0f} MB" if worker else ""))
    assert result.truncated and 1 <= len(sizes) <= HUGE_MAX_BYTES // ROW_BYTES
    assert sum(sizes) <= HUGE_MAX_BYTES
    assert growth < MEMORY_BOUND_MB, f"the process grew by {growth:.0f} MB"
    assert worker_peak < MEMORY_BOUND_MB, f"the SQLite worker peaked at {worker_peak:.0f} MB"
    assert elapsed < 5
    target.assert_unchanged()  # and the cut-off statement is not still running on the server


# ---------------------------------------------------------------- parser bombs

PARSER_BOMBS = {
    "deep-parentheses": "SELECT " + "(" * 5000 + "1" + ")" * 5000,
    "deep-subqueries": "SELECT " + "(SELECT " * 2000 + "1" + ")" * 2000,
    "deep-case": "SELECT " + "CASE WHEN 1 = 1 THEN " * 2000 + "1" + " END" * 2000,
    "too-long": "SELECT 1" + " + 1" * (MAX_STATEMENT_CHARS // 4),
    "many-unions": " UNION ALL ".join(["SELECT 1"] * 20000),
}


@pytest.mark.parametrize("name", sorted(PARSER_BOMBS))
def test_a_parser_bomb_is_refused_quickly(name):
    sql = PARSER_BOMBS[name]
    started = time.monotonic()
    with pytest.raises(QueryRefused):
        ReadOnlyPolicy("postgres").vet(sql)
    assert time.monotonic() - started < TIMEOUT_S + GRACE_S


def test_a_long_but_reasonable_statement_still_passes():
    sql = "SELECT " + ", ".join(f"sum(CASE WHEN id > {i} THEN 1 ELSE 0 END) AS m{i}" for i in range(1000)) + " FROM t"
    assert 40_000 < len(sql) < MAX_STATEMENT_CHARS
    ReadOnlyPolicy("postgres").vet(sql)


# ---------------------------------------------------------------- with the parser switched off


class AcceptEverything(ReadOnlyPolicy):
    """A broken parser guard: waves every statement through, to test the database layer alone."""

    def vet(self, sql: str) -> exp.Expression:
        return exp.Select()


#: statements whose effect outlives a rolled-back read-only transaction: the session must drop it
SESSION_STATE = {
    "postgresql": ["SELECT pg_advisory_lock(4242)", "SELECT pg_advisory_lock_shared(4243)",
                   "SELECT * FROM t WHERE pg_try_advisory_lock(id)"],
    "mariadb": ["SELECT GET_LOCK('wd_attack', 0)", "DO GET_LOCK('wd_attack', 0)", "LOCK TABLES t READ",
                "HANDLER t OPEN",
                "SET @wd_x = 1", "SELECT @wd_y := 1", "SET sql_mode = 'ANSI_QUOTES'", "SET NAMES latin1",
                "SET SESSION max_statement_time = 0"],
}


@pytest.mark.parametrize(("kind", "sql"), [(k, s) for k, sqls in SESSION_STATE.items() for s in sqls])
def test_without_the_parser_no_session_state_survives_the_query(limit_targets, kind, sql):
    target = limit_targets(kind)
    with Sandbox(target.db.url, timeout_s=TIMEOUT_S, policy=AcceptEverything(kind)) as sandbox:
        with suppress(SandboxError):  # refused by the database: fine too
            sandbox.query(sql)
        target.assert_unchanged()  # no lock held by the sandbox's pooled connection...
        probe = Target.SESSION_PROBES[kind]
        assert sandbox.query(probe).rows == target.session_baseline  # ...and nothing it would carry into the next query


def test_without_the_parser_a_cut_mariadb_stream_is_killed_not_drained(limit_targets):
    target = limit_targets("mariadb")
    with Sandbox(target.db.url, timeout_s=10, max_rows=5, policy=AcceptEverything("mariadb")) as sandbox:
        started = time.monotonic()
        result = sandbox.query("SELECT seq FROM seq_1_to_1000000000000")
        elapsed = time.monotonic() - started
        assert result.truncated and len(result.rows) == 5
        assert elapsed < 1.0, f"took {elapsed:.2f}s: the rest of the stream was read instead of killed"
        target.assert_unchanged()  # and no statement is still running on the server
        assert sandbox.query("SELECT count(*) FROM t").scalar() == 10


# ---------------------------------------------------------------- quotes read as the parser read them


def test_mariadb_reads_backslashes_and_quotes_as_the_parser_did_whatever_the_server_sql_mode(limit_targets):
    """Under NO_BACKSLASH_ESCAPES, 'a\\', GET_LOCK(..) -- ' would take a lock; the parser saw one string."""
    target = limit_targets("mariadb")
    hostile_mode = "?init_command=" + "SET SESSION sql_mode='NO_BACKSLASH_ESCAPES,ANSI_QUOTES'".replace(" ", "%20")
    sql = "SELECT 'a\\', GET_LOCK(0x77645f61747461636b, 0) -- '"  # 0x77.. is 'wd_attack'
    with Sandbox(target.db.url + hostile_mode, timeout_s=TIMEOUT_S) as sandbox:
        sandbox.vet(sql)  # one string literal to the parser
        assert sandbox.query(sql).rows == [("a', GET_LOCK(0x77645f61747461636b, 0) -- ",)]
        assert sandbox.query('SELECT "double quotes are strings"').rows == [("double quotes are strings",)]
    target.assert_unchanged()
