"""Table monitors over a schema of many tables: statements and seconds per run, against exact counts, in one run.

    .venv/bin/python -m bench.monitor_bench [--engine postgresql|mariadb] [--tables 100,1000] [--reps 5]
                                            [--rows 100] [--audit-runs 3]

A fresh database per size holds N tables (id, name, amount, created_at; ``--rows`` rows each). Each repetition
runs, interleaved and in a rotating order, (a) the monitors as configured by default (catalogue statistics) and
(b) the same monitors with ``exact_counts: true`` (one ``count(*)`` of every table, UNION ALL per schema): fresh
sandbox each time, the history of the earlier repetitions given, statements counted by the sandbox's listener;
the time is split into reading the catalogue and judging the tables.
Between repetitions 1 % of the tables get new rows (so freshness and volume see changes). Then ``--audit-runs``
runs of a configured audit with ``monitor:`` go through the whole path (history store, findings.json, report.md,
report.html). Nothing asserts a timing; the number of tables found is checked.
"""

from __future__ import annotations

import argparse
import json
import statistics
import tempfile
import time
import uuid
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import sqlalchemy as sa
from sqlalchemy.engine import make_url

from bench.common import machine
from watchdog.monitor.catalogue import read_catalogue
from watchdog.monitor.config import MonitorConfig
from watchdog.monitor.judge import table_findings
from watchdog.sandbox import Sandbox

ADMIN = {"postgresql": "postgresql+psycopg://postgres@127.0.0.1:5432/postgres",
         "mariadb": "mysql+pymysql://root@127.0.0.1:3306/"}
RESULTS = Path(__file__).resolve().parent / "results"


def create(engine: str, tables: int, rows: int) -> tuple[str, Any]:
    name = f"wd_bench_mon_{uuid.uuid4().hex[:8]}"
    admin = sa.create_engine(ADMIN[engine], isolation_level="AUTOCOMMIT")
    with admin.connect() as conn:
        conn.exec_driver_sql(f"CREATE DATABASE {name}")
    url = make_url(ADMIN[engine]).set(database=name).render_as_string(hide_password=False)
    db = sa.create_engine(url)
    with db.begin() as conn:
        for i in range(tables):
            if engine == "postgresql":
                conn.exec_driver_sql(f"CREATE TABLE t{i:04d} (id INTEGER PRIMARY KEY, name TEXT, "
                                     "amount NUMERIC(10, 2), created_at TIMESTAMP)")
                conn.exec_driver_sql(f"INSERT INTO t{i:04d} SELECT g, 'n' || g, g * 1.5, now() FROM "
                                     f"generate_series(1, {rows}) AS g")
            else:
                conn.exec_driver_sql(f"CREATE TABLE t{i:04d} (id INT PRIMARY KEY, name VARCHAR(40), "
                                     "amount DECIMAL(10, 2), created_at DATETIME)")
                conn.exec_driver_sql(f"INSERT INTO t{i:04d} SELECT seq, CONCAT('n', seq), seq * 1.5, NOW() "
                                     f"FROM seq_1_to_{rows}")
    if engine == "postgresql":
        with db.connect() as conn:
            conn.exec_driver_sql("SELECT pg_stat_force_next_flush()")

    def drop() -> None:
        db.dispose()
        with admin.connect() as conn:
            force = " WITH (FORCE)" if engine == "postgresql" else ""
            conn.exec_driver_sql(f"DROP DATABASE IF EXISTS {name}{force}")
        admin.dispose()

    return url, (db, drop)


def grow(db: sa.Engine, engine: str, tables: int, rep: int) -> None:
    """1 % of the tables (at least one) get 5 new rows."""
    step = max(1, tables // max(1, tables // 100))
    with db.begin() as conn:
        for i in range(rep % step, tables, step):
            base = 1_000_000 + rep * 10
            values = ", ".join(f"({base + k}, 'g', 1.0, {'now()' if engine == 'postgresql' else 'NOW()'})"
                               for k in range(5))
            conn.exec_driver_sql(f"INSERT INTO t{i:04d} VALUES {values}")
        if engine == "postgresql":
            conn.exec_driver_sql("SELECT pg_stat_force_next_flush()")


def one(url: str, config: MonitorConfig, past: dict[str, list[dict[str, Any]]], run_id: str) -> dict[str, Any]:
    sent: list[str] = []
    clock = time.perf_counter()
    with Sandbox(url, max_rows=1000) as box:
        box.on_execute(sent.append)
        catalogue = read_catalogue(box, config)
        read_s = time.perf_counter() - clock
        found = table_findings(catalogue, config, past, datetime.now(UTC))
    seconds = time.perf_counter() - clock
    statements = catalogue.statements
    now = datetime.now(UTC).isoformat()
    for f in found:
        past.setdefault(f.name, []).append({"run_id": run_id, "started_at": now, "finding": f.to_json_dict()})
    return {"seconds": round(seconds, 4), "catalogue_s": round(read_s, 4), "judge_s": round(seconds - read_s, 4),
            "statements": len(sent), "counted": statements,
            "tables": len({f.table for f in found}), "flagged": sum(f.status != "pass" for f in found)}


def audit_runs(url: str, runs: int, tables: int) -> list[dict[str, Any]]:
    from watchdog.run.audit import execute_audit
    from watchdog.settings import load_settings

    folder = Path(tempfile.mkdtemp(prefix="wd-monitor-bench-"))
    config = folder / "watchdog.yaml"
    config.write_text(f"""\
databases:
  warehouse: {{url: "{url}"}}
history: {{url: "sqlite:///{folder / 'history.db'}"}}
audits:
  tables:
    database: warehouse
    diagnose: false
    monitor: {{}}
    deliver:
      - file: {{dir: {folder / 'reports'}}}
""")
    settings = load_settings(config)
    out = []
    for _ in range(runs):
        clock = time.perf_counter()
        run = execute_audit(settings, "tables")
        seconds = time.perf_counter() - clock
        assert run.scan is not None and len(run.scan.doc.findings) == 3 * tables, len(run.scan.doc.findings)
        out.append({"seconds": round(seconds, 3), "status": run.status})
    return out


def bench(engine: str, tables: int, rows: int, reps: int, audits: int) -> dict[str, Any]:
    url, (db, drop) = create(engine, tables, rows)
    try:
        modes = {"catalogue": MonitorConfig(), "exact_counts": MonitorConfig(exact_counts=True)}
        pasts: dict[str, dict[str, list[dict[str, Any]]]] = {mode: {} for mode in modes}
        results: dict[str, list[dict[str, Any]]] = {mode: [] for mode in modes}
        for rep in range(reps):
            order = list(modes) if rep % 2 == 0 else list(reversed(modes))
            for mode in order:
                got = one(url, modes[mode], pasts[mode], f"{mode}-{rep}")
                assert got["tables"] == tables, got
                results[mode].append(got)
            grow(db, engine, tables, rep)
        summary = {mode: {"median_s": round(statistics.median(r["seconds"] for r in runs), 4),
                          "median_catalogue_s": round(statistics.median(r["catalogue_s"] for r in runs), 4),
                          "median_judge_s": round(statistics.median(r["judge_s"] for r in runs), 4),
                          "statements": sorted({r["statements"] for r in runs}), "runs": runs}
                   for mode, runs in results.items()}
        ratio = summary["catalogue"]["median_s"] / summary["exact_counts"]["median_s"]
        return {"tables": tables, "rows_per_table": rows, "monitor": summary,
                "catalogue_over_exact_counts": round(ratio, 3),
                "audit_runs": audit_runs(url, audits, tables) if audits else []}
    finally:
        drop()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--engine", default="postgresql", choices=sorted(ADMIN))
    parser.add_argument("--tables", default="100,1000")
    parser.add_argument("--reps", type=int, default=5)
    parser.add_argument("--rows", type=int, default=100)
    parser.add_argument("--audit-runs", type=int, default=3)
    args = parser.parse_args()
    started = datetime.now(UTC).isoformat(timespec="seconds")
    at_start = machine()
    sizes = [bench(args.engine, int(n), args.rows, args.reps, args.audit_runs) for n in args.tables.split(",")]
    result = {"bench": "monitor", "engine": args.engine, "started_at": started, "machine": at_start,
              "machine_at_end": machine(), "sizes": sizes,
              "notes": "seconds per monitor run (catalogue read + judging every table against the earlier runs); "
                       "exact_counts = the same monitors with count(*) of every table; audit_runs = the whole "
                       "configured-audit path (history, findings.json, report.md, report.html), diagnosis off"}
    RESULTS.mkdir(exist_ok=True)
    path = RESULTS / f"monitor-{args.engine}.json"
    path.write_text(json.dumps(result, indent=2) + "\n")
    for size in sizes:
        m = size["monitor"]
        print(f"{args.engine} {size['tables']} tables: catalogue {m['catalogue']['median_s']} s "
              f"({m['catalogue']['statements']} statements), exact counts {m['exact_counts']['median_s']} s "
              f"({m['exact_counts']['statements']}), audit runs {[a['seconds'] for a in size['audit_runs']]} s")
    print(f"wrote {path} (load {at_start['loadavg']} -> {result['machine_at_end']['loadavg']})")


if __name__ == "__main__":
    main()
