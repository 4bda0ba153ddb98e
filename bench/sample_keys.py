"""SQLite: samples read by the keys the counting pass returns, against the shared sample read, sparse and dense.

In process (a :class:`~watchdog.sandbox.Sandbox` and :func:`~watchdog.scan.scanner.scan`, no CLI start-up),
interleaved, ``--reps`` times each after a warm-up round, on the benchmark's own SQLite files: the sparse table
(``bench/sparse.py``: one table, 20 checks failing on 1-3 rows each) and the dense tables (``bench/datagen.py``
with ``bench/suite.yaml``: 11 checks on ``customers`` and ``orders``, 4 to 20 failing rows per 1,000). For each
case four runs:

* ``limit``: the hand-written single pass on the bare driver (``bench/sparse.py``'s ``limit_sql``, or
  ``bench/limit_runner.py`` for the dense tables);
* ``sample0``: ``scan(..., sample=0)``, the counts alone;
* ``keys``: ``scan(..., sample=5)`` as watchdog runs it on SQLite: the counting pass also returns the keys (rowids)
  of the rows failing each condition with at most 20 times the sample size of them, and those rows are read by
  key (``watchdog/scan/samples.py``);
* ``shared_pass``: the same with ``samples.KEYED_DIALECTS`` emptied for the run, so the counting pass returns
  no keys and every sample comes from the shared sample read, the way other engines get them.

Medians, ratios to the limit, the statements each run sent, whether both sample paths gave the same counts and
sample sizes, and the load average, into ``bench/results/NAME.json``. PostgreSQL's forms are measured by
``bench/sample_forms.py``::

    .venv/bin/python -m bench.sample_keys --rows 1000000 --reps 5 --name sample-keys-1m
"""

from __future__ import annotations

import argparse
import json
import os
import sqlite3
import statistics
import time
from pathlib import Path
from typing import Any

from bench import datagen, limit_runner, sparse
from bench.common import machine
from watchdog.sandbox import Sandbox
from watchdog.scan import planner, samples
from watchdog.scan.scanner import scan
from watchdog.scan.suites import load_suite

RESULTS = Path(__file__).parent / "results"
SUITE = Path(__file__).parent / "suite.yaml"


def _limit_dense(path: Path) -> None:
    limit_runner.run("sqlite", str(path))  # the scan benchmark's hand-written statements


def _limit_sparse(path: Path) -> None:
    conn = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
    conn.execute(sparse.limit_sql()).fetchall()
    conn.close()


def _scan(url: str, suite: Path, sample: int, keyed: bool) -> dict[str, Any]:
    saved = samples.KEYED_DIALECTS
    planner.samples.KEYED_DIALECTS = saved if keyed else frozenset()
    try:
        sent: list[str] = []
        with Sandbox(url, timeout_s=600) as box:
            box.on_execute(sent.append)
            doc = scan(box, load_suite(suite).checks, sample=sample)
        return {"statements": len(sent), "failing": {f.name: f.failing for f in doc.findings},
                "sampled": {f.name: len(f.sample) for f in doc.findings}}
    finally:
        planner.samples.KEYED_DIALECTS = saved


def case(name: str, path: Path, suite: Path, limit: Any, reps: int) -> dict[str, Any]:
    url = f"sqlite:///{path}"
    runs = {"limit": lambda: limit(path), "sample0": lambda: _scan(url, suite, 0, True),
            "keys": lambda: _scan(url, suite, 5, True), "shared_pass": lambda: _scan(url, suite, 5, False)}
    times: dict[str, list[float]] = {k: [] for k in runs}
    info: dict[str, Any] = {}
    names = list(runs)
    for rep in range(reps + 1):  # the first round warms the page cache
        for k in names[rep % len(names):] + names[:rep % len(names)]:
            start = time.perf_counter()
            out = runs[k]()
            took = time.perf_counter() - start
            if rep:
                times[k].append(took)
            if isinstance(out, dict):
                info[k] = out
    med = {k: round(statistics.median(v), 3) for k, v in times.items()}
    same = info["keys"]["sampled"] == info["shared_pass"]["sampled"] and info["keys"]["failing"] == info[
        "shared_pass"]["failing"]
    return {"case": name, "median_s": med, "all_s": {k: [round(x, 3) for x in v] for k, v in times.items()},
            "ratios": {f"{k}/limit": round(med[k] / med["limit"], 2) for k in ("sample0", "keys", "shared_pass")},
            "statements": {k: info[k]["statements"] for k in ("sample0", "keys", "shared_pass")},
            "same_counts_and_sample_sizes": same}


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--rows", type=int, default=1_000_000)
    p.add_argument("--reps", type=int, default=5)
    p.add_argument("--data-dir", type=Path, default=Path("/tmp/watchdog-bench"))
    p.add_argument("--name", default="sample-keys")
    args = p.parse_args()
    out: dict[str, Any] = {"name": args.name, "rows": args.rows, "reps": args.reps, "machine_at_start": machine(),
                           "loadavg_start": os.getloadavg()}
    sparse_path, _ = sparse.build_sqlite(args.data_dir, args.rows)
    dense_path, _ = datagen.build_sqlite(args.data_dir, args.rows)
    suite = args.data_dir / "sparse.yaml"
    suite.write_text(sparse.suite_text(), encoding="utf-8")
    out["cases"] = [case("sparse", sparse_path, suite, _limit_sparse, args.reps),
                    case("dense", dense_path, SUITE, _limit_dense, args.reps)]
    out["loadavg_end"] = os.getloadavg()
    RESULTS.mkdir(exist_ok=True)
    (RESULTS / f"{args.name}.json").write_text(json.dumps(out, indent=2), encoding="utf-8")
    for c in out["cases"]:
        print(c["case"], c["median_s"], c["ratios"], c["statements"], "same:", c["same_counts_and_sample_sizes"])
    print(f"load average {out['loadavg_start']} -> {out['loadavg_end']}; results: bench/results/{args.name}.json")


if __name__ == "__main__":
    main()
