"""Where watchdog's time goes, measured in the same run, so the findings in the output can be checked.

* Process start-up: an empty Python, ``watchdog --version`` against ``python -c "import sqlite3"``,
  a whole ``watchdog scan`` of a 1-row SQLite table against importing just what a scan needs
  (sqlglot, yaml, the driver), importing what the LLM report imports, and the peers' imports (each a
  fresh process, interleaved, peak RSS too; the issue's targets are 3x and 1.5x). Besides wall time,
  the CPU time (user + system) of each process and its children: on a shared machine wall times
  of short processes mostly measure the wait for a core, CPU times much less so.
* SQLite ``REGEXP``: the pattern check's pass over ``customers.email`` with Python's ``re.search``
  (what the limit registers) against watchdog's registered function (``sqlite_regexp`` through the
  session's deadline wrapper, as the sandbox calls it), on the bare driver, same statement.
"""

from __future__ import annotations

import re
import resource
import sqlite3
import statistics
import tempfile
import time
from pathlib import Path
from typing import Any

from bench.common import GX_PYTHON, ROOT, SODA_PYTHON, WATCHDOG_PYTHON, run_child

REGEX = r"^[^@ ]+@[^@ ]+\.[a-z]{2,}$"


def startup(reps: int = 5, peers: bool = True) -> list[dict[str, Any]]:
    """Each case ``reps`` times, interleaved (so load changes hit all alike); min and median wall time."""
    work = Path(tempfile.mkdtemp(prefix="wd-bench-startup-"))
    db = work / "one.sqlite"
    conn = sqlite3.connect(db)
    conn.executescript("CREATE TABLE t (id INTEGER, email TEXT); INSERT INTO t VALUES (1, 'a@b.io');")
    conn.close()
    (work / "one.yaml").write_text("tables:\n  t:\n    - not_null: email\n    - unique: id\n"
                                   "    - row_count: {min: 1}\n", encoding="utf-8")
    watchdog = str(ROOT / ".venv" / "bin" / "watchdog")
    cases = [
        ("python -c 'import sqlite3' (watchdog's venv)", [str(WATCHDOG_PYTHON), "-c", "import sqlite3"]),
        ("watchdog --version", [watchdog, "--version"]),
        ("python -c 'import sqlglot, yaml, sqlite3' (what a scan needs)",
         [str(WATCHDOG_PYTHON), "-c", "import sqlglot, yaml, sqlite3"]),
        ("watchdog scan, 1-row SQLite table, 3 checks",
         [watchdog, "scan", "--db", f"sqlite:///{db}", "--checks", str(work / "one.yaml"), "--out", str(work / "out"),
          "--json"]),
        ("import the LLM report stack (llm_report, langchain_openai)",
         [str(WATCHDOG_PYTHON), "-c", "import watchdog.graph.runner, watchdog.graph.models, langchain_openai"]),
    ]
    if peers and GX_PYTHON.exists():
        cases.append(("import great_expectations", [str(GX_PYTHON), "-c", "import great_expectations"]))
    if peers and SODA_PYTHON.exists():
        cases.append(("import soda_core verify API",
                      [str(SODA_PYTHON), "-c", "import soda_core.contracts.api.verify_api"]))
    runs: dict[str, list[Any]] = {label: [] for label, _ in cases}
    cpu: dict[str, list[float]] = {label: [] for label, _ in cases}
    for _, cmd in cases:  # warm-up: .pyc files, page cache
        run_child(cmd, cwd=ROOT)
    for _ in range(reps):
        for label, cmd in cases:
            before = resource.getrusage(resource.RUSAGE_CHILDREN)
            runs[label].append(run_child(cmd, cwd=ROOT))
            after = resource.getrusage(resource.RUSAGE_CHILDREN)  # the process and the children it waited for
            cpu[label].append(after.ru_utime + after.ru_stime - before.ru_utime - before.ru_stime)
    out = []
    for label, _ in cases:
        walls = [r.wall_s for r in runs[label]]
        out.append({"what": label, "wall_s": round(statistics.median(walls), 3), "min_s": round(min(walls), 3),
                    "cpu_s": round(statistics.median(cpu[label]), 3), "cpu_min_s": round(min(cpu[label]), 3),
                    "peak_rss_mb": round(statistics.median(r.peak_rss_mb for r in runs[label]), 1),
                    "ok": all(r.returncode in (0, 1) for r in runs[label]), "reps": reps})
    return out


def startup_ratios(rows: list[dict[str, Any]]) -> dict[str, float | None]:
    """The issue's two start-up targets, from medians (and mins) of the same interleaved run."""
    by = {r["what"].split(" (")[0].split(",")[0]: r for r in rows}

    def pair(a: str, b: str, key: str) -> float | None:
        x, y = by.get(a), by.get(b)
        return round(x[key] / y[key], 2) if x and y and y[key] else None

    bare, needs = "python -c 'import sqlite3'", "python -c 'import sqlglot"
    needs_key = next((k for k in by if k.startswith(needs)), needs)
    return {"version/bare_python": pair("watchdog --version", bare, "wall_s"),
            "version/bare_python_min": pair("watchdog --version", bare, "min_s"),
            "version/bare_python_cpu": pair("watchdog --version", bare, "cpu_s"),
            "scan_1_row/scan_imports": pair("watchdog scan", needs_key, "wall_s"),
            "scan_1_row/scan_imports_min": pair("watchdog scan", needs_key, "min_s"),
            "scan_1_row/scan_imports_cpu": pair("watchdog scan", needs_key, "cpu_s")}


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
