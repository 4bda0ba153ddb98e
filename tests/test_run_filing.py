"""RunFolder is the only writer of a run folder; audit.json has one status vocabulary (old files still read)."""

from __future__ import annotations

import json
import os
import re
import sqlite3
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

import watchdog
from watchdog.delivery.base import RunPackage
from watchdog.exit_codes import RUN_STATUS, ExitCode, exit_code_of
from watchdog.run.compute import RunOutcome
from watchdog.run.filing import RunFolder

PACKAGE = Path(watchdog.__file__).resolve().parent
SUITE = "tables:\n  people:\n    - not_null: email\n"


def people_db(path: Path, *, with_null: bool) -> str:
    conn = sqlite3.connect(path)
    conn.execute("CREATE TABLE people (id INTEGER, email TEXT)")
    conn.executemany("INSERT INTO people VALUES (?, ?)", [(1, "a@x"), (2, None if with_null else "b@x")])
    conn.commit()
    conn.close()
    return f"sqlite:///{path}"


# ---- the one writer, seen from the running process


HOOKED = textwrap.dedent("""
    import os, sys
    root = os.path.realpath(sys.argv[1])
    writes, strays = [], []

    def under_root(path):
        try:
            return os.path.realpath(os.fsdecode(path)).startswith(root + os.sep)
        except (TypeError, ValueError):
            return False

    def hook(event, args):
        if event == "open":
            path, mode, flags = args
            writing = bool(mode and any(c in mode for c in "wax+")) or bool(flags & (os.O_WRONLY | os.O_RDWR))
        elif event in ("os.rename", "os.symlink", "os.mkdir", "os.remove", "shutil.copytree"):
            path, writing = args[1] if event in ("os.rename", "os.symlink") else args[0], True
        else:
            return
        if not writing or not under_root(path):
            return
        frame, files = sys._getframe(1), []
        while frame is not None:
            files.append(frame.f_code.co_filename)
            frame = frame.f_back
        (writes if any(f.endswith(os.path.join("watchdog", "run", "filing.py")) for f in files) else strays).append(
            (event, os.path.relpath(os.fsdecode(path), root), [f for f in files if "watchdog" in f][:4]))

    sys.addaudithook(hook)
    import watchdog
    from watchdog.cli import main
    result = watchdog.run_audit("people", config=sys.argv[2])                       # an audit, two file channels
    for out, extra in (("scan", []), ("llm", ["--llm", "--config", sys.argv[2]])):  # a scan, one with an LLM report
        try:
            main(["scan", "--db", sys.argv[3], "--checks", sys.argv[4], "--out", os.path.join(root, out), *extra])
        except SystemExit:
            pass
    print(repr((sorted({w[1] for w in writes}), strays)))
""")


def test_every_file_of_a_run_is_written_through_run_folder(tmp_path):
    from watchdog.testing.openai_stub import StubOpenAI

    url = people_db(tmp_path / "people.db", with_null=True)
    (tmp_path / "suite.yaml").write_text(SUITE)
    root = tmp_path / "reports"
    root.mkdir()
    config = tmp_path / "watchdog.yaml"
    config.write_text(f"""\
state_dir: state
history: {{url: "sqlite:///history.db"}}
llm: {{max_fix_rounds: 1, max_replans: 0, retry_wait_max_s: 0, request_timeout_s: 5, review: "off"}}
databases:
  shop: {{url: "{url}"}}
audits:
  people:
    database: shop
    checks: [suite.yaml]
    deliver:
      - file: {{dir: reports/runs}}
      - file: {{dir: reports/copies}}
""")
    with StubOpenAI(["The people table: 99 of 2 rows have no email."]) as stub:  # a draft that never verifies
        env = {**os.environ, "OPENAI_BASE_URL": stub.base_url, "OPENAI_API_KEY": "sk-test-filing"}
        done = subprocess.run([sys.executable, "-c", HOOKED, str(root), str(config), url, str(tmp_path / "suite.yaml")],
                              capture_output=True, text=True, timeout=180, cwd=tmp_path, env=env)
    assert done.returncode == 0, done.stderr
    written, strays = eval(done.stdout.strip().splitlines()[-1])  # noqa: S307 (our own repr)
    assert strays == []
    names = {Path(w).name for w in written}
    assert {"findings.json", "report.md", "report.html", "audit.json", "latest"} <= names  # renamed into place
    files = {p.relative_to(root).as_posix() for p in root.rglob("*") if p.is_file() or p.is_symlink()}
    assert any(f.startswith("copies/people/") and f.endswith("/findings.json") for f in files)
    assert {"scan/findings.json", "scan/report.md"} <= files and "copies/people/latest" in files
    assert {"llm/findings.json", "llm/report.md", "llm/report.unverified.md", "llm/audit.json"} <= files
    assert json.loads((root / "llm" / "audit.json").read_text())["llm"]["outcome"] == "fallback"


# ---- the one writer, seen from the source: every module that writes a file, and what it writes

#: module -> what it writes (none of it inside a run folder)
WRITERS = {
    "run/filing.py": "every file of a run folder, and the copies of file channels",
    "run/safe_write.py": "creates the output folder for RunFolder.check; the rescue copy of findings in a temp folder",
    "findings.py": "FindingsDoc.write: the rescue copy (a temporary folder)",
    "run/demo_data.py": "the demo database",
    "graph/checkpoints.py": "the state folder of the LLM checkpointer",
    "history/store.py": "the folder of a SQLite history database",
    "history/leases.py": "the lease lock file",
    "report/dashboard.py": "the dashboard pages",
    "profile/llm.py": "a temporary suite file to validate a suggested check",
    "profile/candidate_trial.py": "a temporary suite file of candidate checks",
    "cli/profile.py": "the suite `watchdog suggest --out` writes",
    "mcp/toolbox.py": "a temporary suite file for an MCP scan",
    "run/export_failures.py": "failing rows streamed to DIR/<check>.csv and its companion JSON (--export-failures)",
}
WRITE_CALL = re.compile(r"\.write_text\(|\.write_bytes\(|\bopen\([^)\n]*['\"][wax]b?\+?['\"]|os\.replace\(|os\.rename\("
                        r"|\.symlink_to\(|shutil\.copy|copytree\(|\.mkdir\(|json\.dump\(")


def test_only_the_listed_modules_write_files():
    found = {p.relative_to(PACKAGE).as_posix() for p in PACKAGE.rglob("*.py")
             if "testing" not in p.parts and WRITE_CALL.search(p.read_text(encoding="utf-8"))}
    assert found == set(WRITERS), "a module writes files: if it writes a run's file, move that into RunFolder"


# ---- one status vocabulary


@pytest.mark.parametrize("with_null, word", [(True, "failed"), (False, "passed")])
def test_audit_json_says_passed_warned_failed_or_error_for_scans_and_audits(tmp_path, with_null, word):
    doc = watchdog.scan(people_db(tmp_path / "p.db", with_null=with_null), SUITE)
    for audit in ("people", None):
        folder = RunFolder(tmp_path / f"run-{audit}")
        outcome = RunOutcome(doc.run_id or "r1", doc, report="# Data-quality report\n")
        folder.file_findings(outcome)
        folder.file_run(outcome, audit=audit)
        if audit is None:  # a scan without an LLM report has no audit.json
            assert not folder.audit_path.exists()
            continue
        meta = json.loads(folder.audit_path.read_text())
        assert meta["status"] == word and meta["audit"] == audit and meta["run_id"] == outcome.run_id
    assert set(RUN_STATUS.values()) == {"passed", "warned", "failed", "error"}


def test_an_audit_json_of_an_earlier_version_still_reads(tmp_path):
    """A scan with --llm used to write ``"status": "ok"`` when every check passed."""
    folder = tmp_path / "20261101T000000Z-abc123"
    folder.mkdir()
    old = {"run_id": "20261101T000000Z-abc123", "audit": None, "status": "ok", "review_required": False,
           "summary": {"checks": 1, "passed": 1, "warned": 0, "failed": 0, "errors": 0}, "trends": None,
           "llm": {"outcome": "verified", "fallback_reason": None, "models": {}, "tokens": {}, "fix_rounds": 0,
                   "replans": 0, "verification": None, "review": None, "rounds": []}}
    (folder / "audit.json").write_text(json.dumps(old))
    (folder / "report.md").write_text("# Data-quality report\n")
    assert RunFolder(folder).read_audit()["status"] == "passed"
    assert RunPackage.load(folder).status == "passed"
    assert exit_code_of("ok") is ExitCode.OK and exit_code_of("passed") is ExitCode.OK
    assert exit_code_of("failed") is ExitCode.FAILED and exit_code_of("nonsense") is ExitCode.ERROR
