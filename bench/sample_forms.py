"""Ways to get the sample rows of sparse checks, statement by statement, on SQLite and PostgreSQL.

The sparse table of ``bench/sparse.py`` (20 checks failing on 1-3 rows each). In process, on the bare driver,
interleaved, ``--reps`` times each after a warm-up round: the hand-written single pass (the limit), the
statements watchdog sends (its counting pass, its sample read), and the forms that would return the failing
rows' keys from the counting pass itself:

* SQLite: each condition evaluated once in a subquery, its rowid counted and listed (``GROUP_CONCAT``), which is
  what watchdog sends; or the condition evaluated twice, ``COUNT(*) FILTER`` and ``GROUP_CONCAT(rowid) FILTER``;
  then the rows read by rowid.
* PostgreSQL 15: ``min(ctid)`` / ``max(ctid)`` (parallel-safe aggregates with combine functions since
  PostgreSQL 14: with at most two failing rows they are the failing rows), as ``FILTER`` clauses (the condition
  evaluated three times), or over a subquery that evaluates each condition once (a subquery PostgreSQL does not
  pull up: ``OFFSET 0``, serial, or a set-returning column, which keeps the parallel plan); then the rows read
  by a TID scan (``ctid = ANY(...)``). Against these: the shared sample read, ``LIMIT`` (planned serially) or
  ``ORDER BY ctid LIMIT`` (planned with parallel workers).

Medians, ratios to the limit, whether PostgreSQL planned each with parallel workers, and the load average, into
``bench/results/NAME.json``::

    .venv/bin/python -m bench.sample_forms --rows 1000000 --reps 5 --name sample-forms-1m
"""

from __future__ import annotations

import argparse
import json
import os
import sqlite3
import statistics
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from bench import datagen, sparse
from bench.common import machine

RESULTS = Path(__file__).parent / "results"
KS = range(1, sparse.CHECKS + 1)


def cond(k: int) -> str:
    """Check ``k``'s failing condition, as watchdog writes it."""
    col = f'"v{k}"'
    return {"not_null": f"{col} IS NULL", "range": f"NOT {col} IS NULL AND ({col} < 0 OR {col} > 1000)",
            "accepted_values": f"NOT {col} IS NULL AND NOT {col} IN ({sparse.DIGITS})"}[sparse.kind(k)]


def counts() -> str:
    return ", ".join(f"COUNT(*) FILTER (WHERE {cond(k)})" for k in KS)


def sample_read(order: str) -> str:
    """watchdog's shared sample read of the 20 sparse conditions (a flag per condition)."""
    flags = ", ".join(f"CASE WHEN {cond(k)} THEN 1 ELSE 0 END AS wd_sample_{k}" for k in KS)
    either = " OR ".join(f"({cond(k)})" for k in KS)
    total = sum(len(sparse.bad_ids(k, ROWS[0])) for k in KS)
    return f"SELECT src.*, {flags} FROM sparse AS src WHERE {either}{order} LIMIT {total}"


ROWS = [1_000_000]  # set by main: the bad ids depend on the table's size


def sqlite_forms() -> dict[str, str]:
    keyed = ", ".join(f"COUNT(k{k}), CASE WHEN COUNT(k{k}) <= 100 THEN GROUP_CONCAT(k{k}) "
                      f"FILTER (WHERE k{k} IS NOT NULL) END" for k in KS)
    keys = ", ".join(f"CASE WHEN {cond(k)} THEN rowid END AS k{k}" for k in KS)
    twice = ", ".join(f"COUNT(*) FILTER (WHERE {cond(k)}), GROUP_CONCAT(rowid) FILTER (WHERE {cond(k)})" for k in KS)
    ids = ", ".join(str(i) for k in KS for i in sparse.bad_ids(k, ROWS[0]))
    return {"limit": sparse.limit_sql(),
            "count_pass": f"SELECT COUNT(*), {counts()} FROM sparse",
            "keys_evaluated_once": f"SELECT COUNT(*), {keyed} FROM (SELECT {keys} FROM sparse LIMIT -1)",
            "keys_evaluated_twice": f"SELECT COUNT(*), {twice} FROM sparse",
            "read_by_rowid": f"SELECT src.*, src.rowid FROM sparse AS src WHERE src.rowid IN ({ids})",
            "sample_read": sample_read("")}


def postgres_forms() -> dict[str, str]:
    minmax = ", ".join(f"MIN(ctid) FILTER (WHERE {cond(k)}), MAX(ctid) FILTER (WHERE {cond(k)})" for k in KS)
    outer = ", ".join(f"COUNT(k{k}), MIN(k{k}), MAX(k{k})" for k in KS)
    keys = ", ".join(f"CASE WHEN {cond(k)} THEN ctid END AS k{k}" for k in KS)
    return {"limit": sparse.limit_sql(),
            "count_pass": f"SELECT COUNT(*), {counts()} FROM sparse",
            "minmax_ctid_filter": f"SELECT COUNT(*), {counts()}, {minmax} FROM sparse",
            "minmax_ctid_once_offset0": f"SELECT COUNT(*), {outer} FROM (SELECT {keys} FROM sparse OFFSET 0) AS s",
            "minmax_ctid_once_srf": f"SELECT COUNT(*), {outer} FROM (SELECT {keys}, generate_series(1, 1) AS g "
                                    f"FROM sparse) AS s",
            "sample_read_limit": sample_read(""),
            "sample_read_ctid_order": sample_read(" ORDER BY src.ctid")}


def _timed(runs: dict[str, Callable[[], Any]], reps: int) -> dict[str, list[float]]:
    times: dict[str, list[float]] = {k: [] for k in runs}
    names = list(runs)
    for rep in range(reps + 1):  # the first round warms the caches
        for name in names[rep % len(names):] + names[:rep % len(names)]:
            start = time.perf_counter()
            runs[name]()
            if rep:
                times[name].append(time.perf_counter() - start)
    return times


def _summary(engine: str, times: dict[str, list[float]], extra: dict[str, Any]) -> dict[str, Any]:
    med = {k: round(statistics.median(v), 3) for k, v in times.items()}
    return {"engine": engine, "median_s": med, "all_s": {k: [round(x, 3) for x in v] for k, v in times.items()},
            "ratios_to_limit": {k: round(v / med["limit"], 2) for k, v in med.items()}, **extra}


def bench_sqlite(path: Path, reps: int) -> dict[str, Any]:
    forms = sqlite_forms()
    conn = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
    runs = {name: (lambda sql=sql: conn.execute(sql).fetchall()) for name, sql in forms.items()}
    try:
        return _summary("sqlite", _timed(runs, reps), {"sqlite": sqlite3.sqlite_version})
    finally:
        conn.close()


def bench_postgres(url: str, reps: int) -> dict[str, Any]:
    import psycopg

    forms = postgres_forms()
    with psycopg.connect(url, autocommit=True) as conn:
        parallel = {name: any("Gather" in row[0] for row in conn.execute(f"EXPLAIN {sql}").fetchall())
                    for name, sql in forms.items()}
        found = conn.execute(forms["minmax_ctid_filter"]).fetchone()
        tids = sorted({str(t) for t in found[1 + sparse.CHECKS:] if t is not None})
        forms["read_by_ctid"] = "SELECT src.*, src.ctid FROM sparse AS src WHERE src.ctid = ANY(%s::tid[])"
        parallel["read_by_ctid"] = False
        runs: dict[str, Callable[[], Any]] = {name: (lambda sql=sql: conn.execute(sql).fetchall())
                                              for name, sql in forms.items() if name != "read_by_ctid"}
        runs["read_by_ctid"] = lambda: conn.execute(forms["read_by_ctid"], [tids]).fetchall()
        version = conn.execute("SHOW server_version").fetchone()[0]
        return _summary("postgresql", _timed(runs, reps), {"postgresql": version, "parallel_plan": parallel})


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--rows", type=int, default=1_000_000)
    p.add_argument("--reps", type=int, default=5)
    p.add_argument("--data-dir", type=Path, default=Path("/tmp/watchdog-bench"))
    p.add_argument("--pg-url", default=os.environ.get("WATCHDOG_TEST_POSTGRES_URL",
                                                      "postgresql://postgres@127.0.0.1:5432/postgres"),
                   help="an admin URL; the benchmark creates and drops its own database (see bench/datagen.py)")
    p.add_argument("--name", default="sample-forms")
    args = p.parse_args()
    ROWS[0] = args.rows
    out: dict[str, Any] = {"name": args.name, "rows": args.rows, "reps": args.reps, "machine_at_start": machine(),
                           "loadavg_start": os.getloadavg()}
    path, _ = sparse.build_sqlite(args.data_dir, args.rows)
    datagen.create_pg_database(args.pg_url)
    try:
        dsn = datagen._psycopg_dsn(datagen.pg_url(args.pg_url))  # noqa: SLF001 - the bench's own helper
        sparse.build_postgres(dsn, args.rows)
        out["engines"] = [bench_sqlite(path, args.reps), bench_postgres(dsn, args.reps)]
    finally:
        datagen.drop_pg_database(args.pg_url)
    out["loadavg_end"] = os.getloadavg()
    RESULTS.mkdir(exist_ok=True)
    (RESULTS / f"{args.name}.json").write_text(json.dumps(out, indent=2), encoding="utf-8")
    for engine in out["engines"]:
        print(engine["engine"], engine["median_s"], engine["ratios_to_limit"], engine.get("parallel_plan", ""))
    print(f"load average {out['loadavg_start']} -> {out['loadavg_end']}; results: bench/results/{args.name}.json")


if __name__ == "__main__":
    main()
