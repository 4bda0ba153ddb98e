"""What ``metric`` and ``distribution`` cost: scan wall time and statements at 1M rows, per database.

One table ``metric_sales`` (``id``, ``amount`` a double with 1 in 10 NULL, ``status`` one of 5 words) is built in
SQLite, DuckDB and PostgreSQL (database ``metric_bench``). Interleaved, ``--reps`` times, in this process:

* ``rows``: two row-level checks (not_null, range) -- the table's one aggregate statement;
* ``rows_metrics``: the same plus seven metrics (count, sum, avg, min, max, stddev, null_rate) -- still one statement;
* ``rows_median``: the same plus a median (SQLite: one ranks statement more; PostgreSQL, DuckDB: none);
* ``distribution_categories`` and ``distribution_deciles``: one statement each.

Medians, statement counts, ratios to ``rows`` and the load average into ``bench/results/NAME.json``::

    .venv/bin/python -m bench.metric_bench --rows 1000000 --reps 3 --name metric-1m
"""

from __future__ import annotations

import argparse
import json
import os
import sqlite3
import tempfile
import time
from pathlib import Path
from typing import Any

from bench.common import Samples, machine, ratio
from watchdog.sandbox import Sandbox
from watchdog.scan.planner import plan
from watchdog.scan.scanner import scan, with_column_types
from watchdog.scan.suites import SuiteSource, load_suites

RESULTS = Path(__file__).parent / "results"
ROWS = "    - not_null: amount\n    - range: {column: amount, min: 0}\n"
METRICS = "".join(f"    - metric: {{column: amount, agg: {a}}}\n"
                  for a in ("count", "sum", "avg", "min", "max", "stddev", "null_rate"))
CASES = {
    "rows": ROWS,
    "rows_metrics": ROWS + METRICS,
    "rows_median": ROWS + METRICS + "    - metric: {column: amount, agg: median}\n",
    "distribution_categories": "    - distribution: status\n",
    "distribution_deciles": "    - distribution: amount\n",
}
WORDS = ("new", "open", "paid", "late", "void")
PG_ADMIN = "postgresql+psycopg://postgres@127.0.0.1:5432/postgres"


def _rows(n: int):
    return ((i, None if i % 10 == 0 else (i * 7919) % 100_000 / 100.0, WORDS[i % 5]) for i in range(1, n + 1))


def make_sqlite(path: Path, n: int) -> str:
    conn = sqlite3.connect(path)
    conn.execute("CREATE TABLE metric_sales (id INTEGER PRIMARY KEY, amount REAL, status TEXT)")
    conn.executemany("INSERT INTO metric_sales VALUES (?, ?, ?)", _rows(n))
    conn.commit()
    conn.close()
    return f"sqlite:///{path}"


def make_duckdb(path: Path, n: int) -> str:
    import duckdb

    conn = duckdb.connect(str(path))
    conn.execute(f"""CREATE TABLE metric_sales AS SELECT i AS id,
        CASE WHEN i % 10 = 0 THEN NULL ELSE ((i * 7919) % 100000) / 100.0 END::DOUBLE AS amount,
        ['new', 'open', 'paid', 'late', 'void'][(i % 5) + 1] AS status FROM range(1, {n + 1}) t(i)""")
    conn.close()
    return f"duckdb:///{path}"


def make_postgres(n: int) -> str:
    import sqlalchemy as sa

    admin = sa.create_engine(PG_ADMIN, isolation_level="AUTOCOMMIT")
    with admin.connect() as conn:
        conn.exec_driver_sql("DROP DATABASE IF EXISTS metric_bench WITH (FORCE)")
        conn.exec_driver_sql("CREATE DATABASE metric_bench")
    admin.dispose()
    url = PG_ADMIN.rsplit("/", 1)[0] + "/metric_bench"
    engine = sa.create_engine(url)
    with engine.begin() as conn:
        conn.exec_driver_sql(f"""CREATE TABLE metric_sales AS SELECT i AS id,
            CASE WHEN mod(i, 10) = 0 THEN NULL ELSE mod(i::bigint * 7919, 100000) / 100.0 END::double precision
              AS amount,
            (ARRAY['new', 'open', 'paid', 'late', 'void'])[mod(i, 5) + 1] AS status
            FROM generate_series(1, {n}) AS i""")
        conn.exec_driver_sql("ANALYZE metric_sales")
    engine.dispose()
    return url


def bench(url: str, reps: int) -> dict[str, Any]:
    checks = {name: [c for s in load_suites([SuiteSource(name, f"tables:\n  metric_sales:\n{body}")])
                     for c in s.checks] for name, body in CASES.items()}
    wall = {name: Samples() for name in CASES}
    statements: dict[str, int] = {}
    observed: dict[str, Any] = {}
    with Sandbox(url, timeout_s=600) as box:
        for name, found in checks.items():
            statements[name] = len(plan(with_column_types(box, found), box.dialect).statements)
        for _ in range(reps):
            for name, found in checks.items():  # interleaved
                start = time.perf_counter()
                doc = scan(box, found, sample=0)
                wall[name].add(time.perf_counter() - start)
                observed[name] = {f.name: f.observed for f in doc.findings if f.error is None}
                errors = [f"{f.name}: {f.error}" for f in doc.findings if f.error]
                if errors:
                    raise SystemExit(f"{name}: {errors}")
    base = wall["rows"].median
    return {"statements": statements,
            "wall_s": {name: s.summary() for name, s in wall.items()},
            "ratio_to_rows": {name: ratio(s.median, base) for name, s in wall.items()},
            "observed": observed}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--rows", type=int, default=1_000_000)
    parser.add_argument("--reps", type=int, default=3)
    parser.add_argument("--name", default="metric-1m")
    parser.add_argument("--engines", default="sqlite,duckdb,postgresql")
    args = parser.parse_args(argv)
    out: dict[str, Any] = {"what": __doc__.splitlines()[0], "rows": args.rows, "reps": args.reps,
                           "loadavg_before": list(os.getloadavg()), "engines": {}}
    with tempfile.TemporaryDirectory(prefix="wd-metric-bench-") as tmp:
        makers = {"sqlite": lambda: make_sqlite(Path(tmp) / "m.db", args.rows),
                  "duckdb": lambda: make_duckdb(Path(tmp) / "m.duckdb", args.rows),
                  "postgresql": lambda: make_postgres(args.rows)}
        for engine in args.engines.split(","):
            out["engines"][engine] = bench(makers[engine](), args.reps)
    out["machine"] = machine()
    RESULTS.mkdir(exist_ok=True)
    path = RESULTS / f"{args.name}.json"
    path.write_text(json.dumps(out, indent=2) + "\n", encoding="utf-8")
    print(path)
    for engine, got in out["engines"].items():
        print(engine, got["statements"], {k: v["median"] for k, v in got["wall_s"].items()})
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
