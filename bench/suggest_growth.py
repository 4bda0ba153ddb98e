"""How often a suggested suite fails when the data grows by 10% with nothing wrong in it.

For Chinook (SQLite) and raha's three clean datasets (loaded as text, as ``bench/profile_bench.py`` loads
them): ``suggest`` writes a suite from today's data (which it passes by construction), then, for each of
``--seeds`` seeds, a copy of the database grows by ``--share`` (10%) of new rows drawn from each table's own
distribution (``bench/grow.py``) and the suite is scanned on it. A suite "fails" on a seed when any of its
checks fails or warns. Printed and written to ``bench/results/NAME.json``: per dataset, the checks, the
share of seeds on which the suite failed, the mean number of failing checks, and which checks failed how
often (by kind too).

    .venv/bin/python -m bench.suggest_growth --seeds 20 --name suggest-growth
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import tempfile
import time
from collections import Counter
from pathlib import Path
from typing import Any

from bench.common import machine
from bench.grow import grow
from bench.profile_bench import SHARED, load_csv
from watchdog.profile.suggest import profile_database, suggest_suite
from watchdog.sandbox import Sandbox
from watchdog.scan.scanner import scan
from watchdog.scan.suites import load_suite

RESULTS = Path(__file__).parent / "results"
DATASETS = ("chinook", "raha_hospital", "raha_flights", "raha_beers")


def _database(name: str, work: Path) -> Path:
    db = work / f"{name}.db"
    if name == "chinook":
        shutil.copy(SHARED / "chinook" / "Chinook_Sqlite.sqlite", db)
    else:
        load_csv(SHARED / name / "clean.csv", db, name.removeprefix("raha_"))
    return db


def measure(name: str, seeds: int, share: float, work: Path) -> dict[str, Any]:
    db = _database(name, work)
    suite = work / f"{name}.yaml"
    with Sandbox(f"sqlite:///{db}", timeout_s=300) as box:
        result = suggest_suite(box, profile_database(box))
    suite.write_text(result.text, encoding="utf-8")
    checks = load_suite(suite).checks
    kinds = {c.name: c.kind for c in checks}
    failed_runs = 0
    failing_total = 0
    by_check: Counter[str] = Counter()
    for seed in range(1, seeds + 1):
        grown = work / f"{name}_{seed}.db"
        shutil.copy(db, grown)
        grow(grown, share, seed)
        with Sandbox(f"sqlite:///{grown}", timeout_s=300) as box:
            doc = scan(box, load_suite(suite).checks, sample=0)
        failing = [f.name for f in doc.findings if f.status in ("fail", "warn", "error")]
        failed_runs += bool(failing)
        failing_total += len(failing)
        by_check.update(failing)
        grown.unlink()
    by_kind: Counter[str] = Counter()
    for check, count in by_check.items():
        by_kind[kinds.get(check, "?")] += count
    return {"dataset": name, "checks": len(checks), "commented_out": len(result.commented), "seeds": seeds,
            "share": share, "suite_failed_share": round(failed_runs / seeds, 3),
            "mean_failing_checks": round(failing_total / seeds, 2),
            "failing_check_runs_by_kind": dict(by_kind.most_common()),
            "failing_checks": dict(by_check.most_common()),
            "suite": result.text}


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--seeds", type=int, default=20)
    p.add_argument("--share", type=float, default=0.10)
    p.add_argument("--datasets", default=",".join(DATASETS))
    p.add_argument("--name", default="suggest-growth")
    args = p.parse_args()
    started = time.time()
    out: dict[str, Any] = {"name": args.name, "machine_at_start": machine(), "loadavg_start": os.getloadavg()}
    with tempfile.TemporaryDirectory(prefix="wd-growth-") as tmp:
        out["datasets"] = [measure(d, args.seeds, args.share, Path(tmp)) for d in args.datasets.split(",")]
    out["loadavg_end"] = os.getloadavg()
    out["seconds"] = round(time.time() - started, 1)
    RESULTS.mkdir(exist_ok=True)
    (RESULTS / f"{args.name}.json").write_text(json.dumps(out, indent=2, default=str), encoding="utf-8")
    print(f"{'dataset':15} {'checks':>6} {'suite failed':>12} {'mean failing':>12}  failing by kind")
    for d in out["datasets"]:
        print(f"{d['dataset']:15} {d['checks']:>6} {d['suite_failed_share']:>12.0%} {d['mean_failing_checks']:>12}  "
              f"{d['failing_check_runs_by_kind']}")
    print(f"results: bench/results/{args.name}.json")


if __name__ == "__main__":
    main()
