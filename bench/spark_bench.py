"""Spark SQL in local mode against PostgreSQL: watchdog's scan and the hand-written single pass on each.

``bench/run --only spark [--spark-rows N]`` (default 1,000,000 rows per table; ``--spark-rows 10000000``
for 10M). Starts a Spark Thrift server from the pyspark package (tests/spark_server.py: local[2], 2 GB
driver, 2 shuffle partitions, no UI) in a scratch folder, loads the benchmark tables (bench/datagen.py's
planted defects, written as Parquet by ``INSERT ... SELECT`` over ``range()``) and the same tables in
PostgreSQL, then runs, interleaved, each as a fresh process: ``watchdog scan --sample 0`` (and with
samples) and bench/limit_runner.py (the minimal hand-written SQL: one pass per table, the GROUP BY and
the anti-join), on each engine. Every run's counts are checked against the planted truth; one extra
in-process scan per engine lists the statements. Ratios are watchdog / hand-written on the same engine,
measured in the same run.
"""

from __future__ import annotations

import tempfile
import time
from pathlib import Path
from typing import Any

from bench import datagen
from bench.common import BENCH, ROOT, WATCHDOG_PYTHON, Samples, machine, ratio, run_child
from bench.scan_bench import SUITE, WATCHDOG, counts_of, mismatches

SPARK_DATABASE = "wd_bench_spark"


def _spark_selects(rows: int) -> tuple[str, str]:
    concat = lambda a, b: f"{a} || CAST({b} AS STRING)"  # noqa: E731
    source = f"FROM (SELECT id AS i FROM range(1, {rows + 1}, 1, 8)) AS s"
    return (f"INSERT INTO customers SELECT {datagen._customers_select('i', concat)} {source}",
            f"INSERT INTO orders SELECT {datagen._orders_select(rows, 'i')} {source}")


def build_spark(admin_url: str, rows: int) -> float:
    """Create the benchmark database and both Parquet tables on the Thrift server; returns seconds."""
    import sqlalchemy as sa

    start = time.perf_counter()
    engine = sa.create_engine(admin_url)
    customers, orders = _spark_selects(rows)
    with engine.connect() as conn:
        for sql in (f"DROP DATABASE IF EXISTS {SPARK_DATABASE} CASCADE", f"CREATE DATABASE {SPARK_DATABASE}",
                    f"USE {SPARK_DATABASE}",
                    "CREATE TABLE customers (id INT, name STRING, email STRING, country STRING, status STRING, "
                    "age INT) USING parquet",
                    "CREATE TABLE orders (id INT, customer_id INT, amount DECIMAL(12, 2), status STRING) USING parquet",
                    customers, orders):
            conn.exec_driver_sql(sql.replace("%", "%%"))  # PyHive formats the text with the (empty) parameters
    engine.dispose()
    return time.perf_counter() - start


def run_spark_bench(rows: int, *, pg_admin: str, reps: int, log: Any) -> dict[str, Any]:
    from bench.statements import profile_scan
    from tests.spark_server import ThriftServer

    truth = datagen.expected_counts(rows)
    out: dict[str, Any] = {"rows": rows, "reps": reps, "engines": {}, "machine_before": machine()}
    with tempfile.TemporaryDirectory(prefix="wd-spark-bench-") as work, \
            ThriftServer(Path(work), driver_memory="2g") as server:
        host_port = server.url.removeprefix("hive://").rpartition("/")[0]
        log(f"  Spark Thrift server up on {host_port}; loading {rows:,} rows per table")
        out["load_s"] = {"spark": round(build_spark(server.url, rows), 1)}
        datagen.create_pg_database(pg_admin)
        try:
            out["load_s"]["postgresql"] = round(datagen.build_postgres(pg_admin, rows), 1)
            pg = datagen._psycopg_dsn(datagen.pg_url(pg_admin))
            urls = {"spark": f"hive://{host_port}/{SPARK_DATABASE}",
                    "postgresql": pg.replace("postgresql://", "postgresql+psycopg://")}
            limit_targets = {"spark": f"{host_port}/{SPARK_DATABASE}", "postgresql": pg}
            commands = {
                "watchdog": lambda e: [str(WATCHDOG), "scan", "--db", urls[e], "--checks", str(SUITE), "--out",
                                       str(Path(work) / f"wd-{e}"), "--json", "--sample", "0"],
                "watchdog_sample5": lambda e: [str(WATCHDOG), "scan", "--db", urls[e], "--checks", str(SUITE),
                                               "--out", str(Path(work) / f"wd5-{e}"), "--json", "--sample", "5"],
                "limit": lambda e: [str(WATCHDOG_PYTHON), str(BENCH / "limit_runner.py"), e, limit_targets[e]],
            }
            walls = {(e, t): Samples() for e in urls for t in commands}
            problems: dict[str, list[str]] = {f"{e}/{t}": [] for e in urls for t in commands}
            order = [(e, t) for e in urls for t in commands]
            for rep in range(reps + 1):  # the first round is an untimed warm-up
                for engine, tool in order[rep % len(order):] + order[:rep % len(order)]:
                    run = run_child(commands[tool](engine), cwd=ROOT)
                    if run.returncode not in (0, 1):
                        problems[f"{engine}/{tool}"].append(f"exit {run.returncode}: {run.stderr.strip()[-300:]}")
                        continue
                    problems[f"{engine}/{tool}"].extend(mismatches(counts_of(tool, run.stdout), truth))
                    if rep:
                        walls[(engine, tool)].add(run.wall_s)
                    log(f"  rep {rep} {engine:10} {tool:16} {run.wall_s:7.2f}s")
            for engine in urls:
                profile = profile_scan(urls[engine], sample=0)
                cells = {tool: walls[(engine, tool)].summary(3) for tool in commands}
                out["engines"][engine] = {
                    "wall_s": cells,
                    "ratio_watchdog_to_limit": ratio(cells["watchdog"]["median"], cells["limit"]["median"]),
                    "ratio_watchdog_sample5_to_limit": ratio(cells["watchdog_sample5"]["median"],
                                                             cells["limit"]["median"]),
                    "statements_per_scan": profile["statements"], "statements_by_kind": profile["by_kind"],
                    "limit_statements": 4, "count_mismatches": {t: sorted(set(problems[f"{engine}/{t}"]))
                                                                for t in commands},
                }
        finally:
            datagen.drop_pg_database(pg_admin)
    spark, pg_cells = out["engines"]["spark"], out["engines"]["postgresql"]
    out["spark_to_postgresql_watchdog"] = ratio(spark["wall_s"]["watchdog"]["median"],
                                                pg_cells["wall_s"]["watchdog"]["median"])
    out["machine_after"] = machine()
    return out


def spark_table(result: dict[str, Any]) -> str:
    lines = [f"Spark SQL (local[2], Thrift server) vs PostgreSQL — {result['rows']:,} rows per table, "
             f"{result['reps']} reps, load average {result['machine_before']['loadavg']} -> "
             f"{result['machine_after']['loadavg']}",
             f"{'engine':<11} {'watchdog':>10} {'+samples':>10} {'hand-written':>13} {'ratio':>7} {'statements':>11}"]
    for engine, cell in result["engines"].items():
        w = cell["wall_s"]
        lines.append(f"{engine:<11} {w['watchdog']['median']:>9.2f}s {w['watchdog_sample5']['median']:>9.2f}s "
                     f"{w['limit']['median']:>12.2f}s {cell['ratio_watchdog_to_limit'] or 0:>6.2f}x "
                     f"{cell['statements_per_scan']:>6} vs {cell['limit_statements']}")
        bad = {t: m for t, m in cell["count_mismatches"].items() if m}
        lines.append(f"{'':<11} counts vs planted truth: {bad if bad else 'all exact'}")
    return "\n".join(lines)
