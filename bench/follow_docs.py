"""A newcomer's time to a scheduled audit with e-mail: docs/getting-started.md followed literally, from a fresh clone.

``python -m bench.follow_docs WORKDIR [--out FILE]`` (from the top of the repository, with the project's Python;
it reads the page as tests/test_docs.py does) clones the committed repository into WORKDIR and runs the page's
blocks in order in one bash session, as a person pasting them would: files with a ``title=`` are written,
commands run, and the SMTP receiver the page starts "in a second terminal" runs in the background, its output
kept (and it is stopped at the end, by its process id). It prints and records the wall time, the load, and
whether the audit's e-mail reached the receiver. A person's reading time is not in it.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import subprocess
import time
from datetime import UTC, datetime
from pathlib import Path

import tests.test_docs as docs_test

REPO = Path(__file__).resolve().parent.parent


def script_for(page: Path, work: Path) -> str:
    lines = ["set -e", f"cd {work}"]
    for block in docs_test.blocks_of(page):
        if block.lang in {"yaml", "yml"} and block.title:
            lines.append(f"mkdir -p $(dirname {block.title}) && cat > {block.title} <<'WD_EOF'\n{block.body}\nWD_EOF")
        elif block.lang in {"sh", "bash", "console"}:
            for command in docs_test.commands_of(block):
                command = re.sub(r"\s+#.*$", "", command)
                if "aiosmtpd -n" in command:  # "in a second terminal": in the background, its output kept
                    *first, serve = command.split(" && ")
                    background = f"{{ {serve} > {work}/smtp.log 2>&1 & echo $! > {work}/smtp.pid; }}; sleep 3"
                    command = " && ".join([*first, background])
                lines.append(f"echo {json.dumps('+ ' + command)}; {command} || test $? -le 2")
    return "\n".join(lines) + "\n"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("work", type=Path)
    parser.add_argument("--out", type=Path)
    args = parser.parse_args()
    args.work.mkdir(parents=True)
    started, load_start, t0 = datetime.now(UTC).isoformat(timespec="seconds"), os.getloadavg(), time.perf_counter()
    clone = args.work / "watchdog"
    subprocess.run(["git", "clone", "-q", str(REPO), str(clone)], check=True)
    docs_test.REPO = clone  # the page is read from the fresh clone
    (args.work / "follow.sh").write_text(script_for(clone / "docs" / "getting-started.md", args.work))
    done = subprocess.run(["bash", str(args.work / "follow.sh")], capture_output=True, text=True)
    seconds = time.perf_counter() - t0
    pid_file = args.work / "smtp.pid"
    if pid_file.exists():  # the receiver this run started, by its id
        subprocess.run(["kill", pid_file.read_text().strip()], check=False)
    smtp = (args.work / "smtp.log").read_text() if (args.work / "smtp.log").exists() else ""
    result = {"name": "follow-getting-started", "started_at": started, "exit_code": done.returncode,
              "seconds": round(seconds, 1), "loadavg_start": [round(x, 2) for x in load_start],
              "loadavg_end": [round(x, 2) for x in os.getloadavg()], "cores": os.cpu_count(),
              "mail_received": "Subject: [watchdog] " in smtp,
              "subjects": re.findall(r"Subject: (.*)", smtp)[:3]}
    print(done.stdout[-3000:], done.stderr[-2000:])
    print(json.dumps(result, indent=2))
    if args.out:
        args.out.write_text(json.dumps(result, indent=2) + "\n")


if __name__ == "__main__":
    main()
