"""Incremental tables: an append-only table of N rows receiving 1% new rows per run.

Measures, interleaved in one run, the time of an incremental audit (the window past the mark) over the time of a
full one (every row), for the row-level checks alone and with ``unique`` and ``foreign_key``; checks that the
incremental findings equal a full scan restricted to the new rows (``where: id >= N``, the mark's row
included; ids are unique, so ``unique`` finds no duplicate either way); and records the plans of the windowed
``unique`` and ``foreign_key`` statements (each must look the keys up through an index, never scan the old rows).
Tables are generated in-database (generate_series on PostgreSQL, a recursive CTE on SQLite).

    python -m bench.incremental_bench --rows 10000000 --engines postgresql,sqlite
"""

from __future__ import annotations

import argparse
import json
import sqlite3
import statistics
import tempfile
import time
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import sqlalchemy as sa

from bench.common import machine
from watchdog.sandbox import Sandbox
from watchdog.scan.check_types.base import Standalone
from watchdog.scan.incremental import narrow
from watchdog.scan.scanner import scan
from watchdog.scan.suites import load_suites

PG_ADMIN = "postgresql+psycopg://postgres@127.0.0.1:5432/postgres"
#: the bench database (``--db``: another name where several benches share the server)
PG_DB = "incr_bench"
ROW_LEVEL = """
      - not_null: email
      - pattern: {column: code, regex: '^C-[0-9]+$'}
      - range: {column: customer_id, min: 1}
"""
KEYED = """
      - unique: id
      - foreign_key: {column: customer_id, references: customers.id}
"""
#: every BAD-th row is broken (NULL email, bad code, customer 0): known failures in old and new rows
BAD = 997


def suite(tmp: Path, name: str, body: str, where: str | None = None) -> list[Any]:
    checks = body if where is None else body.replace("}\n", f", where: '{where}'}}\n").replace(
        "not_null: email\n", f"not_null: {{column: email, where: '{where}'}}\n").replace(
        "unique: id\n", f"unique: {{column: id, where: '{where}'}}\n")
    path = tmp / f"{name}.yaml"
    path.write_text("tables:\n  events:\n    incremental: {column: created_at}\n    checks:" + checks)
    return [c for s in load_suites([path]) for c in s.checks]


def load_postgres(n: int, new: int, db: str = PG_DB) -> str:
    admin = sa.create_engine(PG_ADMIN, isolation_level="AUTOCOMMIT")
    with admin.connect() as conn:
        conn.execute(sa.text(f"DROP DATABASE IF EXISTS {db}"))
        conn.execute(sa.text(f"CREATE DATABASE {db}"))
    admin.dispose()
    url = PG_ADMIN.rsplit("/", 1)[0] + "/" + db
    engine = sa.create_engine(url)
    row = (f"SELECT i, CASE WHEN i % {BAD} = 0 THEN NULL ELSE 'u' || i || '@x.io' END, "
           f"CASE WHEN i % {BAD} = 0 THEN 'bad' ELSE 'C-' || i END, "
           f"CASE WHEN i % {BAD} = 0 THEN 0 ELSE 1 + i % 1000 END, "
           "timestamp '2026-01-01' + i * interval '1 second' FROM generate_series({a}, {b}) AS i")
    with engine.begin() as conn:
        conn.execute(sa.text("CREATE TABLE customers (id int PRIMARY KEY)"))
        conn.execute(sa.text("INSERT INTO customers SELECT generate_series(1, 1000)"))
        conn.execute(sa.text("CREATE TABLE events (id bigint PRIMARY KEY, email text, code text, customer_id int, "
                             "created_at timestamp)"))
        conn.execute(sa.text("INSERT INTO events " + row.format(a=1, b=n)))
        conn.execute(sa.text("CREATE INDEX events_created ON events (created_at)"))
        conn.execute(sa.text("CREATE INDEX events_customer ON events (customer_id)"))
    with engine.begin() as conn:
        conn.execute(sa.text("INSERT INTO events " + row.format(a=n + 1, b=n + new)))
    with engine.connect().execution_options(isolation_level="AUTOCOMMIT") as conn:
        conn.execute(sa.text("VACUUM ANALYZE events"))
    engine.dispose()
    return url


def load_sqlite(n: int, new: int, folder: Path) -> str:
    path = folder / "events.db"
    path.unlink(missing_ok=True)
    row = ("WITH RECURSIVE s(i) AS (SELECT {a} UNION ALL SELECT i + 1 FROM s WHERE i < {b}) "
           f"SELECT i, CASE WHEN i % {BAD} = 0 THEN NULL ELSE 'u' || i || '@x.io' END, "
           f"CASE WHEN i % {BAD} = 0 THEN 'bad' ELSE 'C-' || i END, "
           f"CASE WHEN i % {BAD} = 0 THEN 0 ELSE 1 + i % 1000 END, "
           "datetime('2026-01-01', '+' || i || ' seconds') FROM s")
    with sqlite3.connect(path) as db:
        db.execute("CREATE TABLE customers (id INTEGER PRIMARY KEY)")
        db.execute("INSERT INTO customers WITH RECURSIVE s(i) AS "
                   "(SELECT 1 UNION ALL SELECT i + 1 FROM s WHERE i < 1000) SELECT i FROM s")
        db.execute("CREATE TABLE events (id INTEGER PRIMARY KEY, email TEXT, code TEXT, customer_id INTEGER, "
                   "created_at TIMESTAMP)")
        db.execute("INSERT INTO events " + row.format(a=1, b=n))
        db.execute("CREATE INDEX events_created ON events (created_at)")
        db.execute("CREATE INDEX events_customer ON events (customer_id)")
        db.execute("INSERT INTO events " + row.format(a=n + 1, b=n + new))
        db.execute("ANALYZE")
    return f"sqlite:///{path}"


def timed(url: str, checks: list[Any], marks: dict[str, Any] | None) -> tuple[float, dict[str, tuple]]:
    started = time.perf_counter()
    with Sandbox(url, timeout_s=3600) as box:
        run, windows = narrow(box, checks, marks) if marks is not None else (checks, {})
        doc = scan(box, run, sample=0)
    took = time.perf_counter() - started
    assert not doc.error and all(f.status != "error" for f in doc.findings), [f.error for f in doc.findings]
    return took, {f.check: (f.status, f.failing, f.total) for f in doc.findings}


def bench_engine(engine: str, url: str, n: int, new: int, tmp: Path, reps: int,
                 save: Any = None) -> dict[str, Any]:
    """One engine's ratios; ``save()`` writes the results so far after each suite (a long run keeps them)."""
    with Sandbox(url) as box:  # the mark a previous run recorded: the largest created_at before the append
        mark = box.query(f"SELECT MAX(created_at) FROM events WHERE id <= {n}").scalar()
    marks = {"events": mark}
    out: dict[str, Any] = {"engine": engine, "rows": n, "new_rows": new}
    for label, body in (("row_level", ROW_LEVEL), ("with_unique_fk", ROW_LEVEL + KEYED)):
        checks = suite(tmp, label, body)
        restricted = suite(tmp, label + "_new", body, where=f"id >= {n}")  # the window starts at the mark: its row too
        full_s, inc_s = [], []
        for _ in range(reps):  # interleaved
            took, _full = timed(url, checks, None)
            full_s.append(took)
            took, incremental = timed(url, checks, marks)
            inc_s.append(took)
        _, expected = timed(url, restricted, None)
        same = incremental == expected
        out[label] = {"full_s": [round(x, 3) for x in full_s], "incremental_s": [round(x, 3) for x in inc_s],
                      "ratio": round(statistics.median(inc_s) / statistics.median(full_s), 4),
                      "incremental_findings": {k: list(v) for k, v in incremental.items()},
                      "full_restricted_to_new_rows": {k: list(v) for k, v in expected.items()},
                      "row_level_findings_equal": same}
        print(engine, label, out[label]["ratio"], "same" if same else "DIFFERENT", flush=True)
        if save is not None:
            save(out)
    out["plans"] = plans(url, suite(tmp, "keyed", KEYED), marks)
    return out


def plans(url: str, checks: list[Any], marks: dict[str, Any]) -> dict[str, str]:
    """The database's plan of each windowed key statement (EXPLAIN; EXPLAIN QUERY PLAN on SQLite)."""
    found: dict[str, str] = {}
    with Sandbox(url) as box:
        narrowed, _ = narrow(box, checks, marks)
        statements = {check.kind: (metric.sql, metric.jit) for check in narrowed
                      for metric in check.metrics(box.dialect) if isinstance(metric, Standalone)}
        prefix = "EXPLAIN QUERY PLAN " if "sqlite" in box.dialect else "EXPLAIN "
    engine = sa.create_engine(url)  # the sandbox runs reads only: EXPLAIN goes through a plain connection
    with engine.connect() as conn:
        for kind, (sql, jit) in statements.items():
            if not jit and "postgres" in url:  # planned as the scanner runs it
                conn.exec_driver_sql("SET jit = off")
            found[kind] = "\n".join(str(r[-1]) for r in conn.exec_driver_sql(prefix + sql))
            if not jit and "postgres" in url:
                conn.exec_driver_sql("RESET jit")
    engine.dispose()
    return found


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--rows", type=int, default=10_000_000)
    parser.add_argument("--engines", default="postgresql,sqlite")
    parser.add_argument("--reps", type=int, default=3)
    parser.add_argument("--out", default="bench/results/incremental-10m.json")
    parser.add_argument("--reuse", action="store_true",
                        help="PostgreSQL: measure the database a previous run of the same --rows loaded")
    parser.add_argument("--db", default=PG_DB, help="PostgreSQL: the bench database's name")
    parser.add_argument("--keep", action="store_true", help="PostgreSQL: keep the database afterwards")
    args = parser.parse_args()
    new = args.rows // 100
    results: dict[str, Any] = {"bench": "incremental", "at": datetime.now(UTC).isoformat(timespec="seconds"),
                               "machine_before": machine(), "engines": []}
    with tempfile.TemporaryDirectory() as folder:
        tmp = Path(folder)
        for engine in args.engines.split(","):
            started = time.perf_counter()
            if engine == "postgresql" and args.reuse:
                url = PG_ADMIN.rsplit("/", 1)[0] + "/" + args.db
            else:
                url = (load_postgres(args.rows, new, args.db) if engine == "postgresql"
                       else load_sqlite(args.rows, new, tmp))
            print(engine, "loaded in", round(time.perf_counter() - started, 1), "s", flush=True)
            def save(partial: dict[str, Any]) -> None:
                so_far = {**results, "engines": [*results["engines"], partial], "machine_after": machine()}
                Path(args.out).write_text(json.dumps(so_far, indent=2, default=str) + "\n")

            results["engines"].append(bench_engine(engine, url, args.rows, new, tmp, args.reps, save))
    results["machine_after"] = machine()
    Path(args.out).write_text(json.dumps(results, indent=2, default=str) + "\n")
    if "postgresql" in args.engines and not args.keep:
        admin = sa.create_engine(PG_ADMIN, isolation_level="AUTOCOMMIT")
        with admin.connect() as conn:
            conn.execute(sa.text(f"DROP DATABASE IF EXISTS {args.db}"))
        admin.dispose()


if __name__ == "__main__":
    main()
