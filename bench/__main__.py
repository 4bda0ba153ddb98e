"""``python -m bench``: run the benchmarks, print the tables, write bench/results/<name>.json.

Normally started by ``bench/run``, which first installs the peers' virtual environments.
"""

from __future__ import annotations

import argparse
import json
import os
import sqlite3
import sys
import time
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from bench import report
from bench.common import BENCH, GX_PYTHON, SODA_PYTHON, machine, peer_version

PARTS = ("scan", "sparse", "verify", "llm", "scheduler", "spark", "startup")
#: what runs without --only (spark starts a Spark Thrift server: asked for by name; startup, the start-up
#: diagnostics alone, also runs as part of scan)
DEFAULT_PARTS = ("scan", "sparse", "verify", "llm", "scheduler")


def parse(argv: list[str] | None) -> argparse.Namespace:
    p = argparse.ArgumentParser(prog="bench/run", description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--rows", default="100000,1000000", help="rows per table, comma-separated (multiples of 1000)")
    p.add_argument("--big", action="store_true", help="also 10,000,000 rows per table on every backend")
    p.add_argument("--pg-rows", default="10000000",
                   help="extra sizes for PostgreSQL alone, comma-separated (default 10000000; '' for none)")
    p.add_argument("--reps", type=int, default=5, help="timed repetitions per tool (default 5)")
    p.add_argument("--peer-reps", type=int, default=None,
                   help="repetitions for GX and Soda (default: --reps, or 3 when a peer's warm-up exceeds --peer-slow)")
    p.add_argument("--peer-slow", type=float, default=120.0, metavar="SECONDS", help="see --peer-reps (default 120)")
    p.add_argument("--only", default=",".join(DEFAULT_PARTS), help="comma-separated parts: " + ", ".join(PARTS))
    p.add_argument("--spark-rows", type=int, default=1_000_000,
                   help="spark part: rows per table on Spark and PostgreSQL (default 1000000; 10000000 for 10M)")
    p.add_argument("--quick", action="store_true", help="smoke check: 100k rows only, 3 reps, short idle")
    p.add_argument("--no-peers", action="store_true", help="skip Great Expectations and Soda Core")
    p.add_argument("--backends", default="sqlite,postgresql")
    p.add_argument("--pg-url", default=os.environ.get("WATCHDOG_TEST_POSTGRES_URL",
                                                      "postgresql://postgres@127.0.0.1:5432/postgres"),
                   help="an admin URL; the benchmark creates and drops the database wd_bench")
    p.add_argument("--data-dir", type=Path, default=Path(os.environ.get("WATCHDOG_BENCH_DATA", "/tmp/watchdog-bench")),
                   help="where the generated SQLite files are kept (default /tmp/watchdog-bench)")
    p.add_argument("--sparse-rows", type=int, default=1_000_000,
                   help="rows of the sparse-defects table (20 checks failing on 1-3 rows each; default 1000000)")
    p.add_argument("--fixed-rows", type=int, default=1000,
                   help="also a tiny size (3 reps) to show each tool's fixed cost; 0: skip (default 1000)")
    p.add_argument("--idle", type=float, default=60.0, help="seconds the scheduler is watched while idle (default 60)")
    p.add_argument("--llm-reps", type=int, default=3, help="stub --llm runs (default 3)")
    p.add_argument("--gguf", type=Path, default=None,
                   help="LLM part: also serve this GGUF model locally (xllamacpp, bench/.venv-llm) and measure it")
    p.add_argument("--name", default=None, help="results file name (default bench-<UTC timestamp>)")
    args = p.parse_args(argv)
    args.parts = [x.strip() for x in args.only.split(",") if x.strip()]
    unknown = set(args.parts) - set(PARTS)
    if unknown:
        p.error(f"unknown part(s) {sorted(unknown)}; choose from {', '.join(PARTS)}")
    args.sizes = [int(x.replace("_", "")) for x in args.rows.split(",") if x.strip()]
    if args.quick:
        args.sizes, args.reps, args.idle, args.llm_reps, args.fixed_rows = [100_000], 3, 10.0, 1, 0
        args.pg_rows = ""
    elif args.big and 10_000_000 not in args.sizes:
        args.sizes.append(10_000_000)
    args.pg_sizes = [int(x.replace("_", "")) for x in args.pg_rows.split(",") if x.strip()]
    if any(n % 1000 or n <= 0 for n in [*args.sizes, *args.pg_sizes, *([args.fixed_rows] if args.fixed_rows else [])]):
        p.error("--rows must be positive multiples of 1000")
    args.backend_list = tuple(b.strip() for b in args.backends.split(",") if b.strip())
    return args


def _pg_version(url: str) -> str | None:
    try:
        import psycopg

        with psycopg.connect(url.replace("postgresql+psycopg://", "postgresql://"), connect_timeout=5) as conn:
            return conn.execute("SHOW server_version").fetchone()[0]
    except Exception:  # noqa: BLE001 - reported as unavailable
        return None


def versions(args: argparse.Namespace) -> dict[str, Any]:
    from watchdog import __version__

    return {"watchdog": __version__, "sqlite": sqlite3.sqlite_version, "postgresql": _pg_version(args.pg_url),
            "great_expectations": None if args.no_peers else peer_version(GX_PYTHON, "great_expectations"),
            "soda_core": None if args.no_peers else peer_version(SODA_PYTHON, "soda-core")}


def main(argv: list[str] | None = None) -> int:
    args = parse(argv)
    started = datetime.now(UTC)
    name = args.name or "bench-" + started.strftime("%Y%m%dT%H%M%SZ")
    command = "bench/run " + " ".join(argv if argv is not None else sys.argv[1:])
    log = lambda msg: print(msg, file=sys.stderr, flush=True)  # noqa: E731 - progress on stderr, tables on stdout
    result: dict[str, Any] = {"name": name, "command": command.strip(),
                              "started_at": started.isoformat(timespec="seconds"),
                              "machine_at_start": machine(), "versions": versions(args)}
    if "postgresql" in args.backend_list and result["versions"]["postgresql"] is None:
        log(f"PostgreSQL not reachable at {args.pg_url}: benchmarking SQLite only")
        args.backend_list = tuple(b for b in args.backend_list if b != "postgresql")
        result["notes"] = ["PostgreSQL was not reachable: SQLite only"]
    clock = time.perf_counter()
    if "scan" in args.parts:
        from bench.scan_bench import run_scan_bench

        log(f"scan speed: rows {args.sizes} (PostgreSQL also {args.pg_sizes}), {args.reps} reps, "
            f"backends {args.backend_list}")
        result["scan"] = run_scan_bench(args.sizes, data_dir=args.data_dir, pg_admin=args.pg_url, reps=args.reps,
                                        peer_reps=args.peer_reps, peer_slow_s=args.peer_slow,
                                        with_peers=not args.no_peers, backends=args.backend_list, log=log,
                                        fixed_rows=args.fixed_rows, pg_only_sizes=args.pg_sizes)
        from bench import diagnostics

        log("diagnostics: start-up and SQLite REGEXP")
        regexp_rows = max([n for n in args.sizes if n <= 1_000_000] or [min(args.sizes)])
        sqlite_file = args.data_dir / f"bench_{regexp_rows}.sqlite"
        startup = diagnostics.startup(peers=not args.no_peers)
        result["diagnostics"] = {"startup": startup, "startup_ratios": diagnostics.startup_ratios(startup),
                                 "sqlite_regexp": diagnostics.sqlite_regexp(sqlite_file)
                                 if "sqlite" in args.backend_list and sqlite_file.is_file() else None}
    if "startup" in args.parts and "scan" not in args.parts:
        from bench import diagnostics

        log(f"diagnostics: start-up, {args.reps} reps")
        startup = diagnostics.startup(reps=args.reps, peers=not args.no_peers)
        result["diagnostics"] = {"startup": startup, "startup_ratios": diagnostics.startup_ratios(startup)}
    if "sparse" in args.parts:
        from bench import datagen
        from bench.sparse import bench_sparse

        rows = 100_000 if args.quick else args.sparse_rows
        log(f"sparse defects: {rows:,} rows, 20 checks failing on 1-3 rows each, {args.reps} reps")
        pg = datagen.pg_url(args.pg_url) if "postgresql" in args.backend_list else None
        if pg:
            datagen.create_pg_database(args.pg_url)
        try:
            result["sparse"] = bench_sparse(rows, args.backend_list, data_dir=args.data_dir,
                                            pg_url=datagen._psycopg_dsn(pg) if pg else None, reps=args.reps, log=log)
        finally:
            if pg:
                datagen.drop_pg_database(args.pg_url)
    if "verify" in args.parts:
        from bench.verify_bench import run_verify_bench

        log("report truthfulness: verify_fn on the labelled corpus")
        result["verify"] = run_verify_bench()
    if "llm" in args.parts:
        from bench.llm_bench import run_llm_bench

        real = args.gguf or os.environ.get("OPENAI_BASE_URL") or os.environ.get("OPENAI_API_KEY")
        log("LLM cost: demo audit through the stub" + (" and a real model" if real else ""))
        result["llm"] = run_llm_bench(args.llm_reps, log, gguf=args.gguf)
    if "scheduler" in args.parts:
        from bench.scheduler_bench import run_scheduler_bench

        log(f"scheduler: serve with 100 audits, {args.idle:g}s idle")
        result["scheduler"] = run_scheduler_bench(idle_s=args.idle, log=log)
    if "spark" in args.parts:
        from bench.spark_bench import run_spark_bench

        log(f"Spark SQL vs PostgreSQL: {args.spark_rows:,} rows per table, {args.reps} reps")
        result["spark"] = run_spark_bench(args.spark_rows, pg_admin=args.pg_url, reps=args.reps, log=log)
    result["total_s"] = round(time.perf_counter() - clock, 1)
    result["machine_at_end"] = machine()
    path = BENCH / "results" / f"{name}.json"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(result, indent=2, default=str) + "\n", encoding="utf-8")
    print(render(result))
    print(f"\nresults: {path.relative_to(BENCH.parent)}")
    return 0


def render(result: dict[str, Any]) -> str:
    m, v = result["machine_at_start"], result["versions"]
    out = [f"watchdog benchmarks — {result['started_at']} — {result['command']}",
           f"machine: {m['cores']} cores, {m['memory_gb']} GB, {m['cpu']}, {m['os']}; load average at start "
           f"{m['loadavg']}, at end {result['machine_at_end']['loadavg']}",
           "versions: " + ", ".join(f"{k} {val}" for k, val in v.items() if val) + f"; Python {m['python']}",
           f"total: {result['total_s']:.0f}s", ""]
    if "scan" in result:
        out += [report.scan_tables(result["scan"]), "", report.targets(result["scan"]), ""]
    if "sparse" in result:
        out += [report.sparse_table(result["sparse"]), ""]
    if "diagnostics" in result:
        out += [report.diagnostics_table(result["diagnostics"]), ""]
    if "verify" in result:
        out += [report.verify_table(result["verify"]), ""]
    if "llm" in result:
        out += [report.llm_table(result["llm"]), ""]
    if "scheduler" in result:
        out += [report.scheduler_table(result["scheduler"])]
    if "spark" in result:
        from bench.spark_bench import spark_table

        out += ["", spark_table(result["spark"])]
    return "\n".join(out)


if __name__ == "__main__":
    sys.exit(main())
