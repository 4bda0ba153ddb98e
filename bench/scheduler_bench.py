"""The scheduler: ``watchdog serve`` with 100 audits: start-up time, then CPU and RSS while idle.

Every audit gets a far-future cron (29 February, 03:00), so none runs while it is measured. Start-up is
the time from spawning the process to the log line that says the jobs are synced and it is serving
(read from stderr). The first start fills an empty job store; a restart keeps the jobs. While idle, the
process's own CPU (``utime + stime`` from /proc/<pid>/stat) and RSS (``VmRSS`` from /proc/<pid>/status)
are sampled once a second for ``idle_s`` seconds. The same start-up is measured with a single audit,
to show what 99 more cost.
"""

from __future__ import annotations

import os
import statistics
import subprocess
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

from bench.common import ROOT

WATCHDOG = ROOT / ".venv" / "bin" / "watchdog"
READY = "serving "  # "serving 100 scheduled audit(s) from ..."
FAR_FUTURE_CRON = "0 3 29 2 *"
CLK_TCK = os.sysconf("SC_CLK_TCK")


def write_config(folder: Path, audits: int) -> Path:
    """A configuration with ``audits`` audits on one small SQLite database and one suite."""
    import sqlite3

    db = folder / "tiny.db"
    with sqlite3.connect(db) as conn:
        conn.execute("CREATE TABLE IF NOT EXISTS items (id INTEGER PRIMARY KEY, sku TEXT)")
    (folder / "suite.yaml").write_text("tables:\n  items:\n    - not_null: sku\n    - unique: id\n", encoding="utf-8")
    lines = ["state_dir: state", "databases:", "  tiny:", f"    url: sqlite:///{db}", "history:",
             f"  url: sqlite:///{folder / 'history.db'}", "audits:"]
    for i in range(audits):
        lines += [f"  audit_{i:03d}:", "    database: tiny", "    checks: [suite.yaml]",
                  f'    schedule: "{FAR_FUTURE_CRON}"', "    deliver:", "      - file: {dir: reports}"]
    path = folder / "watchdog.yaml"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def _cpu_ticks(pid: int) -> int:
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return int(fields[11]) + int(fields[12])  # utime, stime (fields 14 and 15 of the whole line)


def _rss_mb(pid: int) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    return 0.0


def serve_once(config: Path, *, run_for_s: float, idle_s: float = 0.0) -> dict[str, Any]:
    """Start ``watchdog serve``; time until ready; optionally sample it while idle; let it stop by itself."""
    start = time.perf_counter()
    proc = subprocess.Popen([str(WATCHDOG), "serve", "--config", str(config), "--for", f"{run_for_s:g}"],
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, stdin=subprocess.DEVNULL, text=True,
                            cwd=config.parent)
    ready = threading.Event()
    lines: list[str] = []
    ready_at: list[float] = []

    def read() -> None:
        assert proc.stderr is not None
        for line in proc.stderr:
            lines.append(line.rstrip())
            if READY in line and not ready.is_set():
                ready_at.append(time.perf_counter() - start)
                ready.set()

    reader = threading.Thread(target=read, daemon=True)
    reader.start()
    result: dict[str, Any] = {}
    if not ready.wait(120):
        proc.kill()
        proc.wait()
        return {"error": "never became ready: " + " | ".join(lines[-5:])}
    result["startup_s"] = round(ready_at[0], 3)
    result["rss_at_ready_mb"] = round(_rss_mb(proc.pid), 1)
    if idle_s:
        ticks0, t0 = _cpu_ticks(proc.pid), time.perf_counter()
        rss = []
        while time.perf_counter() - t0 < idle_s and proc.poll() is None:
            rss.append(_rss_mb(proc.pid))
            time.sleep(1.0)
        ticks1, t1 = _cpu_ticks(proc.pid), time.perf_counter()
        cpu_s = (ticks1 - ticks0) / CLK_TCK
        result.update(idle_s=round(t1 - t0, 1), idle_cpu_s=round(cpu_s, 3),
                      idle_cpu_percent=round(100 * cpu_s / (t1 - t0), 3),
                      idle_rss_mb={"min": round(min(rss), 1), "median": round(statistics.median(rss), 1),
                                   "max": round(max(rss), 1), "first": round(rss[0], 1), "last": round(rss[-1], 1),
                                   "samples": len(rss)})
    code = proc.wait(timeout=run_for_s + 120)
    reader.join(timeout=5)
    result["exit"] = code
    result["runs_started"] = sum(1 for line in lines if "run started" in line)
    return result


def run_scheduler_bench(idle_s: float = 60.0, audits: int = 100, restarts: int = 2, log: Any = print) -> dict[str, Any]:
    with tempfile.TemporaryDirectory(prefix="wd-bench-serve-") as tmp:
        many = Path(tmp) / "many"
        one = Path(tmp) / "one"
        many.mkdir()
        one.mkdir()
        config, single = write_config(many, audits), write_config(one, 1)
        first = serve_once(config, run_for_s=1)
        log(f"    first start ({audits} audits, empty job store): {first.get('startup_s')}s")
        again = [serve_once(config, run_for_s=1) for _ in range(restarts)]
        idle = serve_once(config, run_for_s=idle_s + 5, idle_s=idle_s)
        log(f"    idle {idle.get('idle_s')}s: CPU {idle.get('idle_cpu_percent')}%, RSS {idle.get('idle_rss_mb')}")
        one_first = serve_once(single, run_for_s=1)
        one_again = [serve_once(single, run_for_s=1) for _ in range(restarts)]
    restart_times = [r["startup_s"] for r in [*again, idle] if "startup_s" in r]
    one_restarts = [r["startup_s"] for r in one_again if "startup_s" in r]
    return {
        "audits": audits, "cron": FAR_FUTURE_CRON,
        "first_start_s": first.get("startup_s"), "restart_s": restart_times,
        "restart_median_s": round(statistics.median(restart_times), 3) if restart_times else None,
        "one_audit_first_start_s": one_first.get("startup_s"), "one_audit_restart_s": one_restarts,
        "one_audit_restart_median_s": round(statistics.median(one_restarts), 3) if one_restarts else None,
        "idle": idle, "runs_started_while_idle": idle.get("runs_started"),
        "errors": [r["error"] for r in [first, *again, idle, one_first, *one_again] if "error" in r],
    }
