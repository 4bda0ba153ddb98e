"""An audit run with the LLM report, killed and resumed, or stopped by SIGTERM (real processes, real HTTP stub)."""

from __future__ import annotations

import json
import os
import signal
import sqlite3
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from watchdog.history import HistoryStore
from watchdog.testing.openai_stub import StubOpenAI, slow, structured
from watchdog.testing.smtp_sink import SmtpSink

SPECIALIST, EVALUATOR = "[role:specialist]", "[role:evaluator]"
PROSE = {"summary": "Two items have a null sku.", "priorities": ["Backfill the SKUs."],
         "checks": [{"name": "items.sku.not_null", "causes": ["An import job that skips SKUs."],
                     "fixes": ["Backfill the SKUs.", "Make the column NOT NULL."]}]}
WRONG = {**PROSE, "summary": "7 items have a null sku."}
APPROVE = structured({"confidence": 0.92, "issues": []})


@pytest.fixture
def project(tmp_path: Path) -> Path:
    (tmp_path / "data").mkdir()
    with sqlite3.connect(tmp_path / "data" / "shop.db") as conn:
        conn.execute("CREATE TABLE items (id INTEGER PRIMARY KEY, sku TEXT)")
        conn.executemany("INSERT INTO items VALUES (?, ?)",
                         [(i, None if i in (4, 8) else f"S{i}") for i in range(1, 11)])
    (tmp_path / "shop.yaml").write_text("tables:\n  items:\n    - not_null: sku\n    - unique: id\n")
    (tmp_path / "watchdog.yaml").write_text("""\
state_dir: state
databases:
  shop: {url: "sqlite:///data/shop.db"}
history: {url: "sqlite:///history.db"}
audits:
  shop:
    database: shop
    checks: [shop.yaml]
    llm: true
    deliver:
      - file: {dir: reports}
llm:
  table: program
  models: {planner: small, specialist: big, evaluator: small}
  max_fix_rounds: 2
  max_replans: 0
  max_attempts: 2
  retry_wait_max_s: 0
""")
    return tmp_path


def watchdog(project: Path, *args: str, stub: StubOpenAI | None = None, wait: bool = True):
    env = {k: v for k, v in os.environ.items() if not k.startswith("OPENAI_")}
    if stub is not None:
        env.update(OPENAI_BASE_URL=stub.base_url, OPENAI_API_KEY="sk-test")
    argv = [sys.executable, "-m", "watchdog", *args, "--config", str(project / "watchdog.yaml")]
    if not wait:
        return subprocess.Popen(argv, env=env, cwd=project, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    return subprocess.run(argv, env=env, cwd=project, capture_output=True, text=True, timeout=120)


def wait_for_calls(stub: StubOpenAI, process: subprocess.Popen, count: int) -> None:
    deadline = time.monotonic() + 90
    while len([r for r in stub.chat_requests if r["marker"] == SPECIALIST]) < count:
        assert time.monotonic() < deadline and process.poll() is None, process.stderr.read() if process.poll() else ""
        time.sleep(0.1)


def only_run(project: Path):
    store = HistoryStore(f"sqlite:///{project / 'history.db'}")
    try:
        runs = store.list_runs("shop")
    finally:
        store.close()
    assert len(runs) == 1
    return runs[0]


def test_resume_of_a_killed_audit_run_finishes_its_row_html_latest_and_audit_keys(project):
    with StubOpenAI(by_marker={SPECIALIST: [structured(WRONG), slow(60, then=structured(PROSE))],
                               EVALUATOR: [APPROVE]}, when_empty="error") as stub:
        process = watchdog(project, "run", "shop", stub=stub, wait=False)
        wait_for_calls(stub, process, 2)
        process.send_signal(signal.SIGKILL)  # killed while the fix call is in flight
        process.wait(timeout=10)
    killed = only_run(project)
    assert killed.status == "running"

    with StubOpenAI(by_marker={SPECIALIST: [structured({"summary": PROSE["summary"], "checks": []})],
                               EVALUATOR: [APPROVE]}, when_empty="error") as stub:
        resumed = watchdog(project, "resume", killed.id, stub=stub)
        assert [r["marker"] for r in stub.chat_requests] == [SPECIALIST]  # only the unfinished fix
    assert resumed.returncode == 1, resumed.stderr  # the findings' code, as the scan exits
    run = only_run(project)
    assert run.status == "failed" and run.finished_at and run.verification["outcome"] == "verified"
    folder = Path(run.out_dir)
    assert (folder / "report.html").is_file() and "Two items have a null sku." in (folder / "report.md").read_text()
    meta = json.loads((folder / "audit.json").read_text())
    assert meta["audit"] == "shop" and meta["status"] == "failed" and meta["llm"]["outcome"] == "verified"
    assert (folder.parent / "latest").resolve() == folder.resolve()

    again = watchdog(project, "resume", killed.id)  # a finished run: filed again, nothing called, keys kept
    assert again.returncode == 1, again.stderr  # the findings fail
    assert json.loads((folder / "audit.json").read_text())["audit"] == "shop"


def test_sigterm_records_the_run_interrupted_and_prints_one_line(project):
    with StubOpenAI(by_marker={SPECIALIST: [slow(60, then=structured(PROSE))], EVALUATOR: [APPROVE]}) as stub:
        process = watchdog(project, "run", "shop", stub=stub, wait=False)
        wait_for_calls(stub, process, 1)
        process.send_signal(signal.SIGTERM)
        _, stderr = process.communicate(timeout=30)
    assert process.returncode == 130, stderr
    run = only_run(project)
    last = stderr.strip().splitlines()[-1]
    assert last.startswith(f"error: interrupted by SIGTERM during the LLM report of run {run.id}")
    assert last.endswith(f"continue it with `watchdog resume {run.id}`") and "Traceback" not in stderr
    assert run.status == "interrupted"


def test_resume_of_an_unknown_run_says_so_without_an_endpoint(project):
    result = watchdog(project, "resume", "20990101T000000Z-nope")
    assert result.returncode == 3
    assert "no run '20990101T000000Z-nope'" in result.stderr and "model endpoint" not in result.stderr


class Hooks:
    """A real webhook receiver on loopback that counts POSTs."""

    def __init__(self) -> None:
        from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

        self.posts: list[bytes] = []
        hooks = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:  # noqa: N802
                hooks.posts.append(self.rfile.read(int(self.headers.get("Content-Length") or 0)))
                self.send_response(204)
                self.end_headers()

            def log_message(self, *args: object) -> None:
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}/hook"
        self.thread = threading.Thread(target=self.server.serve_forever, args=(0.02,), daemon=True)

    def __enter__(self) -> Hooks:
        self.thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.server.shutdown()
        self.server.server_close()


def with_deliveries(project: Path, smtp_port: int, hook_url: str, *, review: bool = False) -> None:
    config = (project / "watchdog.yaml").read_text()
    config = config.replace("      - file: {dir: reports}\n", f"""\
      - file: {{dir: reports}}
      - email: {{to: [ops@example.com], on: always}}
      - webhook: {{url: "{hook_url}", on: always}}
""")
    if review:
        config = config.replace("    llm: true\n", "    llm: true\n    review: true\n")
    (project / "watchdog.yaml").write_text(config + f"smtp: {{host: 127.0.0.1, port: {smtp_port}}}\n")


def kill_during_fix(project: Path) -> str:
    with StubOpenAI(by_marker={SPECIALIST: [structured(WRONG), slow(60, then=structured(PROSE))],
                               EVALUATOR: [APPROVE]}, when_empty="error") as stub:
        process = watchdog(project, "run", "shop", stub=stub, wait=False)
        wait_for_calls(stub, process, 2)
        process.send_signal(signal.SIGKILL)
        process.wait(timeout=10)
    return only_run(project).id


def resume_with_stub(project: Path, run_id: str) -> subprocess.CompletedProcess:
    with StubOpenAI(by_marker={SPECIALIST: [structured({"summary": PROSE["summary"], "checks": []})],
                               EVALUATOR: [APPROVE]}, when_empty="error") as stub:
        return watchdog(project, "resume", run_id, stub=stub)


def test_resumed_audit_delivers_once_by_email_webhook_and_file(project):
    """A killed audit run delivered nothing; its resume delivers through every channel (real SMTP, real HTTP),
    and a second resume sends nothing again."""
    with SmtpSink() as sink, Hooks() as hooks:
        with_deliveries(project, sink.port, hooks.url)
        run_id = kill_during_fix(project)
        assert not sink.messages and not hooks.posts  # killed before delivery
        resumed = resume_with_stub(project, run_id)
        assert resumed.returncode == 1, resumed.stderr  # the findings' code, as the scan exits
        assert "delivery email -> ops@example.com: sent" in resumed.stderr
        assert "delivery webhook ->" in resumed.stderr and "delivery file ->" in resumed.stderr
        assert len(sink.messages) == 1 and "shop" in sink.messages[0]["Subject"]
        assert len(hooks.posts) == 1 and run_id.encode() in hooks.posts[0]
        again = watchdog(project, "resume", run_id)  # finished and delivered: filed again, never re-sent
        assert again.returncode == 1, again.stderr  # the findings fail
        assert "delivery" not in again.stderr
        assert len(sink.messages) == 1 and len(hooks.posts) == 1
    sent = [(d.channel, d.status, d.attempts) for d in only_run(project).deliveries]
    assert sorted(sent) == [("email", "sent", 1), ("file", "sent", 1), ("webhook", "sent", 1)]


def test_resume_of_a_delivered_run_sends_nothing_and_a_reviewed_one_waits(project):
    with SmtpSink() as sink, Hooks() as hooks:
        with_deliveries(project, sink.port, hooks.url)
        with StubOpenAI(by_marker={SPECIALIST: [structured(PROSE)], EVALUATOR: [APPROVE]}) as stub:
            done = watchdog(project, "run", "shop", stub=stub)
        assert done.returncode == 1, done.stderr  # the findings fail
        assert len(sink.messages) == 1 and len(hooks.posts) == 1
        again = watchdog(project, "resume", only_run(project).id)
        assert again.returncode == 1, again.stderr  # the findings fail
        assert len(sink.messages) == 1 and len(hooks.posts) == 1 and "delivery" not in again.stderr


def test_resumed_audit_with_review_waits_for_approval_then_delivers_once(project):
    with SmtpSink() as sink, Hooks() as hooks:
        with_deliveries(project, sink.port, hooks.url, review=True)
        run_id = kill_during_fix(project)
        resumed = resume_with_stub(project, run_id)
        assert resumed.returncode == 1, resumed.stderr  # the findings' code, as the scan exits
        assert f"awaiting review: watchdog review approve {run_id}" in resumed.stderr
        assert only_run(project).status == "awaiting_review" and not sink.messages and not hooks.posts
        again = watchdog(project, "resume", run_id)
        assert again.returncode == 1 and "awaiting review" in again.stderr and not sink.messages
        approved = watchdog(project, "review", "approve", run_id)
        assert approved.returncode == 0, approved.stderr
        assert len(sink.messages) == 1 and len(hooks.posts) == 1
