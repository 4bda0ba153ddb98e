"""The floor of any checksum comparison: ``count(*)`` against the cheapest hand-written checksum of the same rows
and against ``watchdog diff`` of two identical tables, on PostgreSQL.

    .venv/bin/python -m bench.reconcile_floor [--rows 1000000,10000000] [--reps 3] [--prefix recon_f]
                                             [--name reconcile-floor-1m] [--keep]

Two PostgreSQL databases hold the same ``orders`` table (bench/reconcile_bench.py loads it). Per repetition, in
rotating order: ``SELECT count(*)`` on both, the one-statement checksum
``SELECT count(*), sum(hash_record_extended(ROW(id, amount, status, created_at), 0))`` on both (no canonical
forms: it only holds between two PostgreSQL servers of one version), the same sum over watchdog's native row hash
(the canonical forms: ``amount`` rounded to cents, ``created_at`` truncated to the second, text in "C"), and
``watchdog diff`` of the two (a fresh process, as the reconcile bench runs it). Every timing is wall seconds for
both sides, one after the other for the statements, both at once for watchdog. Nothing asserts a timing.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import time
from typing import Any

from bench import reconcile_bench as rb
from bench.common import machine
from watchdog.reconcile import native
from watchdog.reconcile.canonical import ColumnForm

CHECKSUM = "SELECT count(*), sum(hash_record_extended(ROW(id, amount, status, created_at), 0)) FROM orders"
FORMS = [ColumnForm("id", "int"), ColumnForm("amount", "num", scale=2), ColumnForm("status", "text"),
         ColumnForm("created_at", "timestamp", precision=0)]
#: the same sum over the row hash watchdog computes between two PostgreSQL servers
CANONICAL = f"SELECT count(*), sum({native.row_hash(FORMS, 'postgres')}) FROM orders"


def timed_both(databases: tuple[str, str], sql: str) -> tuple[float, list[Any]]:
    clock = time.monotonic()
    answers = []
    for name in databases:
        with rb._pg(name) as c:
            answers.append(c.execute(sql).fetchone())
    return time.monotonic() - clock, answers


def measure(rows: int, reps: int) -> dict[str, Any]:
    a, b = f"{rb.PREFIX}_a", f"{rb.PREFIX}_b"
    rb.DATA.mkdir(parents=True, exist_ok=True)
    rb.load_pg(a, rows, 0)
    rb.load_pg(b, rows, 0)
    tools = ["count", "checksum", "canonical", "watchdog"]
    sql = {"count": "SELECT count(*) FROM orders", "checksum": CHECKSUM, "canonical": CANONICAL}
    samples: dict[str, list[float]] = {t: [] for t in tools}
    checks: dict[str, Any] = {}
    for rep in range(reps + 1):  # the first round warms the caches and is not kept
        for tool in tools[rep % len(tools):] + tools[:rep % len(tools)]:
            if tool == "watchdog":
                got = rb.run_watchdog(f"{rb.PG}/{a}", f"{rb.PG}/{b}")
                seconds = got["wall_s"]
                checks["watchdog_identical"] = not any(got["counts"].values())
                checks["watchdog_statements"] = got["statements"]
            else:
                seconds, answers = timed_both((a, b), sql[tool])
                checks[f"{tool}_equal"] = answers[0] == answers[1]
            if rep:
                samples[tool].append(seconds)
    med = {t: statistics.median(v) for t, v in samples.items()}
    return {"rows": rows, "samples": samples, "median_s": med, "checks": checks,
            "checksum_vs_count": med["checksum"] / med["count"], "canonical_vs_count": med["canonical"] / med["count"],
            "watchdog_vs_count": med["watchdog"] / med["count"],
            "watchdog_vs_checksum": med["watchdog"] / med["checksum"], "load": os.getloadavg()}


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--rows", default="1000000,10000000")
    p.add_argument("--reps", type=int, default=3)
    p.add_argument("--prefix", default="recon_f")
    p.add_argument("--name", default="reconcile-floor-1m")
    p.add_argument("--keep", action="store_true")
    args = p.parse_args()
    rb.PREFIX, rb.DATA = args.prefix, rb.DATA_ROOT / args.prefix
    out = rb.REPO / "bench" / "results" / f"{args.name}.json"
    results: dict[str, Any] = {"machine": machine(), "checksum_sql": CHECKSUM, "canonical_sql": CANONICAL, "runs": []}
    try:
        for rows in [int(r) for r in args.rows.split(",")]:
            run = measure(rows, args.reps)
            results["runs"].append(run)
            out.write_text(json.dumps(results, indent=1))
            m = run["median_s"]
            print(f"{rows:>10,} rows: count {m['count']:.3f} s, checksum {m['checksum']:.3f} s "
                  f"({run['checksum_vs_count']:.1f}x), canonical {m['canonical']:.3f} s "
                  f"({run['canonical_vs_count']:.1f}x), watchdog {m['watchdog']:.3f} s "
                  f"({run['watchdog_vs_count']:.1f}x count, {run['watchdog_vs_checksum']:.2f}x checksum) "
                  f"{run['checks']}", flush=True)
    finally:
        if not args.keep:
            with rb._pg() as admin:
                for name in (f"{rb.PREFIX}_a", f"{rb.PREFIX}_b"):
                    admin.execute(f"DROP DATABASE IF EXISTS {name} WITH (FORCE)")
    print(f"results: {out}")


if __name__ == "__main__":
    sys.exit(main())
