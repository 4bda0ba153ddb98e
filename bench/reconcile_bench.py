"""``watchdog diff`` against reladiff, a hand-written full join and ``count(*)`` on both sides, in one run.

    .venv/bin/python -m bench.reconcile_bench [--rows 1000000] [--pairs pg-pg,pg-mariadb,sqlite-duckdb]
                                             [--fractions 0,0.00001,0.01] [--reps 3] [--name NAME]
                                             [--prefix recon] [--warm all|count] [--keep]

Each pair holds ``orders`` (id, amount NUMERIC(12,2), status, created_at) on two databases: PostgreSQL↔PostgreSQL
(two databases), PostgreSQL↔MariaDB, SQLite↔DuckDB file. The target differs from the source in a stated fraction of
rows, planted by ``id`` modulo ``1/fraction`` (a third deleted, a third with a changed amount, a third with a
changed status) plus one extra row, so every expected count is exact. Tools run as fresh processes, interleaved,
the order rotating each repetition: watchdog (``diff --json``), reladiff 0.6 (bench/.venv-reladiff, hashdiff;
it cannot read SQLite) and, on PostgreSQL, the full join of both tables copied into one database. The baseline is
``SELECT count(*)`` on each side on the bare drivers. Nothing asserts a timing; the counts are checked.
"""

from __future__ import annotations

import argparse
import json
import os
import sqlite3
import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

from bench.common import machine

REPO = Path(__file__).resolve().parent.parent
PG = "postgresql://postgres@127.0.0.1:5432"
MARIA = "mysql://root@127.0.0.1:3306"
DATA_ROOT = Path(os.environ.get("WATCHDOG_BENCH_DATA", "/tmp/watchdog-bench-reconcile"))
#: database names (and the data directory) of this run: ``--prefix``, so two runs never share a database
PREFIX = "recon"
DATA = DATA_ROOT / PREFIX
RELADIFF = REPO / "bench" / ".venv-reladiff" / "bin" / "python"
STATUSES = ("new", "paid", "sent")


def expected(rows: int, fraction: float) -> dict[str, int]:
    if not fraction:
        return {"missing_in_target": 0, "missing_in_source": 0, "changed": 0}
    k = round(1 / fraction)
    hits = [i for i in range(k, rows + 1, k)]
    return {"missing_in_target": sum((i // k) % 3 == 0 for i in hits), "missing_in_source": 1,
            "changed": sum((i // k) % 3 != 0 for i in hits)}


# ---- loading

def _pg(database: str | None = None) -> Any:
    import psycopg

    return psycopg.connect(f"{PG}/{database or 'postgres'}", autocommit=True)


def load_pg(database: str, rows: int, fraction: float, table: str = "orders") -> None:
    with _pg() as admin:
        if table == "orders":
            admin.execute(f"DROP DATABASE IF EXISTS {database} WITH (FORCE)")
            admin.execute(f"CREATE DATABASE {database}")
    with _pg(database) as c:
        c.execute(f"CREATE TABLE {table} (id BIGINT PRIMARY KEY, amount NUMERIC(12, 2), status TEXT, "
                  "created_at TIMESTAMP)")
        c.execute(f"INSERT INTO {table} SELECT g, (g % 10000) / 100.0, (ARRAY['new','paid','sent'])[1 + g % 3], "
                  f"timestamp '2024-01-01' + g * interval '1 second' FROM generate_series(1, {rows}) AS g")
        _plant(c.execute, table, rows, fraction, "mod({id}, {k})", "(({id} / {k}) % 3)")
        c.execute(f"VACUUM ANALYZE {table}")


def load_mariadb(database: str, rows: int, fraction: float) -> None:
    import pymysql

    c = pymysql.connect(host="127.0.0.1", port=3306, user="root", autocommit=True)
    cur = c.cursor()
    cur.execute(f"DROP DATABASE IF EXISTS {database}")
    cur.execute(f"CREATE DATABASE {database}")
    cur.execute(f"USE {database}")
    cur.execute("CREATE TABLE orders (id BIGINT PRIMARY KEY, amount DECIMAL(12, 2), status VARCHAR(10), "
                "created_at DATETIME)")
    cur.execute(f"INSERT INTO orders SELECT seq, (seq % 10000) / 100, ELT(1 + seq % 3, 'new', 'paid', 'sent'), "
                f"TIMESTAMP '2024-01-01 00:00:00' + INTERVAL seq SECOND FROM seq_1_to_{rows}")
    _plant(cur.execute, "orders", rows, fraction, "MOD({id}, {k})", "MOD({id} DIV {k}, 3)")
    c.close()


def load_sqlite(path: Path, rows: int, fraction: float) -> None:
    path.unlink(missing_ok=True)
    with sqlite3.connect(path) as c:
        c.execute("CREATE TABLE orders (id INTEGER PRIMARY KEY, amount DECIMAL(12, 2), status TEXT, "
                  "created_at TIMESTAMP)")
        c.execute(f"""WITH RECURSIVE g(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM g WHERE i < {rows})
            INSERT INTO orders SELECT i, (i % 10000) / 100.0, CASE i % 3 WHEN 0 THEN 'new' WHEN 1 THEN 'paid'
            ELSE 'sent' END, datetime('2024-01-01', '+' || i || ' seconds') FROM g""")
        _plant(c.execute, "orders", rows, fraction, "({id} % {k})", "(({id} / {k}) % 3)")


def load_duckdb(path: Path, rows: int, fraction: float) -> None:
    import duckdb

    path.unlink(missing_ok=True)
    c = duckdb.connect(str(path))
    c.execute("CREATE TABLE orders (id BIGINT PRIMARY KEY, amount DECIMAL(12, 2), status VARCHAR, "
              "created_at TIMESTAMP)")
    c.execute(f"INSERT INTO orders SELECT range, (range % 10000) / 100.0, ['new','paid','sent'][1 + range % 3], "
              f"TIMESTAMP '2024-01-01' + range * INTERVAL 1 SECOND FROM range(1, {rows + 1})")
    _plant(c.execute, "orders", rows, fraction, "({id} % {k})", "(({id} // {k}) % 3)")
    c.close()


def _plant(execute: Any, table: str, rows: int, fraction: float, mod: str, third: str) -> None:
    if not fraction:
        return
    k = round(1 / fraction)
    hit, part = mod.format(id="id", k=k), third.format(id="id", k=k)
    execute(f"DELETE FROM {table} WHERE {hit} = 0 AND {part} = 0")
    execute(f"UPDATE {table} SET amount = amount + 0.01 WHERE {hit} = 0 AND {part} = 1")
    execute(f"UPDATE {table} SET status = 'changed' WHERE {hit} = 0 AND {part} = 2")
    execute(f"INSERT INTO {table} VALUES ({rows + 1}, 1.00, 'new', TIMESTAMP '2024-01-01 00:00:00')")


# ---- measuring

def count_both(urls: tuple[str, str]) -> float:
    clock = time.monotonic()
    for url in urls:
        if url.startswith("postgresql"):
            with _pg(url.rsplit("/", 1)[1]) as c:
                c.execute("SELECT count(*) FROM orders").fetchone()
        elif url.startswith("mysql"):
            import pymysql

            c = pymysql.connect(host="127.0.0.1", port=3306, user="root", database=url.rsplit("/", 1)[1])
            c.cursor().execute("SELECT count(*) FROM orders")
            c.close()
        elif url.startswith("sqlite"):
            with sqlite3.connect(url.split("///", 1)[1]) as c:
                c.execute("SELECT count(*) FROM orders").fetchone()
        else:
            import duckdb

            c = duckdb.connect(url.split("///", 1)[1], read_only=True)
            c.execute("SELECT count(*) FROM orders").fetchone()
            c.close()
    return time.monotonic() - clock


def run_watchdog(a: str, b: str) -> dict[str, Any]:
    """``watchdog diff`` on two configured databases whose statements may take 10 minutes each (the default
    30 s is a scan's, too short for hashing a 1M-row SQLite table under load)."""
    config = DATA / "watchdog.yaml"
    config.write_text(json.dumps({"databases": {"a": {"url": a, "timeout_s": 600}, "b": {"url": b, "timeout_s": 600}}}))
    cmd = [sys.executable, "-m", "watchdog", "diff", "a", "b", "--config", str(config),
           "--table", "orders", "--key", "id", "--json", "--timestamp-precision", "s", "--samples", "0"]
    clock = time.monotonic()
    p = subprocess.run(cmd, capture_output=True, text=True, cwd=REPO)
    wall = time.monotonic() - clock
    if p.returncode not in (0, 1):
        raise RuntimeError(p.stderr[-500:])
    doc = json.loads(p.stdout)
    return {"wall_s": wall, "seconds": doc["seconds"], "statements": doc["statements"],
            "bytes_fetched": doc["bytes_fetched"], "levels": doc.get("levels"), "row_hash": doc.get("row_hash"),
            "counts": {k: doc[k] for k in ("missing_in_target", "missing_in_source", "changed")}}


def run_reladiff(a: str, b: str) -> dict[str, Any] | None:
    if not RELADIFF.exists() or a.startswith("sqlite") or b.startswith("sqlite"):
        return None
    clock = time.monotonic()
    p = subprocess.run([str(RELADIFF), str(REPO / "bench" / "peers" / "reladiff_runner.py"), a, b, "orders", "id",
                        "amount", "status", "created_at"], capture_output=True, text=True, cwd=REPO)
    wall = time.monotonic() - clock
    if p.returncode != 0:
        return {"error": p.stderr.strip().splitlines()[-1][:300] if p.stderr.strip() else f"exit {p.returncode}"}
    doc = json.loads(p.stdout.strip().splitlines()[-1])
    return {"wall_s": wall, "seconds": doc.pop("seconds"), "counts": doc}


def full_join(database: str) -> dict[str, Any]:
    sql = """SELECT count(*) FILTER (WHERE b.id IS NULL), count(*) FILTER (WHERE a.id IS NULL),
        count(*) FILTER (WHERE a.id IS NOT NULL AND b.id IS NOT NULL AND (a.amount IS DISTINCT FROM b.amount
        OR a.status IS DISTINCT FROM b.status OR a.created_at IS DISTINCT FROM b.created_at))
        FROM orders a FULL JOIN orders_b b ON a.id = b.id"""
    clock = time.monotonic()
    with _pg(database) as c:
        m, s, ch = c.execute(sql).fetchone()
    return {"seconds": time.monotonic() - clock,
            "counts": {"missing_in_target": m, "missing_in_source": s, "changed": ch}}


#: (pair, rows) whose source is loaded: the source is the same for every fraction, only the target changes
_LOADED: set[tuple[str, int]] = set()


def prepare(pair: str, rows: int, fraction: float) -> tuple[str, str, str | None]:
    DATA.mkdir(parents=True, exist_ok=True)
    a, b = f"{PREFIX}_a", f"{PREFIX}_b"
    fresh = (pair, rows) not in _LOADED
    _LOADED.clear()
    _LOADED.add((pair, rows))
    if pair == "pg-pg":
        if fresh:
            load_pg(a, rows, 0)
        else:
            with _pg(a) as c:
                c.execute("DROP TABLE IF EXISTS orders_b")
        load_pg(b, rows, fraction)
        load_pg(a, rows, fraction, table="orders_b")  # for the full join, beside the source
        return f"{PG}/{a}", f"{PG}/{b}", a
    if pair == "pg-mariadb":
        if fresh:
            load_pg(a, rows, 0)
        load_mariadb(b, rows, fraction)
        return f"{PG}/{a}", f"{MARIA}/{b}", None
    if fresh:
        load_sqlite(DATA / "a.db", rows, 0)
    load_duckdb(DATA / "b.duckdb", rows, fraction)
    return f"sqlite:///{DATA / 'a.db'}", f"duckdb:///{DATA / 'b.duckdb'}", None


def drop_all() -> None:
    """Drop this run's databases and files."""
    import pymysql

    with _pg() as admin:
        for name in (f"{PREFIX}_a", f"{PREFIX}_b"):
            admin.execute(f"DROP DATABASE IF EXISTS {name} WITH (FORCE)")
    c = pymysql.connect(host="127.0.0.1", port=3306, user="root", autocommit=True)
    c.cursor().execute(f"DROP DATABASE IF EXISTS {PREFIX}_b")
    c.close()
    for path in (DATA / "a.db", DATA / "b.duckdb", DATA / "watchdog.yaml"):
        path.unlink(missing_ok=True)


def watchdog_url(url: str) -> str:
    return url.replace("mysql://", "mysql+pymysql://", 1)


def measure(pair: str, rows: int, fraction: float, reps: int, warm: str = "all") -> dict[str, Any]:
    a, b, join_db = prepare(pair, rows, fraction)
    load_before = os.getloadavg()
    truth = expected(rows, fraction)
    tools = ["count", "watchdog", "reladiff"] + (["join"] if join_db else [])
    samples: dict[str, list[Any]] = {t: [] for t in tools}
    for rep in range(reps + 1):  # the first round warms caches and is not kept
        order = tools[rep % len(tools):] + tools[:rep % len(tools)]
        for tool in order:
            if not rep and warm == "count" and tool != "count":
                continue  # a heavy size: the first round only warms the caches with the two counts
            if tool == "count":
                got: Any = count_both((a, b))
            elif tool == "watchdog":
                got = run_watchdog(watchdog_url(a), watchdog_url(b))
            elif tool == "reladiff":
                got = run_reladiff(a, b)
            else:
                got = full_join(join_db or "")
            if rep:
                samples[tool].append(got)
    count_s = statistics.median(samples["count"])
    out: dict[str, Any] = {"pair": pair, "rows": rows, "fraction": fraction, "expected": truth,
                           "count_both_s": count_s, "samples": samples,
                           "load": {"before": load_before, "after": os.getloadavg()}}
    wd = samples["watchdog"]
    out["watchdog"] = {"seconds": statistics.median(s["seconds"] for s in wd),
                       "wall_s": statistics.median(s["wall_s"] for s in wd), "statements": wd[0]["statements"],
                       "bytes_fetched": wd[0]["bytes_fetched"], "row_hash": wd[0].get("row_hash"),
                       "exact": all(s["counts"] == truth for s in wd)}
    out["watchdog"]["ratio_to_count"] = out["watchdog"]["seconds"] / count_s if count_s else None
    rd = [s for s in samples["reladiff"] if s and "seconds" in s]
    if rd:
        out["reladiff"] = {"seconds": statistics.median(s["seconds"] for s in rd),
                           "wall_s": statistics.median(s["wall_s"] for s in rd),
                           "exact": all(s["counts"] == truth for s in rd)}
        out["watchdog_vs_reladiff_wall"] = out["watchdog"]["wall_s"] / out["reladiff"]["wall_s"]
    elif any(samples["reladiff"]):
        out["reladiff"] = samples["reladiff"][0]
    if join_db:
        out["join"] = {"seconds": statistics.median(s["seconds"] for s in samples["join"]),
                       "exact": all(s["counts"] == truth for s in samples["join"])}
    return out


def main() -> None:
    global PREFIX, DATA
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--rows", default="1000000")
    p.add_argument("--pairs", default="pg-pg,pg-mariadb,sqlite-duckdb")
    p.add_argument("--fractions", default="0,0.00001,0.01")
    p.add_argument("--reps", type=int, default=3)
    p.add_argument("--name", default=f"reconcile-{time.strftime('%Y%m%dT%H%M%SZ', time.gmtime())}")
    p.add_argument("--prefix", default="recon", help="names of this run's databases (PREFIX_a, PREFIX_b)")
    p.add_argument("--warm", choices=("all", "count"), default="all",
                   help="what the first, unkept round runs: every tool, or only the counts (heavy sizes)")
    p.add_argument("--keep", action="store_true", help="keep the databases afterwards")
    args = p.parse_args()
    PREFIX, DATA = args.prefix, DATA_ROOT / args.prefix
    results: dict[str, Any] = {"machine": machine(), "load_start": os.getloadavg(), "runs": []}
    out = REPO / "bench" / "results" / f"{args.name}.json"
    for rows in [int(r) for r in args.rows.split(",")]:
        for pair in args.pairs.split(","):
            for fraction in [float(f) for f in args.fractions.split(",")]:
                try:
                    run = measure(pair, rows, fraction, args.reps, args.warm)
                except Exception as exc:  # noqa: BLE001 - one pair failing keeps the others' figures
                    results["runs"].append({"pair": pair, "rows": rows, "fraction": fraction, "error": str(exc)})
                    print(f"{pair:14} {rows:>10,} {fraction:>8.5%}  error: {exc}", flush=True)
                    continue
                results["runs"].append(run)
                out.write_text(json.dumps(results, indent=1, default=str))  # kept as it goes
                wd, rd = run["watchdog"], run.get("reladiff") or {}
                print(f"{pair:14} {rows:>10,} {fraction:>8.5%}  watchdog {wd['seconds']:7.2f} s "
                      f"({wd['ratio_to_count']:.1f}x count, wall {wd['wall_s']:.2f} s, statements "
                      f"{wd['statements']['source']}+{wd['statements']['target']}, exact {wd['exact']})  "
                      f"reladiff {rd.get('wall_s', float('nan')):7.2f} s wall (exact {rd.get('exact')})  "
                      f"count {run['count_both_s']:.3f} s"
                      + (f"  join {run['join']['seconds']:.2f} s" if "join" in run else ""), flush=True)
    results["load_end"] = os.getloadavg()
    out.write_text(json.dumps(results, indent=1, default=str))
    if not args.keep:
        drop_all()
    print(f"results: {out}")


if __name__ == "__main__":
    sys.exit(main())
