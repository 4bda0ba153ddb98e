"""DuckDB over Parquet files: ``watchdog scan --file`` against the hand-written single pass on DuckDB itself.

The benchmark tables (``bench/datagen.py``: customers and orders, defects planted at known rates) are
written as Parquet by DuckDB, then, interleaved ``--reps`` times, each in a fresh process:

* ``watchdog scan --file customers=… --file orders=… --checks bench/suite.yaml`` (samples on, and
  ``--sample 0``), every run checked against the planted counts;
* the limit: the same counts by hand in four statements straight on ``duckdb`` (one aggregate pass per
  file, the unique ``GROUP BY``, the foreign-key anti-join), no parser, no sandbox, no worker, no report.

Also counted: the statements one scan sends (in process, through the sandbox's listener). Prints JSON
(and writes it with ``--out``); the load average is recorded, as elsewhere in bench/.

    python bench/duckdb_bench.py --rows 1000000 --reps 3 [--out bench/results/duckdb-1m.json]
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))

from bench.datagen import _customers_select, _orders_select, expected_counts  # noqa: E402

SUITE = HERE / "suite.yaml"
REGEX = r"^[^@ ]+@[^@ ]+\.[a-z]{2,}$"
LIMIT = """
import json, sys, duckdb
c, o, rx = sys.argv[1], sys.argv[2], sys.argv[3]
con = duckdb.connect()
rows = [con.execute(sql).fetchone() for sql in [
    f"SELECT count(*), count(*) FILTER (WHERE email IS NULL), count(*) FILTER (WHERE country IS NULL), "
    f"count(*) FILTER (WHERE NOT regexp_matches(email, '{rx}')), "
    f"count(*) FILTER (WHERE status NOT IN ('active', 'inactive', 'pending')), "
    f"count(*) FILTER (WHERE age < 18 OR age > 120) FROM read_parquet('{c}')",
    f"SELECT count(*), count(*) FILTER (WHERE customer_id IS NULL), "
    f"count(*) FILTER (WHERE amount < 0 OR amount > 10000) FROM read_parquet('{o}')",
    f"SELECT count(*), sum(n) FROM (SELECT count(*) AS n FROM read_parquet('{c}') WHERE email IS NOT NULL "
    f"GROUP BY email HAVING count(*) > 1)",
    f"SELECT count(*) FROM read_parquet('{o}') AS o WHERE o.customer_id IS NOT NULL AND NOT EXISTS "
    f"(SELECT 1 FROM read_parquet('{c}') AS c WHERE c.id = o.customer_id)"]]
print(json.dumps([[int(v or 0) for v in r] for r in rows]))
"""


def build(folder: Path, rows: int) -> tuple[Path, Path]:
    import duckdb

    customers, orders = folder / "customers.parquet", folder / "orders.parquet"
    concat = lambda a, b: f"{a} || CAST({b} AS VARCHAR)"  # noqa: E731
    con = duckdb.connect()
    con.execute(f"COPY (SELECT * FROM (SELECT {_customers_select('i', concat)} FROM range(1, {rows} + 1) s(i)) "
                f"AS t(id, name, email, country, status, age)) TO '{customers}' (FORMAT parquet)")
    con.execute(f"COPY (SELECT * FROM (SELECT {_orders_select(rows, 'i')} FROM range(1, {rows} + 1) s(i)) "
                f"AS t(id, customer_id, amount, status)) TO '{orders}' (FORMAT parquet)")
    con.close()
    return customers, orders


def run_watchdog(customers: Path, orders: Path, sample: int, out: Path, rows: int) -> float:
    start = time.perf_counter()
    done = subprocess.run([sys.executable, "-m", "watchdog", "scan", "--file", f"customers={customers}",
                           "--file", f"orders={orders}", "--checks", str(SUITE), "--sample", str(sample),
                           "--json", "--out", str(out)], capture_output=True, text=True, check=False)
    elapsed = time.perf_counter() - start
    if done.returncode not in (0, 1):
        raise SystemExit(f"watchdog scan failed: {done.stderr.strip()}")
    found = {f["name"]: f for f in json.loads(done.stdout)["findings"]}
    for name, want in expected_counts(rows).items():
        got = {key: found[name].get(key) if key != "duplicate_values" and key != "excess_rows"
               else found[name]["details"].get(key) for key in want}
        if got != want:
            raise SystemExit(f"{name}: watchdog counted {got}, planted {want}")
    return elapsed


def run_limit(customers: Path, orders: Path, rows: int) -> float:
    start = time.perf_counter()
    done = subprocess.run([sys.executable, "-c", LIMIT, str(customers), str(orders), REGEX], capture_output=True,
                          text=True, check=True)
    elapsed = time.perf_counter() - start
    (c_rows, email_null, _country, bad_email, _status, _age), (o_rows, _cid, bad_amount), (_dups, dup_rows), \
        (orphans,) = json.loads(done.stdout)
    want = expected_counts(rows)
    assert (c_rows, o_rows, email_null, bad_email, bad_amount, dup_rows, orphans) == (
        rows, rows, want["customers.email.not_null"]["failing"], want["customers.email.pattern"]["failing"],
        want["orders.amount.range"]["failing"], want["customers.email.unique"]["failing"],
        want["orders.customer_id.foreign_key"]["failing"]), "the hand-written pass miscounted"
    return elapsed


def in_process(customers: Path, orders: Path) -> tuple[float, float, float, int]:
    """Without the processes' start: (worker start, the scan's statements, the limit's statements, statements)."""
    import duckdb

    from watchdog.sandbox import Sandbox
    from watchdog.scan.scanner import scan
    from watchdog.scan.suites import load_suites

    sent: list[str] = []
    start = time.perf_counter()
    with Sandbox("duckdb:///:memory:", files={"customers": str(customers), "orders": str(orders)},
                 timeout_s=600) as box:
        box.query("SELECT 1")  # starts the worker, which makes the views
        started = time.perf_counter()
        box.on_execute(sent.append)
        scan(box, [c for s in load_suites([SUITE]) for c in s.checks], sample=5)
        scanned = time.perf_counter()
    con = duckdb.connect()
    begin = time.perf_counter()
    exec(LIMIT.split("con = duckdb.connect()")[1].replace("print(json.dumps", "_ = ("),  # noqa: S102 - our own text
         {"c": str(customers), "o": str(orders), "rx": REGEX, "con": con, "json": json})
    limit = time.perf_counter() - begin
    con.close()
    return started - start, scanned - started, limit, len(sent)


def summary(times: list[float]) -> dict:
    return {"median_s": round(statistics.median(times), 3), "min_s": round(min(times), 3),
            "max_s": round(max(times), 3), "runs": [round(t, 3) for t in times]}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--rows", type=int, default=1_000_000)
    parser.add_argument("--reps", type=int, default=3)
    parser.add_argument("--out", type=Path, default=None)
    args = parser.parse_args()
    import duckdb

    with tempfile.TemporaryDirectory(prefix="wd_duckdb_bench_") as tmp:
        folder = Path(tmp)
        start = time.perf_counter()
        customers, orders = build(folder, args.rows)
        built = time.perf_counter() - start
        times: dict[str, list[float]] = {"watchdog": [], "watchdog_sample0": [], "limit": []}
        load = [os.getloadavg()[0]]
        for rep in range(args.reps):
            times["watchdog"].append(run_watchdog(customers, orders, 5, folder / f"out{rep}", args.rows))
            times["watchdog_sample0"].append(run_watchdog(customers, orders, 0, folder / f"o0{rep}", args.rows))
            times["limit"].append(run_limit(customers, orders, args.rows))
            load.append(os.getloadavg()[0])
        inproc = [in_process(customers, orders) for _ in range(args.reps)]
        statements = inproc[0][3]
        sizes = {p.name: p.stat().st_size for p in (customers, orders)}
    result = {
        "rows_per_table": args.rows, "reps": args.reps, "duckdb": duckdb.__version__,
        "machine": f"{os.cpu_count()} cores, {platform.processor() or platform.machine()}, {platform.system()}",
        "load_average_1m": {"start": round(load[0], 2), "max": round(max(load), 2), "end": round(load[-1], 2)},
        "parquet_bytes": sizes, "build_s": round(built, 2),
        "watchdog": summary(times["watchdog"]), "watchdog_sample0": summary(times["watchdog_sample0"]),
        "limit": summary(times["limit"]), "statements_per_scan": statements, "limit_statements": 4,
        "in_process": {"worker_start": summary([r[0] for r in inproc]), "scan": summary([r[1] for r in inproc]),
                       "limit": summary([r[2] for r in inproc])},
        "ratio_watchdog_to_limit": round(statistics.median(times["watchdog"]) / statistics.median(times["limit"]), 2),
        "ratio_sample0_to_limit": round(statistics.median(times["watchdog_sample0"])
                                        / statistics.median(times["limit"]), 2),
        "counts_checked": "every run matched the planted counts",
    }
    text = json.dumps(result, indent=2)
    print(text)
    if args.out:
        args.out.write_text(text + "\n", encoding="utf-8")


if __name__ == "__main__":
    main()
