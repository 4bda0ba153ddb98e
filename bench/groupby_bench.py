"""``group_by``: the cost of judging row-level checks per group, against the same checks over the whole table.

A ``groupby_people`` table of ``--rows`` rows (SQLite file, or PostgreSQL with ``--pg``) is scanned with three
row-level checks (not_null, pattern, range), interleaved ``--reps`` times: over the whole table (one aggregate
statement), per ``region`` (10 groups: one GROUP BY statement for the three), and per ``account`` (``--rows``/10
groups). Medians, ratios to the whole-table scan, the statements each plan makes, and the load average, into
``bench/results/NAME.json``::

    .venv/bin/python -m bench.groupby_bench --rows 1000000 --reps 3 --name groupby-1m-sqlite
    .venv/bin/python -m bench.groupby_bench --rows 1000000 --reps 3 --pg --name groupby-1m-pg
"""

from __future__ import annotations

import argparse
import json
import sqlite3
import tempfile
import time
from pathlib import Path

from bench.common import Samples, machine, ratio

RESULTS = Path(__file__).parent / "results"
PG_ADMIN = "postgresql://postgres@127.0.0.1:5432/postgres"
TABLE = "groupby_people"
CHECKS = ("    - not_null: {column: email, GROUP}\n"
          "    - pattern: {column: email, regex: '@', GROUP}\n"
          "    - range: {column: amount, min: 0, GROUP}\n")
CASES = {"whole_table": "", "by_region_10": "group_by: [region]", "by_account_many": "group_by: [account]"}


def rows(n: int):
    for i in range(1, n + 1):
        yield (i, None if i % 97 == 0 else f"u{i}@x.io", f"r{i % 10}", i % max(1, n // 10), (i % 1000) - 3)


def make_sqlite(path: Path, n: int) -> str:
    conn = sqlite3.connect(path)
    conn.execute(f"CREATE TABLE {TABLE} (id INTEGER PRIMARY KEY, email TEXT, region TEXT, account INTEGER, "
                 "amount INTEGER)")
    conn.executemany(f"INSERT INTO {TABLE} VALUES (?, ?, ?, ?, ?)", rows(n))
    conn.commit()
    conn.close()
    return f"sqlite:///{path}"


def make_pg(n: int) -> str:
    import psycopg

    with psycopg.connect(PG_ADMIN, autocommit=True) as conn:
        conn.execute(f"DROP TABLE IF EXISTS {TABLE}")
        conn.execute(f"CREATE TABLE {TABLE} (id INTEGER PRIMARY KEY, email TEXT, region TEXT, account INTEGER, "
                     "amount INTEGER)")
        with conn.cursor().copy(f"COPY {TABLE} FROM STDIN") as copy:
            for row in rows(n):
                copy.write_row(row)
        conn.execute(f"ANALYZE {TABLE}")
    return PG_ADMIN


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--rows", type=int, default=1_000_000)
    parser.add_argument("--reps", type=int, default=3)
    parser.add_argument("--pg", action="store_true")
    parser.add_argument("--name", default="groupby-1m-sqlite")
    args = parser.parse_args(argv)
    from watchdog.sandbox import Sandbox
    from watchdog.scan.planner import plan
    from watchdog.scan.scanner import scan, with_column_types
    from watchdog.scan.suites import load_suites

    with tempfile.TemporaryDirectory(prefix="wd-groupby-bench-") as tmp:
        work = Path(tmp)
        url = make_pg(args.rows) if args.pg else make_sqlite(work / "people.db", args.rows)
        suites = {}
        for name, group in CASES.items():
            path = work / f"{name}.yaml"
            text = CHECKS.replace(", GROUP", f", {group}" if group else "")
            path.write_text(f"tables:\n  {TABLE}:\n{text}", encoding="utf-8")
            suites[name] = [c for s in load_suites([path]) for c in s.checks]
        wall = {name: Samples() for name in CASES}
        statements: dict[str, int] = {}
        outcome: dict[str, dict[str, object]] = {}
        load_before = machine()["loadavg"]
        with Sandbox(url, timeout_s=600) as box:
            for name, checks in suites.items():
                statements[name] = len(plan(with_column_types(box, checks), box.dialect).statements)
            for _ in range(args.reps):
                for name, checks in suites.items():  # interleaved: each rep runs every case once
                    start = time.perf_counter()
                    doc = scan(box, checks, sample=0)
                    wall[name].add(time.perf_counter() - start)
                    outcome[name] = {f.name: [f.status, f.failing, (f.details or {}).get("groups_failing")]
                                     for f in doc.findings}
        if args.pg:
            import psycopg

            with psycopg.connect(PG_ADMIN, autocommit=True) as conn:
                conn.execute(f"DROP TABLE IF EXISTS {TABLE}")
    result = {
        "what": __doc__.split("\n\n")[0], "rows": args.rows, "reps": args.reps, "engine": "postgresql" if args.pg
        else "sqlite", "machine": machine(), "loadavg_before": load_before,
        "wall_s": {k: v.summary() for k, v in wall.items()},
        "ratios_to_whole_table": {k: ratio(wall[k].median, wall["whole_table"].median) for k in CASES},
        "statements": statements, "findings": outcome,
    }
    RESULTS.mkdir(exist_ok=True)
    out = RESULTS / f"{args.name}.json"
    out.write_text(json.dumps(result, indent=2) + "\n", encoding="utf-8")
    print(json.dumps(result, indent=2))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
