"""How often a suggested suite fails when the data grows by 10% with nothing wrong in it.

For Chinook (SQLite) and raha's three clean datasets (loaded as text, as ``bench/profile_bench.py`` loads
them): ``suggest`` writes a suite from today's data (which it passes by construction), then, for each of
``--seeds`` seeds, a copy of the database grows by ``--share`` (10%) of new rows drawn from each table's own
distribution (``bench/grow.py``) and the suite is scanned on it. A suite "fails" on a seed when any of its
checks fails or warns. Printed and written to ``bench/results/NAME.json``: per dataset, the checks, the
share of seeds on which the suite failed, the mean number of failing checks, and which checks failed how
often (by kind too).

Two suites are scanned on the same grown copies: ``before``, as ``suggest`` wrote it before it proposed
``null_values``, ``numeric_text`` ranges and metrics (``suggest_suite(…, text_values=False)`` without ``metric``),
and ``after``, as it writes it now; ``after_only`` lists the checks only the new suite has (``range …
numeric_text: true``, ``metric`` and the checks the table's ``null_values`` changed)::

    .venv/bin/python -m bench.suggest_growth --seeds 20 --name suggest-growth-text-values
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
from watchdog.profile.rules import KINDS
from watchdog.profile.suggest import profile_database, suggest_suite
from watchdog.sandbox import Sandbox
from watchdog.scan.scanner import scan
from watchdog.scan.suites import load_suite

RESULTS = Path(__file__).parent / "results"
#: the kinds suggest proposed before ``metric``
OLD_KINDS = [k for k in KINDS if k != "metric"]
DATASETS = ("chinook", "raha_hospital", "raha_flights", "raha_beers")


def _database(name: str, work: Path) -> Path:
    db = work / f"{name}.db"
    if name == "chinook":
        shutil.copy(SHARED / "chinook" / "Chinook_Sqlite.sqlite", db)
    else:
        load_csv(SHARED / name / "clean.csv", db, name.removeprefix("raha_"))
    return db


def _suite(db: Path, path: Path, text_values: bool) -> tuple[str, int]:
    with Sandbox(f"sqlite:///{db}", timeout_s=300) as box:
        result = suggest_suite(box, profile_database(box), text_values=text_values,
                               kinds=None if text_values else OLD_KINDS)
    path.write_text(result.text, encoding="utf-8")
    return result.text, len(result.commented)


def measure(name: str, seeds: int, share: float, work: Path) -> dict[str, Any]:
    db = _database(name, work)
    suites = {which: work / f"{name}-{which}.yaml" for which in ("before", "after")}
    texts = {which: _suite(db, path, which == "after") for which, path in suites.items()}
    checks = {which: load_suite(path).checks for which, path in suites.items()}
    failed_runs: Counter[str] = Counter()
    failing_total: Counter[str] = Counter()
    by_check: dict[str, Counter[str]] = {which: Counter() for which in suites}
    for seed in range(1, seeds + 1):
        grown = work / f"{name}_{seed}.db"
        shutil.copy(db, grown)
        grow(grown, share, seed)
        for which, path in suites.items():  # both suites on the same grown copy
            with Sandbox(f"sqlite:///{grown}", timeout_s=300) as box:
                doc = scan(box, load_suite(path).checks, sample=0)
            failing = [f.name for f in doc.findings if f.status in ("fail", "warn", "error")]
            failed_runs[which] += bool(failing)
            failing_total[which] += len(failing)
            by_check[which].update(failing)
        grown.unlink()
    out: dict[str, Any] = {"dataset": name, "seeds": seeds, "share": share}
    for which in suites:
        kinds = {c.name: c.kind for c in checks[which]}
        by_kind: Counter[str] = Counter()
        for check, count in by_check[which].items():
            by_kind[kinds.get(check, "?")] += count
        out[which] = {"checks": len(checks[which]), "commented_out": texts[which][1],
                      "suite_failed_share": round(failed_runs[which] / seeds, 3),
                      "mean_failing_checks": round(failing_total[which] / seeds, 2),
                      "failing_check_runs_by_kind": dict(by_kind.most_common()),
                      "failing_checks": dict(by_check[which].most_common()), "suite": texts[which][0]}
    before = {(c.name, repr(c.options)) for c in checks["before"]}
    out["after_only"] = sorted(c.name for c in checks["after"] if (c.name, repr(c.options)) not in before)
    return out


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--seeds", type=int, default=20)
    p.add_argument("--share", type=float, default=0.10)
    p.add_argument("--datasets", default=",".join(DATASETS))
    p.add_argument("--name", default="suggest-growth-text-values")
    args = p.parse_args()
    started = time.time()
    out: dict[str, Any] = {"name": args.name, "machine_at_start": machine(), "loadavg_start": os.getloadavg()}
    with tempfile.TemporaryDirectory(prefix="wd-growth-") as tmp:
        out["datasets"] = [measure(d, args.seeds, args.share, Path(tmp)) for d in args.datasets.split(",")]
    out["loadavg_end"] = os.getloadavg()
    out["seconds"] = round(time.time() - started, 1)
    RESULTS.mkdir(exist_ok=True)
    (RESULTS / f"{args.name}.json").write_text(json.dumps(out, indent=2, default=str), encoding="utf-8")
    print(f"{'dataset':15} {'suite':6} {'checks':>6} {'suite failed':>12} {'mean failing':>12}  failing by kind")
    for d in out["datasets"]:
        for which in ("before", "after"):
            r = d[which]
            print(f"{d['dataset']:15} {which:6} {r['checks']:>6} {r['suite_failed_share']:>12.0%} "
                  f"{r['mean_failing_checks']:>12}  {r['failing_check_runs_by_kind']}")
    print(f"results: bench/results/{args.name}.json")


if __name__ == "__main__":
    main()
