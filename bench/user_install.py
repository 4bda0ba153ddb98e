"""The user install, as a newcomer does it: a fresh clone, README's first command, then the main commands.

``python3.11 bench/user_install.py`` (CI's user-install step) clones the committed repository into a temporary
folder, runs README's first shell command there verbatim (a venv with ``pip install -e .``, no test extras, then
``watchdog demo``), then ``scan``, ``profile``, ``suggest``, a short ``serve`` and ``dashboard`` with that venv's
``watchdog``, and fails if any of them fails, if a test-only package was installed, or if PyPI's unrelated
``watchdog`` package was. It prints what it measured: install time, venv size, packages.
``--out FILE`` also writes that as JSON with the date, the machine and its load average.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import re
import resource
import shutil
import subprocess
import sys
import tempfile
import time
from datetime import UTC, datetime
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
#: packages only the test extras bring: a user install must not have them
TEST_ONLY = ("pytest", "pyspark", "xllamacpp", "mypy", "hypothesis")
DB = "sqlite:///reports/demo/crm.db"
COMMANDS = [  # (what, argv after `watchdog`, allowed exit codes)
    ("scan", ["scan", "--db", DB, "--checks", "checks/demo_crm.yaml", "--out", "reports/ci-scan"], {0, 1, 2}),
    ("profile", ["profile", "--db", DB, "--tables", "contacts"], {0}),
    ("suggest", ["suggest", "--db", DB, "--out", "checks/suggested.yaml"], {0}),
    ("scan the suggested suite", ["scan", "--db", DB, "--checks", "checks/suggested.yaml", "--out", "reports/s"],
     {0}),
    ("serve", ["serve", "--for", "2"], {0}),
    ("dashboard", ["dashboard"], {0}),
]


def readme_demo_command() -> str:
    blocks = re.findall(r"```sh\n(.*?)\n```", (REPO / "README.md").read_text(), flags=re.S)
    return blocks[0]


def machine() -> dict:
    return {"cores": os.cpu_count(), "cpu": _cpu(), "os": f"{platform.system()} {platform.release()}",
            "python": platform.python_version(), "loadavg": [round(x, 2) for x in os.getloadavg()]}


def _cpu() -> str:
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor()


def size_mb(path: Path) -> float:
    total = sum(f.stat().st_size for f in path.rglob("*") if f.is_file() and not f.is_symlink())
    return round(total / 2**20, 1)


def children_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


CPU: dict[str, float] = {}


def run(argv: list[str], cwd: Path, what: str, allowed: set[int]) -> float:
    """Run one step; returns its wall time and keeps its CPU time (user + system, children) in CPU."""
    start, cpu = time.perf_counter(), children_cpu()
    done = subprocess.run(argv, cwd=cwd, capture_output=True, text=True, timeout=1800)
    took = time.perf_counter() - start
    CPU[what] = round(children_cpu() - cpu, 1)
    if done.returncode not in allowed:
        sys.stderr.write(f"user install: {what} exited {done.returncode}\n{done.stdout[-3000:]}\n{done.stderr[-3000:]}")
        raise SystemExit(1)
    print(f"[user-install] {what}: ok ({took:.1f} s)", flush=True)
    return took


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--out", type=Path, help="also write the measurement here (JSON)")
    args = parser.parse_args()
    started = datetime.now(UTC).isoformat(timespec="seconds")
    at_start = machine()
    work = Path(tempfile.mkdtemp(prefix="wd-user-install-"))
    try:
        clone = work / "watchdog"
        subprocess.run(["git", "clone", "-q", str(REPO), str(clone)], check=True)
        command = readme_demo_command()  # run as written, timed in two parts: the install, then the demo
        *install, demo = command.split(" && ")
        install_s = run(["bash", "-c", " && ".join(install)], clone, "install (README's first command)", {0})
        demo_s = run(["bash", "-c", demo], clone, "demo (README's first command)", {0})
        venv = clone / ".venv"
        env_pip = subprocess.run([str(venv / "bin" / "python"), "-m", "pip", "list", "--format=json"],
                                 capture_output=True, text=True, check=True)
        packages = {p["name"].lower() for p in json.loads(env_pip.stdout)}
        wrong = [p for p in (*TEST_ONLY, "watchdog") if p in packages]
        if wrong:
            sys.stderr.write(f"user install: it installed {wrong}; a user install has no test extras, and PyPI's "
                             "`watchdog` must never be installed\n")
            raise SystemExit(1)
        timings = {what: round(run([str(venv / "bin" / "watchdog"), *argv], clone, what, allowed), 2)
                   for what, argv, allowed in COMMANDS}
        result = {
            "name": "user-install", "started_at": started, "command": command,
            "machine_at_start": at_start, "machine_at_end": machine(),
            "install_s": round(install_s, 1), "demo_s": round(demo_s, 1),
            "install_cpu_s": CPU["install (README's first command)"],
            "demo_cpu_s": CPU["demo (README's first command)"], "venv_mb": size_mb(venv),
            "packages": len(packages), "commands_s": timings,
            "note": "wall times grow with the machine's load (a shared machine); CPU times (user + system) much less. "
                    "pip's cache was warm: a cold cache adds the download time",
        }
    finally:
        shutil.rmtree(work, ignore_errors=True)
    print(f"[user-install] install {result['install_s']} s ({result['install_cpu_s']} s CPU), "
          f"demo {result['demo_s']} s, venv {result['venv_mb']} MB, {result['packages']} packages, "
          f"load {at_start['loadavg']}")
    if args.out:
        args.out.write_text(json.dumps(result, indent=2) + "\n")


if __name__ == "__main__":
    main()
