"""Where a ``watchdog diff`` spends its time: every statement of both sides with its seconds and rows.

    .venv/bin/python -m bench.reconcile_profile SOURCE_URL TARGET_URL [--table orders] [--key id]
                                               [--timestamp-precision 0] [--out FILE]

Runs :func:`diff_tables` in this process and times each statement a side runs (both sides run at once, so a
level's wall time is the slower side's). Prints one line per statement, what kind it is (``bounds``,
``checksums`` of a level, ``leaf`` rows, sample ``values``), and the totals; ``--out`` keeps them as JSON.
"""

from __future__ import annotations

import argparse
import json
import os
import time
from pathlib import Path
from typing import Any

from watchdog.reconcile import DiffSpec, diff_tables
from watchdog.reconcile import side as side_module
from watchdog.sandbox import Sandbox


def kind_of(sql: str) -> str:
    if "GROUP BY" in sql:
        return "checksums"
    if sql.startswith("SELECT wd_m"):
        return "leaf"
    if "MIN(" in sql or sql.startswith("SELECT COUNT(*)"):
        return "bounds"
    return "values"


def profile(source: str, target: str, spec: DiffSpec) -> dict[str, Any]:
    statements: list[dict[str, Any]] = []
    original = side_module.Side.run
    boxes: dict[int, str] = {}

    def timed(self: side_module.Side, sql: str, **kwargs: Any) -> list[tuple[Any, ...]]:
        clock = time.monotonic()
        rows = original(self, sql, **kwargs)
        statements.append({"side": boxes.get(id(self.sandbox), "?"), "kind": kind_of(sql),
                           "seconds": round(time.monotonic() - clock, 3), "rows": len(rows)})
        return rows

    side_module.Side.run = timed  # type: ignore[method-assign]
    try:
        with Sandbox(source, timeout_s=3600) as a, Sandbox(target, timeout_s=3600) as b:
            boxes.update({id(a): "source", id(b): "target"})
            clock = time.monotonic()
            result = diff_tables(a, b, spec)
            seconds = time.monotonic() - clock
    finally:
        side_module.Side.run = original  # type: ignore[method-assign]
    totals: dict[str, dict[str, float]] = {}
    for s in statements:
        t = totals.setdefault(f"{s['side']} {s['kind']}", {"statements": 0, "seconds": 0.0, "rows": 0})
        t["statements"] += 1
        t["seconds"] = round(t["seconds"] + s["seconds"], 3)
        t["rows"] += s["rows"]
    return {"seconds": round(seconds, 3), "row_hash": result.row_hash, "levels": result.levels,
            "counts": [result.missing_in_target, result.missing_in_source, result.changed],
            "load": os.getloadavg(), "totals": totals, "statements": statements}


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("source")
    p.add_argument("target")
    p.add_argument("--table", default="orders")
    p.add_argument("--key", default="id")
    p.add_argument("--timestamp-precision", type=int, default=0, choices=(0, 3, 6))
    p.add_argument("--out", type=Path)
    args = p.parse_args()
    spec = DiffSpec(table=args.table, key=args.key.split(","), timestamp_precision=args.timestamp_precision,
                    samples=0)
    doc = profile(args.source, args.target, spec)
    for s in doc["statements"]:
        print(f"{s['side']:7} {s['kind']:10} {s['seconds']:8.3f} s {s['rows']:>8} rows")
    for name, t in doc["totals"].items():
        print(f"{name:20} {t['statements']:4.0f} statements {t['seconds']:8.2f} s {t['rows']:>9.0f} rows")
    print(f"total {doc['seconds']:.2f} s, row hash {doc['row_hash']}, levels {doc['levels']}, counts {doc['counts']}")
    if args.out:
        args.out.write_text(json.dumps(doc, indent=1))


if __name__ == "__main__":
    main()
