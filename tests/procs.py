"""Processes as the tests see them through /proc: alive (not a zombie), children of a process, gone in time."""

from __future__ import annotations

import os
import time
from pathlib import Path


def alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    status = Path(f"/proc/{pid}/status")
    return not (status.exists() and "zombie" in status.read_text())


def children(pid: int) -> list[int]:
    found = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                stat = (entry / "stat").read_text()
            except OSError:
                continue
            if int(stat.rsplit(")", 1)[1].split()[1]) == pid:
                found.append(int(entry.name))
    return found


def gone(pids: list[int], within_s: float = 5.0) -> bool:
    """Whether every process in ``pids`` has ended within ``within_s`` seconds."""
    deadline = time.monotonic() + within_s
    while any(alive(pid) for pid in pids) and time.monotonic() < deadline:
        time.sleep(0.05)
    return not any(alive(pid) for pid in pids)
