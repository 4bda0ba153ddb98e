"""One extra, untimed-by-the-table watchdog scan in-process: every statement it sends, and how long each took.

``Sandbox.on_execute`` counts the statements; the sandbox's session is wrapped to time each one, so a
slow statement (or a slow kind of statement, e.g. the sample queries) shows up by name. Also times the
same scan with ``sample=0``. Used by the scan benchmark; runnable alone::

    .venv/bin/python -m bench.statements sqlite:////tmp/watchdog-bench/bench_100000.sqlite
"""

from __future__ import annotations

import json
import sys
import time
from pathlib import Path
from typing import Any

from watchdog.defaults import DEFAULT_SAMPLE
from watchdog.sandbox import Sandbox
from watchdog.scan.scanner import scan
from watchdog.scan.suites import load_suites

SUITE = Path(__file__).with_name("suite.yaml")


def _kind(sql: str) -> str:
    """A short label for a statement watchdog issued."""
    text = " ".join(sql.split()).upper()
    if "PRAGMA_TABLE_XINFO" in text or "PG_CATALOG.PG_ATTRIBUTE" in text:
        return "catalog"  # the column types of a table (range, accepted_values), on the session's connection
    if "GROUP BY" in text:
        return "unique"  # with samples on, it also returns the first duplicated keys
    if "NOT EXISTS" in text:
        return "foreign_key"  # with samples on, it also returns the first orphan rows
    if "AS WD_ROWS" in text:
        return "batch"  # the aggregate pass that also returns the failing rows' keys (SQLite)
    if ".ROWID IN (" in text:
        return "sample"  # the sample rows read by the keys the aggregate pass returned
    if " LIMIT " in text:
        return "sample"  # one statement per table for its breaching checks' samples
    return "batch"


def profile_scan(url: str, *, sample: int = DEFAULT_SAMPLE, suite: Path = SUITE) -> dict[str, Any]:
    """Scan the benchmark suite through the sandbox; return the statement list with seconds per statement."""
    checks = [c for s in load_suites([suite]) for c in s.checks]
    executed: list[str] = []
    timings: list[dict[str, Any]] = []
    with Sandbox(url) as box:
        box.on_execute(executed.append)
        session = box._session  # noqa: SLF001 - wrapped to time each statement, nothing else changes
        original = session.run

        def timed(sql: str, **kw: Any) -> Any:
            start = time.perf_counter()
            try:
                return original(sql, **kw)
            finally:
                timings.append({"kind": _kind(sql), "seconds": round(time.perf_counter() - start, 4),
                                "sql": " ".join(sql.split())[:160]})

        session.run = timed  # type: ignore[method-assign]
        start = time.perf_counter()
        doc = scan(box, checks, sample=sample, parallel=1)  # one at a time: each statement timed on its own
        wall = time.perf_counter() - start
    by_kind: dict[str, dict[str, float]] = {}
    for t in timings:
        entry = by_kind.setdefault(t["kind"], {"count": 0, "seconds": 0.0})
        entry["count"] += 1
        entry["seconds"] = round(entry["seconds"] + t["seconds"], 4)
    return {"statements": len(executed), "by_kind": by_kind, "scan_seconds": round(wall, 4),
            "statements_detail": timings, "checks": len(checks),
            "errors": [f.name for f in doc.findings if f.status == "error"]}


if __name__ == "__main__":
    result = profile_scan(sys.argv[1], sample=int(sys.argv[2]) if len(sys.argv) > 2 else DEFAULT_SAMPLE)
    print(json.dumps(result, indent=2))
