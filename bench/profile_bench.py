"""Profile / suggest benchmark: are suggested suites sound, how much do they catch, what do they cost?

    python -m bench.profile_bench [--rows 1000000] [--skip-timing]

Quality (SQLite): a suite is suggested from each raha dataset's clean.csv (loaded as it comes, every
column TEXT) and from Chinook; it must pass with zero failures on that same data. The raha suite is
then run on dirty.csv (same row and column positions; headers renamed to the clean ones) and every
failing row of each failing check on a column flags that cell; we report the share of wrong cells
(dirty != clean) flagged, and how many flagged cells were in fact right. The demo CRM suite must
validate and run without edits.

Cost: at ``--rows`` rows (bench/datagen.py tables, SQLite and PostgreSQL), the time of ``profile``
and of ``suggest`` (profile + every suggestion run) as a ratio to one ``SELECT count(*)`` over the
same tables, all in this process through the sandbox; interleaved, medians of ``--reps``. Beside
them, the old profile that ran every shape regex on every text value (``profile_all_regexes``), the
statements each issued (catalog reads not counted) and the load average. The PostgreSQL database is
``WATCHDOG_BENCH_PG_DATABASE`` (default wd_bench), created and dropped by the run.

    python -m bench.profile_bench --rows 10000000 --backends postgresql --skip-quality --reps 1 --no-before
"""

from __future__ import annotations

import argparse
import csv
import json
import os
import shutil
import sqlite3
import statistics
import tempfile
import time
from pathlib import Path
from typing import Any

from sqlglot import exp

from watchdog.profile.suggest import profile_database, suggest_suite
from watchdog.sandbox import Sandbox
from watchdog.scan.scanner import scan
from watchdog.scan.suites import load_suite

HERE = Path(__file__).resolve().parent
SHARED = HERE.parent.parent / "shared" / "datasets"
RAHA = ("hospital", "flights", "beers")


def load_csv(path: Path, db: Path, table: str, header: list[str] | None = None) -> tuple[list[str], list[list[str]]]:
    with path.open(newline="", encoding="utf-8") as fh:
        rows = list(csv.reader(fh))
    cols = header or rows[0]
    body = [[c.strip("\r") for c in r] for r in rows[1:]]
    conn = sqlite3.connect(db)
    conn.execute(f'CREATE TABLE "{table}" ({", ".join(chr(34) + c + chr(34) + " TEXT" for c in cols)})')
    conn.executemany(f'INSERT INTO "{table}" VALUES ({", ".join("?" * len(cols))})',
                     [[None if v == "" else v for v in r] for r in body])
    conn.commit()
    conn.close()
    return cols, body


def flagged_cells(box: Sandbox, suite_path: Path, cols: list[str]) -> tuple[dict[str, Any], set[tuple[int, int]]]:
    checks = load_suite(suite_path).checks
    doc = scan(box, checks, sample=0)
    cells: set[tuple[int, int]] = set()
    for check, finding in zip(checks, doc.findings, strict=True):
        if finding.status not in ("fail", "warn"):
            continue
        # a functional dependency's failing rows are the likely wrong cells of its dependent column only
        columns = ([check.column] if check.kind == "functional_dependency" else
                   check.columns or ([check.column] if check.column else []))
        query = check.failing_rows(box.dialect)
        if not columns or not isinstance(query, exp.Select):
            continue
        source = query.args["from_"].this if "from_" in query.args else query.args["from"].this
        alias = source.alias_or_name
        query = query.select(exp.column("rowid", table=alias), append=False)
        rowids = [r[0] for r in box.query(query.sql(dialect=box.dialect), max_rows=10_000_000).rows]
        for name in columns:
            cells.update((int(rid) - 1, cols.index(name)) for rid in rowids)
    return doc.summary.to_json_dict(), cells


def raha(name: str, work: Path) -> dict[str, Any]:
    folder = SHARED / f"raha_{name}"
    clean_db, dirty_db = work / f"{name}_clean.db", work / f"{name}_dirty.db"
    cols, clean = load_csv(folder / "clean.csv", clean_db, name)
    _, dirty = load_csv(folder / "dirty.csv", dirty_db, name, header=cols)
    suite = work / f"{name}.yaml"
    with Sandbox(f"sqlite:///{clean_db}", timeout_s=120) as box:
        result = suggest_suite(box, profile_database(box))
        suite.write_text(result.text)
        on_clean = scan(box, load_suite(suite).checks, sample=0).summary
    wrong = {(r, c) for r, row in enumerate(dirty) for c, v in enumerate(row) if v != clean[r][c]}
    with Sandbox(f"sqlite:///{dirty_db}", timeout_s=120) as box:
        summary, flagged = flagged_cells(box, suite, cols)
    caught = wrong & flagged
    return {"dataset": f"raha_{name}", "checks": on_clean.checks, "commented_out": len(result.commented),
            "commented_kinds": sorted({c.kind for c in result.commented}),
            "failures_on_clean": on_clean.failed + on_clean.warned + on_clean.errors,
            "checks_failing_on_dirty": summary["failed"], "wrong_cells": len(wrong), "caught": len(caught),
            "caught_share": round(len(caught) / len(wrong), 4) if wrong else None,
            "flagged_right_cells": len(flagged - wrong)}


def _suggest_and_scan(db: Path, suite: Path) -> tuple[Any, Any]:
    """Suggest a suite from the SQLite file ``db``, write it to ``suite`` and scan the same data with it."""
    with Sandbox(f"sqlite:///{db}", timeout_s=120) as box:
        result = suggest_suite(box, profile_database(box))
        suite.write_text(result.text)
        return result, scan(box, load_suite(suite).checks, sample=0).summary


def chinook(work: Path) -> dict[str, Any]:
    db = work / "chinook.db"
    shutil.copy(SHARED / "chinook" / "Chinook_Sqlite.sqlite", db)
    result, s = _suggest_and_scan(db, work / "chinook.yaml")
    return {"dataset": "chinook", "checks": s.checks, "commented_out": len(result.commented),
            "failures_on_source": s.failed + s.warned + s.errors}


def demo(work: Path) -> dict[str, Any]:
    from watchdog.run.demo_data import build_demo_database

    db = work / "crm.db"
    build_demo_database(db)
    result, s = _suggest_and_scan(db, work / "crm.yaml")
    return {"dataset": "demo_crm", "checks": s.checks, "commented_out": len(result.commented),
            "failures": s.failed + s.warned, "errors": s.errors, "notes": result.notes}


def timing(url: str, label: str, rows: int, reps: int = 3, before: bool = True) -> dict[str, Any]:
    """Medians of ``reps`` interleaved runs: count(*), profile (and the old ungated profile), suggest."""
    tables = ["customers", "orders"]
    runs: dict[str, list[float]] = {}
    statements: dict[str, int] = {}
    load = [round(x, 2) for x in os.getloadavg()]
    with Sandbox(url, timeout_s=7200) as box:
        sent: list[str] = []
        box.on_execute(sent.append)
        jobs: dict[str, Any] = {
            "count": lambda: [box.query(f'SELECT count(*) FROM "{t}"').scalar() for t in tables],
            "profile": lambda: profile_database(box, tables),
            "suggest": lambda: suggest_suite(box, profile_database(box, tables)),
        }
        if before:
            jobs["profile_all_regexes"] = lambda: profile_database(box, tables, gate_shapes=False)
        for _ in range(reps):
            for name, job in jobs.items():
                sent.clear()
                start = time.perf_counter()
                job()
                runs.setdefault(name, []).append(time.perf_counter() - start)
                statements[name] = len([s for s in sent if not _catalog(s)])
                print(f"{label} {rows:,}: {name} {runs[name][-1]:.3f} s, {statements[name]} statements", flush=True)
    med = {k: statistics.median(v) for k, v in runs.items()}
    out: dict[str, Any] = {"db": label, "rows_per_table": rows, "tables": len(tables), "reps": reps,
                           "load_average_start": load, "load_average_end": [round(x, 2) for x in os.getloadavg()]}
    for name, value in med.items():
        out[f"{name}_s"] = round(value, 3)
        if name != "count":
            out[f"{name}_ratio"] = round(value / med["count"], 2)
        out[f"{name}_statements"] = statements[name]
    return out


def _catalog(sql: str) -> bool:
    """Catalog reads (schema, planner statistics) are not passes over the data."""
    low = sql.lower()
    return any(word in low for word in ("information_schema", "pragma_", "pg_class", "pg_stats", "sqlite_master"))


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--rows", type=int, default=1_000_000)
    parser.add_argument("--skip-timing", action="store_true")
    parser.add_argument("--skip-quality", action="store_true")
    parser.add_argument("--reps", type=int, default=3, help="timing runs per figure (the median is kept)")
    parser.add_argument("--pg-admin", default="postgresql+psycopg://postgres@127.0.0.1:5432/postgres")
    parser.add_argument("--backends", default="postgresql,sqlite", help="timing on these (comma-separated)")
    parser.add_argument("--no-before", action="store_true", help="skip the old every-regex profile in timings")
    parser.add_argument("--out", default=None, help="results file name under bench/results/")
    args = parser.parse_args()
    out: dict[str, Any] = {"quality": [], "timing": []}
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        for name in RAHA if not args.skip_quality else ():
            out["quality"].append(raha(name, work))
            print(json.dumps(out["quality"][-1]), flush=True)
        for extra in (chinook, demo) if not args.skip_quality else ():
            out["quality"].append(extra(work))
            print(json.dumps(out["quality"][-1]), flush=True)
    if not args.skip_timing:
        from bench import datagen

        backends = args.backends.split(",")
        if "postgresql" in backends:  # the database is named by WATCHDOG_BENCH_PG_DATABASE (default wd_bench)
            datagen.create_pg_database(args.pg_admin)
            try:
                datagen.build_postgres(args.pg_admin, args.rows)
                out["timing"].append(timing(datagen.pg_url(args.pg_admin), "PostgreSQL", args.rows, args.reps,
                                            not args.no_before))
            finally:
                datagen.drop_pg_database(args.pg_admin)
            print(json.dumps(out["timing"][-1]), flush=True)
        if "sqlite" in backends:
            path, _ = datagen.build_sqlite(HERE / "data", args.rows)
            out["timing"].append(timing(f"sqlite:///{path}", "SQLite", args.rows, args.reps, not args.no_before))
            print(json.dumps(out["timing"][-1]), flush=True)
    results = HERE / "results"
    results.mkdir(exist_ok=True)
    stamp = time.strftime("%Y%m%dT%H%M%SZ", time.gmtime())
    name = args.out or f"profile-{stamp}.json"
    (results / name).write_text(json.dumps(out, indent=2, default=str))
    print(f"results: bench/results/{name}")


if __name__ == "__main__":
    main()
