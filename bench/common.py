"""Shared helpers: run a child process and measure it, summarise samples, describe the machine.

Every measured tool runs as a whole fresh process. :func:`run_child` starts it and measures its wall
time and peak resident set size. The peak comes from GNU time (``/usr/bin/time -f %M``), which waits for
the child with ``wait4``: ``ru_maxrss`` of a child forked straight from this (large) Python process
would start at this process's own size, because Linux carries the pre-exec high-water mark over into
the child's ``ru_maxrss``. Without /usr/bin/time, ``VmHWM`` in /proc/<pid>/status is polled every 20 ms.
"""

from __future__ import annotations

import contextlib
import os
import platform
import signal
import statistics
import subprocess
import tempfile
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
BENCH = ROOT / "bench"
WATCHDOG_PYTHON = ROOT / ".venv" / "bin" / "python"
GX_PYTHON = BENCH / ".venv-gx" / "bin" / "python"
SODA_PYTHON = BENCH / ".venv-soda" / "bin" / "python"


@dataclass
class ChildRun:
    wall_s: float
    peak_rss_mb: float
    returncode: int
    stdout: str
    stderr: str
    timed_out: bool = False


GNU_TIME = Path("/usr/bin/time")


def _poll_hwm(pid: int, peak: list[float], stop: threading.Event) -> None:
    status = Path(f"/proc/{pid}/status")
    while not stop.is_set():
        try:
            for line in status.read_text().splitlines():
                if line.startswith("VmHWM:"):
                    peak[0] = max(peak[0], int(line.split()[1]) / 1024.0)
        except (OSError, ValueError):
            return
        stop.wait(0.02)


def run_child(cmd: list[str], *, env: dict[str, str] | None = None, cwd: Path | None = None,
              timeout_s: float = 1800) -> ChildRun:
    """Run ``cmd`` to completion; wall time from spawn to exit, peak RSS of that process (MB)."""
    with tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err, \
            tempfile.NamedTemporaryFile("r", suffix=".rss") as rss_file:
        use_time = GNU_TIME.exists()
        argv = [str(GNU_TIME), "-f", "%M", "-o", rss_file.name, *cmd] if use_time else cmd
        start = time.perf_counter()
        proc = subprocess.Popen(argv, stdout=out, stderr=err, stdin=subprocess.DEVNULL, env=env, cwd=cwd,
                                start_new_session=True)
        peak = [0.0]
        stop_polling = threading.Event()
        if not use_time:
            threading.Thread(target=_poll_hwm, args=(proc.pid, peak, stop_polling), daemon=True).start()
        timed_out = threading.Event()

        def kill() -> None:
            timed_out.set()
            with contextlib.suppress(ProcessLookupError):
                os.killpg(proc.pid, signal.SIGKILL)

        timer = threading.Timer(timeout_s, kill)
        timer.start()
        try:
            proc.wait()
        finally:
            timer.cancel()
            stop_polling.set()
        wall = time.perf_counter() - start
        if use_time:
            figures = [line for line in rss_file.read().splitlines() if line.strip().isdigit()]
            peak[0] = int(figures[-1]) / 1024.0 if figures else 0.0
        out.seek(0)
        err.seek(0)
        return ChildRun(wall, peak[0], proc.returncode, out.read().decode("utf-8", "replace"),
                        err.read().decode("utf-8", "replace"), timed_out.is_set())


@dataclass
class Samples:
    """Repeated measurements of one thing (seconds, or MB)."""

    values: list[float] = field(default_factory=list)

    def add(self, value: float) -> None:
        self.values.append(value)

    @property
    def median(self) -> float | None:
        return statistics.median(self.values) if self.values else None

    def summary(self, digits: int = 3) -> dict[str, Any]:
        if not self.values:
            return {"n": 0}
        return {"n": len(self.values), "median": round(statistics.median(self.values), digits),
                "min": round(min(self.values), digits), "max": round(max(self.values), digits),
                "all": [round(v, digits) for v in self.values]}


def ratio(a: float | None, b: float | None) -> float | None:
    return round(a / b, 2) if a is not None and b else None


def fmt_ratio(value: float | None) -> str:
    return "–" if value is None else f"{value:.2f}x"


def fmt_s(summary: dict[str, Any]) -> str:
    """``median (min–max)`` in seconds."""
    if not summary.get("n"):
        return "–"
    return f"{summary['median']:.2f} ({summary['min']:.2f}–{summary['max']:.2f})"


def _meminfo_gb() -> float | None:
    try:
        for line in Path("/proc/meminfo").read_text().splitlines():
            if line.startswith("MemTotal:"):
                return round(int(line.split()[1]) / 1024 / 1024, 1)
    except OSError:
        pass
    return None


def _cpu_model() -> str | None:
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or None


def machine() -> dict[str, Any]:
    """Cores, memory, CPU, OS and the load when asked (other work on the machine skews timings)."""
    return {"cores": os.cpu_count(), "memory_gb": _meminfo_gb(), "cpu": _cpu_model(),
            "os": f"{platform.system()} {platform.release()}", "python": platform.python_version(),
            "loadavg": [round(x, 2) for x in os.getloadavg()]}


def peer_version(python: Path, dist: str) -> str | None:
    """A distribution's version inside another virtual environment (None when that venv is missing)."""
    if not python.exists():
        return None
    done = subprocess.run([str(python), "-c", f"import importlib.metadata as m; print(m.version({dist!r}))"],
                          capture_output=True, text=True, timeout=60)
    return done.stdout.strip() or None


def last_json_line(text: str) -> Any:
    """The last line of a child's stdout that parses as JSON (runners print exactly one)."""
    import json

    for line in reversed(text.strip().splitlines()):
        line = line.strip()
        if line.startswith("{"):
            try:
                return json.loads(line)
            except ValueError:
                continue
    raise ValueError("no JSON line in the output")
