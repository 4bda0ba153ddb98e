"""Where watchdog's time goes, measured in the same run, so the findings in the output can be checked.

* Process start-up: an empty Python, ``watchdog --version``, importing what ``watchdog scan`` and the
  LLM report import, and the peers' imports (each a fresh process, peak RSS too).
* SQLite ``REGEXP``: the pattern check's pass over ``customers.email`` with Python's ``re.search``
  (what the limit registers) against watchdog's registered function (``sqlite_regexp`` through the
  session's deadline wrapper, as the sandbox calls it), on the bare driver, same statement.
"""

from __future__ import annotations

import re
import sqlite3
import statistics
import time
from pathlib import Path
from typing import Any

from bench.common import GX_PYTHON, ROOT, SODA_PYTHON, WATCHDOG_PYTHON, run_child

REGEX = r"^[^@ ]+@[^@ ]+\.[a-z]{2,}$"


def startup(reps: int = 3, peers: bool = True) -> list[dict[str, Any]]:
    cases = [
        ("python -c pass (watchdog's venv)", [str(WATCHDOG_PYTHON), "-c", "pass"]),
        ("watchdog --version", [str(ROOT / ".venv" / "bin" / "watchdog"), "--version"]),
        ("import the scan path (cli, runner, sandbox)",
         [str(WATCHDOG_PYTHON), "-c", "import watchdog.cli, watchdog.run.scan_run, watchdog.sandbox.sessions"]),
        ("import the LLM report stack (llm_report, langchain_openai)",
         [str(WATCHDOG_PYTHON), "-c", "import watchdog.graph.runner, watchdog.graph.models, langchain_openai"]),
    ]
    if peers and GX_PYTHON.exists():
        cases.append(("import great_expectations", [str(GX_PYTHON), "-c", "import great_expectations"]))
    if peers and SODA_PYTHON.exists():
        cases.append(("import soda_core verify API",
                      [str(SODA_PYTHON), "-c", "import soda_core.contracts.api.verify_api"]))
    out = []
    for label, cmd in cases:
        runs = [run_child(cmd, cwd=ROOT) for _ in range(reps)]
        out.append({"what": label, "wall_s": round(statistics.median(r.wall_s for r in runs), 3),
                    "peak_rss_mb": round(statistics.median(r.peak_rss_mb for r in runs), 1),
                    "ok": all(r.returncode == 0 for r in runs)})
    return out


def sqlite_regexp(path: Path, reps: int = 3) -> dict[str, Any]:
    """Seconds for one REGEXP pass over customers.email with each registered function (median of reps)."""
    from watchdog.sandbox.sqlite_worker import sqlite_regexp as watchdogs

    compiled = re.compile(REGEX)
    variants = {
        "re.search (the limit's)": lambda p, v: None if v is None else int(compiled.search(v) is not None),
        "watchdog's sqlite_regexp": watchdogs,
    }
    sql = f"SELECT sum(NOT (email REGEXP '{REGEX}')) FROM customers"
    results: dict[str, list[float]] = {name: [] for name in variants}
    counts: dict[str, int] = {}
    conn = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
    try:
        for _ in range(reps):
            for name, fn in variants.items():
                conn.create_function("regexp", 2, fn, deterministic=True)
                start = time.perf_counter()
                counts[name] = conn.execute(sql).fetchone()[0]
                results[name].append(time.perf_counter() - start)
        start = time.perf_counter()
        conn.execute("SELECT count(*), sum(email IS NULL) FROM customers").fetchone()
        scan_only = time.perf_counter() - start
    finally:
        conn.close()
    medians = {name: round(statistics.median(v), 3) for name, v in results.items()}
    base, mine = medians["re.search (the limit's)"], medians["watchdog's sqlite_regexp"]
    return {"file": str(path), "seconds": medians, "counts": counts, "plain_scan_s": round(scan_only, 3),
            "ratio": round(mine / base, 2) if base else None, "reps": reps}
