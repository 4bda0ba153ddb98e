"""The diagnosis's cost beside the scan's: statements and seconds, at 100k / 1M / 10M rows, 1 / 5 / 20 failing checks.

One table ``events`` (and its parent ``accounts``) generated inside the database, with 20 checks that each fail
on a known share of rows (some concentrated in one source, some since one day, some spread at random). For each
size and number of failing checks the scan and then the diagnosis of its findings run through one sandbox,
interleaved over ``--repeat`` rounds; the results file has the medians, their ratio and the load average.

    nice -n 10 .venv/bin/python -m bench.diagnose_cost --sizes 100000 1000000 --engines sqlite postgresql
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

from bench.common import machine

ADMIN = "postgresql://postgres@127.0.0.1:5432/postgres"
PG_DB = "diag_bench_diagnose"
RANGE_COLUMNS = [f"v{k}" for k in range(1, 13)]

#: the 20 checks, in the order they are added (1, 5 or 20 of them)
CHECKS = [
    "- not_null: email",
    "- accepted_values: {column: status, values: [new, paid, shipped]}",
    "- foreign_key: {column: account_id, references: accounts.id}",
    "- range: {column: amount, min: 0}",
    "- pattern: {column: email, regex: '@'}",
    "- not_null: country",
    "- accepted_values: {column: plan, values: [p0, p1, p2, p3, p4, p5, p6, p7, p8, p9, p10]}",
    "- range: {column: score, min: 0, max: 100}",
    *[f"- range: {{column: {c}, min: 0, max: 999}}" for c in RANGE_COLUMNS],
]


def _select(i: str, n: int, concat: Any) -> str:
    """The columns of row ``i`` (1..n): every defect chosen by the row number, so the counts are known."""
    r = f"({i} % 1000)"
    source = f"CASE {i} % 8 WHEN 0 THEN 'csv' WHEN 1 THEN 'api' WHEN 2 THEN 'app' WHEN 3 THEN 'web' " \
             f"WHEN 4 THEN 'partner' WHEN 5 THEN 'batch' WHEN 6 THEN 'mobile' ELSE 'import' END"
    late = f"{i} > {n * 9 // 10}"
    ranges = ", ".join(f"CASE WHEN {r} = {7 + 13 * k} THEN 5000 ELSE ({i} * {31 + k}) % 1000 END"
                       for k in range(len(RANGE_COLUMNS)))
    return f"""{i},
      {source},
      CASE WHEN {r} BETWEEN 500 AND 514 THEN NULL ELSE CASE {i} % 5 WHEN 0 THEN 'DE' WHEN 1 THEN 'FR'
           WHEN 2 THEN 'US' WHEN 3 THEN 'JP' ELSE 'BR' END END,
      'p' || CAST({i} % 12 AS TEXT),
      CASE WHEN {r} < 6 THEN 'Paid ' ELSE CASE {i} % 3 WHEN 0 THEN 'new' WHEN 1 THEN 'paid' ELSE 'shipped' END END,
      CASE WHEN {i} % 8 = 0 AND {r} < 80 THEN NULL WHEN {r} BETWEEN 900 AND 903 THEN {concat("'user'", i)}
           ELSE {concat("'user'", i)} || '@example.com' END,
      CASE WHEN {r} BETWEEN 600 AND 603 THEN -1 ELSE ({i} * 37) % 10000 END,
      CASE WHEN {late} AND {r} < 10 THEN {n} + {i} ELSE ({i} % 1000) + 1 END,
      ({i} * 7) % 120,
      {ranges}"""


def _columns(text: str, ts: str) -> str:
    ranges = ", ".join(f"{c} INTEGER" for c in RANGE_COLUMNS)
    return (f"id INTEGER PRIMARY KEY, source {text}, country {text}, plan {text}, status {text}, email {text}, "
            f"amount INTEGER, account_id INTEGER, score INTEGER, {ranges}, created_at {ts}")


def build_sqlite(path: Path, rows: int) -> None:
    conn = sqlite3.connect(path, isolation_level=None)
    conn.executescript(f"""PRAGMA journal_mode = OFF; PRAGMA synchronous = OFF;
        CREATE TABLE accounts (id INTEGER PRIMARY KEY);
        CREATE TABLE events ({_columns('TEXT', 'TIMESTAMP')});""")
    conn.execute("WITH RECURSIVE s(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM s WHERE i < 1000) "
                 "INSERT INTO accounts SELECT i FROM s")
    seq = f"WITH RECURSIVE s(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM s WHERE i < {rows})"
    select = _select("i", rows, lambda a, b: f"{a} || {b}")
    # one row a minute at 100k rows (ten a minute at 1M, ...): the same 70 days whatever the size
    step = 60 / max(1, rows // 100_000)
    conn.execute(f"{seq} INSERT INTO events SELECT {select}, datetime('2026-01-01', '+' || CAST(i * {step} AS INTEGER) "
                 f"|| ' seconds') FROM s")
    conn.execute("ANALYZE")
    conn.close()


def build_postgres(rows: int) -> str:
    import psycopg

    with psycopg.connect(ADMIN, autocommit=True) as conn:
        conn.execute(f"DROP DATABASE IF EXISTS {PG_DB} WITH (FORCE)")
        conn.execute(f"CREATE DATABASE {PG_DB}")
    url = ADMIN.rsplit("/", 1)[0] + f"/{PG_DB}"
    select = _select("i", rows, lambda a, b: f"{a} || {b}::text")
    step = 60 / max(1, rows // 100_000)
    with psycopg.connect(url, autocommit=True) as conn:
        conn.execute("CREATE TABLE accounts (id integer PRIMARY KEY)")
        conn.execute("INSERT INTO accounts SELECT generate_series(1, 1000)")
        conn.execute(f"CREATE TABLE events ({_columns('text', 'timestamp')})")
        conn.execute(f"INSERT INTO events SELECT {select}, timestamp '2026-01-01' + make_interval(secs => "
                     f"floor(i * {step})) FROM generate_series(1::bigint, {rows}::bigint) AS i")
        conn.execute("VACUUM (ANALYZE, FREEZE) events")
    return url


def suite(path: Path, failing: int) -> Path:
    text = "tables:\n  events:\n" + "".join(f"    {c}\n" for c in CHECKS[:failing])
    path.write_text(text, encoding="utf-8")
    return path


def _kind(sql: str) -> str:
    """Which of the diagnosis's statements ``sql`` is (see watchdog.diagnose.statements)."""
    if "wd_probe" in sql:
        return "probe"
    return "failing_rows" if sql.startswith("WITH wd_rows") else "rows"


def _timed(box: Any, jit: bool | None = None) -> list[tuple[str, float]]:
    """Time every statement the sandbox runs from now on (the profile of the diagnosis, statement by statement);
    ``jit``: force PostgreSQL's JIT on or off (True: as the diagnosis ran before it turned JIT off)."""
    timed: list[tuple[str, float]] = []
    query = box.query

    def timing(sql: str, *args: Any, **kwargs: Any) -> Any:
        if jit is not None:
            kwargs["jit"] = jit
        start = time.perf_counter()
        try:
            return query(sql, *args, **kwargs)
        finally:
            timed.append((_kind(sql), time.perf_counter() - start))

    box.query = timing
    return timed


def timed_scan(box: Any, checks: list[Any]) -> tuple[Any, float, list[str]]:
    """Scan ``checks`` through ``box`` (one sandbox at a time): the findings, the seconds, and the list that keeps
    receiving every statement the sandbox sends from now on."""
    from watchdog.scan.scanner import scan

    sent: list[str] = []
    box.on_execute(sent.append)
    start = time.perf_counter()
    doc = scan(box, checks, parallel=1)
    return doc, time.perf_counter() - start, sent


def measure(url: str, suite_path: Path, repeat: int, jit_too: bool = False) -> dict[str, Any]:
    """Medians over ``repeat`` rounds of the scan and its diagnosis; ``jit_too``: each round also diagnoses with
    PostgreSQL's JIT on, as the diagnosis ran before (interleaved, for the comparison)."""
    from watchdog.diagnose import diagnose
    from watchdog.sandbox import Sandbox
    from watchdog.scan.suites import load_suite

    scan_s: list[float] = []
    diag_s: list[float] = []
    statements: dict[str, int] = {}
    failing = 0
    errors: list[str] = []
    per_statement: dict[str, list[float]] = {}
    jit_s: list[float] = []
    for _ in range(repeat):
        checks = load_suite(suite_path).checks
        with Sandbox(url, timeout_s=600) as box:
            doc, seconds, sent = timed_scan(box, checks)
            scan_s.append(seconds)
            statements["scan"] = len(sent)
            failing = sum(f.status in ("fail", "warn") for f in doc.findings)
            sent.clear()
            query = box.query
            timed = _timed(box)
            start = time.perf_counter()
            found = diagnose(box, checks, doc.findings, timeout_s=600)
            diag_s.append(time.perf_counter() - start)
            for kind, seconds in timed:
                per_statement.setdefault(kind, []).append(seconds)
            statements["diagnosis"] = len(sent)
            errors = [d["error"] for d in found.values() if "error" in d]
            if jit_too:
                box.query = query  # type: ignore[method-assign]
                _timed(box, jit=True)
                start = time.perf_counter()
                diagnose(box, checks, doc.findings, timeout_s=600)
                jit_s.append(time.perf_counter() - start)
            box.query = query  # type: ignore[method-assign]
    scan_median, diag_median = statistics.median(scan_s), statistics.median(diag_s)
    before = {"diagnosis_jit_s": round(statistics.median(jit_s), 3),
              "ratio_jit": round(statistics.median(jit_s) / scan_median, 3),
              "runs_jit_s": [round(x, 3) for x in jit_s]} if jit_s else {}
    return {**before, "failing_checks": failing, "scan_s": round(scan_median, 3),
            "diagnosis_s": round(diag_median, 3), "ratio": round(diag_median / scan_median, 3),
            "statements": statements, "errors": errors,
            "diagnosis_statement_s": {k: round(statistics.median(v), 3) for k, v in per_statement.items()},
            "runs": {"scan_s": [round(x, 3) for x in scan_s], "diagnosis_s": [round(x, 3) for x in diag_s]}}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[100_000, 1_000_000])
    parser.add_argument("--engines", nargs="+", default=["sqlite", "postgresql"])
    parser.add_argument("--failing", type=int, nargs="+", default=[1, 5, 20])
    parser.add_argument("--repeat", type=int, default=2)
    parser.add_argument("--jit-too", action="store_true",
                        help="PostgreSQL: also time each diagnosis with JIT on (as it ran before), interleaved")
    parser.add_argument("--out", type=Path, default=Path("bench/results/diagnose_cost.json"))
    args = parser.parse_args()
    results: list[dict[str, Any]] = []
    started = datetime.now(UTC).isoformat(timespec="seconds")
    load_before = machine()["loadavg"]
    with tempfile.TemporaryDirectory(prefix="wd-diag-bench-") as tmp:
        for rows in args.sizes:
            for engine in args.engines:
                built = time.perf_counter()
                if engine == "sqlite":
                    path = Path(tmp) / f"events_{rows}.db"
                    build_sqlite(path, rows)
                    url = f"sqlite:///{path}"
                else:
                    url = build_postgres(rows)
                build_s = round(time.perf_counter() - built, 1)
                for failing in args.failing:
                    found = measure(url, suite(Path(tmp) / f"suite_{failing}.yaml", failing), args.repeat,
                                    jit_too=args.jit_too and engine == "postgresql")
                    row = {"engine": engine, "rows": rows, "checks": failing, "build_s": build_s, **found,
                           "loadavg": machine()["loadavg"]}
                    print(json.dumps(row), flush=True)
                    results.append(row)
                if engine == "sqlite":
                    path.unlink()
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps({"benchmark": "diagnose_cost", "started_at": started, "machine": machine(),
                                    "loadavg_at_start": load_before,
                                    "finished_at": datetime.now(UTC).isoformat(timespec="seconds"),
                                    "results": results}, indent=2) + "\n", encoding="utf-8")


if __name__ == "__main__":
    main()
