"""Sparse defects: one table, 20 checks, each failing on 1 to 3 rows spread through the table.

Real data has few bad rows. A check that fails on fewer rows than the sample size used to make its
``LIMIT 5`` sample query read the whole table, once per check; watchdog now reads the table at most
once for all of a table's samples. This part measures that, in one run:

* ``watchdog scan`` (samples on), ``watchdog scan --sample 0`` and the limit (one hand-written
  aggregate pass for the 20 counts on the bare driver), each a fresh process, interleaved;
* in-process: the statements watchdog sent (and seconds per kind), and the same samples fetched
  the old way, one ``check.sample_query`` (``WHERE <failing> LIMIT 5``) per check, for comparison.

The table ``sparse`` (``id``, ``v1`` .. ``v20``) lives in its own SQLite file and in the benchmark's
PostgreSQL database. Check ``k`` is ``not_null``, ``range`` (0..1000) or ``accepted_values`` (0..9)
on ``v<k>`` by ``k % 3``; it fails on ``1 + k % 3`` rows, at ids spread over the whole table.
"""

from __future__ import annotations

import json
import sqlite3
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from bench.common import ROOT, WATCHDOG_PYTHON, Samples, ratio, run_child

CHECKS = 20
WATCHDOG = ROOT / ".venv" / "bin" / "watchdog"
KINDS = ("not_null", "range", "accepted_values")
DIGITS = "0, 1, 2, 3, 4, 5, 6, 7, 8, 9"
BAD = {"not_null": "NULL", "range": "5000", "accepted_values": "42"}


def bad_ids(k: int, rows: int) -> list[int]:
    """The ids at which check ``k`` (1-based) fails: 1 to 3 of them, spread over the table."""
    return sorted({(k * 37_337 + j * (rows // 3 + 101)) % rows + 1 for j in range(1 + k % 3)})


def kind(k: int) -> str:
    return KINDS[k % 3]


def suite_text() -> str:
    lines = ["tables:", "  sparse:"]
    for k in range(1, CHECKS + 1):
        col = f"v{k}"
        lines.append({"not_null": f"    - not_null: {col}",
                      "range": f"    - range: {{column: {col}, min: 0, max: 1000}}",
                      "accepted_values": f"    - accepted_values: {{column: {col}, values: [{DIGITS}]}}"}
                     [kind(k)])
    return "\n".join(lines) + "\n"


def expected(rows: int) -> dict[str, int]:
    return {f"sparse.v{k}.{kind(k)}": len(bad_ids(k, rows)) for k in range(1, CHECKS + 1)}


def _columns(i: str, rows: int) -> str:
    out = []
    for k in range(1, CHECKS + 1):
        ids = ", ".join(str(x) for x in bad_ids(k, rows))
        out.append(f"CASE WHEN {i} IN ({ids}) THEN {BAD[kind(k)]} ELSE ({i} * {k + 7}) % 10 END")
    return ", ".join(out)


def build_sqlite(data_dir: Path, rows: int) -> tuple[Path, float | None]:
    path = data_dir / f"sparse_{rows}.sqlite"
    marker = path.with_suffix(".json")
    want = {"version": 1, "rows": rows, "checks": CHECKS}
    if path.is_file() and marker.is_file() and json.loads(marker.read_text()) == want:
        return path, None
    data_dir.mkdir(parents=True, exist_ok=True)
    path.unlink(missing_ok=True)
    start = time.perf_counter()
    conn = sqlite3.connect(path, isolation_level=None)
    cols = ", ".join(f"v{k} INTEGER" for k in range(1, CHECKS + 1))
    conn.executescript(f"PRAGMA journal_mode = OFF; PRAGMA synchronous = OFF; "
                       f"CREATE TABLE sparse (id INTEGER PRIMARY KEY, {cols});")
    conn.execute(f"WITH RECURSIVE s(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM s WHERE i < {rows}) "
                 f"INSERT INTO sparse SELECT i, {_columns('i', rows)} FROM s")
    conn.execute("ANALYZE")
    conn.close()
    marker.write_text(json.dumps(want))
    return path, time.perf_counter() - start


def build_postgres(url: str, rows: int) -> float:
    import psycopg

    start = time.perf_counter()
    cols = ", ".join(f"v{k} integer" for k in range(1, CHECKS + 1))
    with psycopg.connect(url, autocommit=True) as conn:
        conn.execute("DROP TABLE IF EXISTS sparse")
        conn.execute(f"CREATE TABLE sparse (id integer PRIMARY KEY, {cols})")
        conn.execute(f"INSERT INTO sparse SELECT i, {_columns('i', rows)} FROM generate_series(1, {rows}) AS i")
        conn.execute("VACUUM (ANALYZE, FREEZE) sparse")
    return time.perf_counter() - start


def limit_sql() -> str:
    """The hand-written single pass: the 20 counts in one aggregate SELECT (portable SQL)."""
    sums = []
    for k in range(1, CHECKS + 1):
        col = f"v{k}"
        cond = {"not_null": f"{col} IS NULL", "range": f"({col} < 0 OR {col} > 1000)",
                "accepted_values": f"{col} NOT IN (0, 1, 2, 3, 4, 5, 6, 7, 8, 9)"}[kind(k)]
        sums.append(f"sum(CASE WHEN {cond} THEN 1 ELSE 0 END)")
    return f"SELECT count(*), {', '.join(sums)} FROM sparse"


def run_limit(backend: str, target: str) -> dict[str, Any]:
    """Run in a child process: ``python -m bench.sparse limit BACKEND TARGET``."""
    if backend == "sqlite":
        conn = sqlite3.connect(f"file:{target}?mode=ro", uri=True)
        row = conn.execute(limit_sql()).fetchone()
        conn.close()
    else:
        import psycopg

        with psycopg.connect(target) as pg:
            row = pg.execute(limit_sql()).fetchone()
    names = [f"sparse.v{k}.{kind(k)}" for k in range(1, CHECKS + 1)]
    return {"counts": {n: {"failing": int(v or 0)} for n, v in zip(names, row[1:], strict=True)}}


def profile(url: str, suite: Path, sample: int = 5) -> dict[str, Any]:
    """In-process: watchdog's statements (kinds, seconds), and the old per-check sample queries timed."""
    from bench.statements import profile_scan
    from watchdog.sandbox import Sandbox
    from watchdog.scan.suites import load_suites

    new = profile_scan(url, suite=suite, sample=sample)
    checks = [c for s in load_suites([suite]) for c in s.checks]
    old: list[float] = []
    with Sandbox(url) as box:
        for check in checks:
            query = check.sample_query(box.dialect, sample)
            if query is None:
                continue
            start = time.perf_counter()
            box.query(query.sql(dialect=box.dialect), max_rows=sample)
            old.append(time.perf_counter() - start)
    sample_s = new["by_kind"].get("sample", {}).get("seconds", 0.0)
    return {"statements": new["statements"], "by_kind": new["by_kind"], "scan_seconds": new["scan_seconds"],
            "sample_statements": new["by_kind"].get("sample", {}).get("count", 0), "sample_seconds": sample_s,
            "old_sample_statements": len(old), "old_sample_seconds": round(sum(old), 4),
            "old/new_sample_seconds": ratio(sum(old), sample_s)}


def _counts(stdout: str) -> dict[str, int]:
    doc = json.loads(stdout)
    return {f["name"]: f.get("failing") for f in doc["findings"]}


def bench_sparse(rows: int, backends: tuple[str, ...], *, data_dir: Path, pg_url: str | None, reps: int,
                 log: Any) -> list[dict[str, Any]]:
    """Interleaved fresh processes per backend; returns one result per backend."""
    results = []
    truth = expected(rows)
    with tempfile.TemporaryDirectory(prefix="wd-bench-sparse-") as tmp:
        suite = Path(tmp) / "sparse.yaml"
        suite.write_text(suite_text(), encoding="utf-8")
        for backend in backends:
            if backend == "sqlite":
                path, took = build_sqlite(data_dir, rows)
                wd_url, raw = f"sqlite:///{path}", str(path)
            elif pg_url:
                took = build_postgres(pg_url, rows)
                wd_url, raw = pg_url.replace("postgresql://", "postgresql+psycopg://"), pg_url
            else:
                continue
            log(f"  sparse {backend} {rows:,} rows: " + ("reused" if took is None else f"generated in {took:.1f}s"))
            # --no-diagnose: this part measures the counts and their samples against the single pass; the
            # diagnosis of failing checks (on by default) reads the table again for its own figures
            tools = {
                "watchdog": [str(WATCHDOG), "scan", "--db", wd_url, "--checks", str(suite), "--out",
                             str(Path(tmp) / "out5"), "--json", "--sample", "5", "--no-diagnose"],
                "watchdog_nosample": [str(WATCHDOG), "scan", "--db", wd_url, "--checks", str(suite), "--out",
                                      str(Path(tmp) / "out0"), "--json", "--sample", "0", "--no-diagnose"],
                "limit": [str(WATCHDOG_PYTHON), "-m", "bench.sparse", "limit", backend, raw],
            }
            if backend == "sqlite":  # the keyed pass on one sandbox, not cut for two (watchdog/scan/planner.py)
                tools["watchdog_one_sandbox"] = [str(WATCHDOG), "scan", "--db", wd_url, "--checks", str(suite),
                                                 "--out", str(Path(tmp) / "out1"), "--json", "--sample", "5",
                                                 "--no-diagnose", "--parallel", "1"]
            walls = {name: Samples() for name in tools}
            wrong: list[str] = []
            names = list(tools)
            for rep in range(reps + 1):  # the first round is the warm-up
                for name in names[rep % len(names):] + names[:rep % len(names)]:
                    run = run_child(tools[name], cwd=ROOT)
                    try:
                        got = (_counts(run.stdout) if name.startswith("watchdog")
                               else {k: v["failing"] for k, v in json.loads(run.stdout)["counts"].items()})
                    except (ValueError, KeyError):
                        wrong.append(f"{name}: exit {run.returncode}: {(run.stderr or run.stdout)[-200:]}")
                        continue
                    wrong.extend(f"{name} {k}: {got.get(k)} (truth {v})" for k, v in truth.items() if got.get(k) != v)
                    if rep:
                        walls[name].add(run.wall_s)
            med = {n: s.median for n, s in walls.items()}
            result = {"rows": rows, "backend": backend, "checks": CHECKS, "wall_s": {n: s.summary(3) for n, s in
                                                                                   walls.items()},
                      "ratios": {"watchdog/limit": ratio(med["watchdog"], med["limit"]),
                                 "watchdog_nosample/limit": ratio(med["watchdog_nosample"], med["limit"]),
                                 "watchdog/watchdog_nosample": ratio(med["watchdog"], med["watchdog_nosample"]),
                                 **({"watchdog_one_sandbox/limit": ratio(med["watchdog_one_sandbox"], med["limit"])}
                                    if "watchdog_one_sandbox" in med else {})},
                      "count_mismatches": sorted(set(wrong)), "profile": profile(wd_url, suite)}
            log(f"    sparse {backend}: watchdog {med['watchdog']}s, --sample 0 {med['watchdog_nosample']}s, "
                f"limit {med['limit']}s; samples: {result['profile']['sample_statements']} statement(s) "
                f"{result['profile']['sample_seconds']}s, old way {result['profile']['old_sample_statements']} "
                f"statements {result['profile']['old_sample_seconds']}s")
            results.append(result)
    return results


if __name__ == "__main__":
    if len(sys.argv) == 4 and sys.argv[1] == "limit":
        print(json.dumps(run_limit(sys.argv[2], sys.argv[3])))
    else:
        sys.exit("usage: python -m bench.sparse limit sqlite|postgresql TARGET")
