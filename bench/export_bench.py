"""``scan --export-failures`` at 1M failing rows: wall time and peak RSS, against the same scan without export.

A SQLite file whose ``people`` table has ``--rows`` rows, every one failing ``not_null: email``. Interleaved,
``--reps`` times, each in a fresh process (peak RSS by GNU time: the largest of the process and its SQLite
worker): ``scan`` alone (samples only), ``scan --export-failures`` with the limit at a tenth of the rows and at
the row count (every row written: memory should not grow with it), and, to show what bounded memory saves, one
statement fetching every failing row at once through the sandbox (its outcome recorded: the SQLite worker's
memory cap may stop it). Medians, ratios to the plain scan, and the load average, into ``bench/results/NAME.json``::

    .venv/bin/python -m bench.export_bench --rows 1000000 --reps 3 --name export-1m-sqlite
"""

from __future__ import annotations

import argparse
import json
import sqlite3
import sys
import tempfile
from pathlib import Path
from typing import Any

from bench.common import Samples, machine, ratio, run_child

RESULTS = Path(__file__).parent / "results"
SUITE = "tables:\n  people:\n    - not_null: email\n"
FETCH_ALL = """\
import sys
from watchdog.sandbox import Sandbox
with Sandbox(sys.argv[1], timeout_s=600, max_rows=10**7, max_bytes=10**10) as box:
    rows = box.query("SELECT * FROM people WHERE email IS NULL").rows
print(len(rows))
"""


def make_table(path: Path, rows: int) -> None:
    conn = sqlite3.connect(path)
    conn.execute("CREATE TABLE people (id INTEGER PRIMARY KEY, email TEXT, name TEXT, city TEXT, amount REAL)")
    conn.executemany("INSERT INTO people VALUES (?, NULL, ?, ?, ?)",
                     ((i, f"customer number {i:08d}", f"city {i % 977}", i * 0.25) for i in range(1, rows + 1)))
    conn.commit()
    conn.close()


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--rows", type=int, default=1_000_000)
    parser.add_argument("--reps", type=int, default=3)
    parser.add_argument("--name", default="export-1m-sqlite")
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory(prefix="wd-export-bench-") as tmp:
        work = Path(tmp)
        db = work / "people.db"
        make_table(db, args.rows)
        (work / "suite.yaml").write_text(SUITE, encoding="utf-8")
        url = f"sqlite:///{db}"
        base = [sys.executable, "-m", "watchdog", "scan", "--db", url, "--checks", "suite.yaml", "--no-diagnose"]
        cases: dict[str, list[str]] = {
            "scan": [*base, "--out", "plain"],
            "scan_export": [*base, "--out", "exported", "--export-failures", "failed",
                            "--export-limit", str(args.rows)],
            "scan_export_tenth": [*base, "--out", "tenth", "--export-failures", "tenth-failed",
                                  "--export-limit", str(max(1, args.rows // 10))],
            "fetch_all_at_once": [sys.executable, "-c", FETCH_ALL, url],
        }
        wall = {name: Samples() for name in cases}
        rss = {name: Samples() for name in cases}
        exported: dict[str, Any] = {}
        fetch_all: list[str] = []
        load_before = machine()["loadavg"]
        for _ in range(args.reps):
            for name, cmd in cases.items():  # interleaved: each rep runs every case once
                done = run_child(cmd, cwd=work, timeout_s=1800)
                if name == "fetch_all_at_once":
                    lines = (done.stdout.strip() or done.stderr.strip() or "?").splitlines()
                    fetch_all.append(f"exit {done.returncode}: {lines[-1][:200]}")
                elif done.returncode not in (0, 1):
                    raise SystemExit(f"{name} exited {done.returncode}: {done.stderr[-2000:]}")
                wall[name].add(done.wall_s)
                rss[name].add(done.peak_rss_mb)
                if name == "scan_export":
                    exported = json.loads((work / "failed" / "people.email.not_null.json").read_text())
                    with (work / "failed" / "people.email.not_null.csv").open(encoding="utf-8") as handle:
                        exported["csv_data_lines"] = sum(1 for _ in handle) - 1
    result = {
        "what": __doc__.split("\n\n")[0],
        "rows_failing": args.rows, "reps": args.reps, "machine": machine(), "loadavg_before": load_before,
        "wall_s": {k: v.summary() for k, v in wall.items()},
        "peak_rss_mb": {k: v.summary(1) for k, v in rss.items()},
        "ratios_to_scan": {
            "wall": ratio(wall["scan_export"].median, wall["scan"].median),
            "peak_rss": ratio(rss["scan_export"].median, rss["scan"].median),
            "peak_rss_tenth": ratio(rss["scan_export_tenth"].median, rss["scan"].median),
        },
        "fetch_all_at_once_outcome": fetch_all,
        "export": {k: exported.get(k) for k in ("rows", "limit", "capped", "batches", "order", "csv_data_lines")},
    }
    RESULTS.mkdir(exist_ok=True)
    out = RESULTS / f"{args.name}.json"
    out.write_text(json.dumps(result, indent=2) + "\n", encoding="utf-8")
    print(json.dumps(result, indent=2))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
