"""`watchdog scan --llm` end to end through real HTTP: a scripted OpenAI-compatible server on 127.0.0.1."""

from __future__ import annotations

import json
import os
import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import pytest

from watchdog.testing.openai_stub import StubOpenAI, drop, error, reply, slow, structured, tool_call

API_KEY = "sk-test-Secret-Key-123"
SPECIALIST, EVALUATOR = "[role:specialist]", "[role:evaluator]"

GOOD = """# Data-quality report

**Summary:** 2 checks ran: 1 failed and 1 passed. Two items have no SKU.

## Findings

| Check | Status | Failing | Total | Rate |
|---|---|---|---|---|
| `items.sku.not_null` | FAIL | 2 | 10 | 20.00% |
| `items.id.unique` | PASS | 0 | 10 | 0% |

## Details

### `items.sku.not_null`

2 of 10 items (20%) have no SKU. Likely cause: items created by the import job before SKUs were assigned.
Suggested fix: backfill the SKUs and make the column NOT NULL.
"""
WRONG = GOOD.replace("| 2 | 10 | 20.00% |", "| 7 | 10 | 70.00% |").replace("2 of 10 items (20%)", "7 of 10 items (70%)")
APPROVE = structured({"confidence": 0.92, "issues": []})


@pytest.fixture
def project(tmp_path: Path) -> Path:
    with sqlite3.connect(tmp_path / "shop.db") as conn:
        conn.execute("CREATE TABLE items (id INTEGER PRIMARY KEY, sku TEXT)")
        conn.executemany("INSERT INTO items VALUES (?, ?)",
                         [(i, None if i in (4, 8) else f"S{i}") for i in range(1, 11)])
    (tmp_path / "suite.yaml").write_text("tables:\n  items:\n    - not_null: sku\n    - unique: id\n")
    (tmp_path / "watchdog.yaml").write_text("""\
state_dir: state
llm:
  models: {planner: small-model, specialist: big-model, evaluator: small-model}
  max_fix_rounds: 2
  max_replans: 0
  max_attempts: 3
  retry_wait_max_s: 0
  request_timeout_s: 2
  tool_budget: 2
""")
    return tmp_path


def scan(project: Path, stub: StubOpenAI | None, *extra: str, wait: bool = True):
    env = {k: v for k, v in os.environ.items() if not k.startswith("OPENAI_")}
    if stub is not None:
        env.update(OPENAI_BASE_URL=stub.base_url, OPENAI_API_KEY=API_KEY)
    args = [sys.executable, "-m", "watchdog", "scan", "--db", f"sqlite:///{project / 'shop.db'}", "--checks",
            str(project / "suite.yaml"), "--out", str(project / "out"), "--config", str(project / "watchdog.yaml"),
            "--llm", *extra]
    if not wait:
        return subprocess.Popen(args, env=env, cwd=project, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    return subprocess.run(args, env=env, cwd=project, capture_output=True, text=True, timeout=120)


def written(project: Path) -> str:
    return "".join(p.read_text() for p in (project / "out").iterdir() if p.is_file())


def audit(project: Path) -> dict:
    """The ``llm`` section of audit.json (one schema for scans and audits)."""
    meta = json.loads((project / "out" / "audit.json").read_text())
    assert meta["audit"] is None and meta["run_id"] and meta["summary"]
    return meta["llm"]


def test_a_verified_llm_report_is_delivered_with_tokens_and_rounds(project):
    with StubOpenAI(by_marker={
        SPECIALIST: [tool_call("query_database", {"sql": "SELECT id FROM items WHERE sku IS NULL"}),
                     reply(GOOD, usage=(900, 300))],
        EVALUATOR: [APPROVE],
    }, when_empty="error") as stub:
        result = scan(project, stub)
    assert result.returncode == 1, result.stderr  # the findings decide the exit code
    assert (project / "out" / "report.md").read_text() == GOOD
    assert not (project / "out" / "report.unverified.md").exists()
    trail = audit(project)
    assert trail["outcome"] == "verified" and [r["step"] for r in trail["rounds"]] == ["write", "evaluate", "finalize"]
    assert trail["tokens"]["specialist"]["output"] >= 300 and trail["tokens"]["evaluator"]["calls"] == 1
    assert trail["models"] == {"planner": "small-model", "specialist": "big-model", "evaluator": "small-model"}
    assert "LLM report: verified" in result.stderr and "tokens specialist" in result.stderr
    # the tool ran through the sandbox and its rows went back to the model
    second = [r for r in stub.chat_requests if r["marker"] == SPECIALIST][1]
    tool_message = [m for m in second["body"]["messages"] if m["role"] == "tool"][0]
    assert json.loads(tool_message["content"])["rows"] == [{"id": "4"}, {"id": "8"}]
    first = stub.chat_requests[0]
    assert first["max_tokens"] == 4000 and first["max_completion_tokens"] == 4000
    assert first["model"] == "big-model" and first["authorization"] == "present"
    assert API_KEY not in written(project) + result.stdout + result.stderr


def test_a_wrong_number_is_fixed_and_then_verified(project):
    with StubOpenAI(by_marker={SPECIALIST: [reply(WRONG), reply(GOOD)], EVALUATOR: [APPROVE]},
                    when_empty="error") as stub:
        result = scan(project, stub)
        fix_request = [r for r in stub.chat_requests if r["marker"] == SPECIALIST][1]
    assert (project / "out" / "report.md").read_text() == GOOD, result.stderr
    rounds = audit(project)["rounds"]
    assert [r["step"] for r in rounds] == ["write", "evaluate", "fix", "evaluate", "finalize"]
    assert rounds[1]["verification"]["passed"] is False and rounds[3]["verification"]["passed"] is True
    prompt = json.dumps(fix_request["body"]["messages"])
    assert "items.sku.not_null" in prompt and "7" in prompt


def test_a_report_that_never_verifies_is_replaced_by_the_deterministic_one_with_a_banner(project):
    with StubOpenAI(by_marker={SPECIALIST: [reply(WRONG)], EVALUATOR: [APPROVE]}) as stub:  # repeats WRONG
        result = scan(project, stub)
    report = (project / "out" / "report.md").read_text()
    assert report.startswith("# Data-quality report\n\n> **Unverified LLM draft not delivered")
    assert "| `items.sku.not_null` | FAIL | 2 | 10 | 20.00% |" in report
    assert (project / "out" / "report.unverified.md").read_text() == WRONG
    assert audit(project)["outcome"] == "fallback" and "NOT verified" in result.stderr


@pytest.mark.parametrize("failure", [error(500, "upstream exploded"), drop(), slow(5, then=reply(GOOD)),
                                     error(429, "slow down")], ids=["500", "dropped", "timeout", "429"])
def test_endpoint_errors_are_retried_then_succeed(project, failure):
    with StubOpenAI(by_marker={SPECIALIST: [failure, reply(GOOD)], EVALUATOR: [APPROVE]}, when_empty="error") as stub:
        scan(project, stub)
        attempts = len([r for r in stub.chat_requests if r["marker"] == SPECIALIST])
    assert audit(project)["outcome"] == "verified" and attempts == 2


def test_an_endpoint_that_stays_down_falls_back_and_says_so(project):
    with StubOpenAI(by_marker={SPECIALIST: [error(503, "overloaded")], EVALUATOR: [APPROVE]}) as stub:
        result = scan(project, stub)
        attempts = len(stub.chat_requests)
    assert attempts == 3  # max_attempts
    assert audit(project)["outcome"] == "fallback" and "model endpoint failed" in audit(project)["fallback_reason"]
    report = (project / "out" / "report.md").read_text()
    assert "Unverified LLM draft not delivered: the model endpoint failed" in report
    assert "NOT verified" in result.stderr and result.returncode == 1


def test_authentication_errors_are_not_retried(project):
    with StubOpenAI(by_marker={SPECIALIST: [error(401, "invalid api key")]}) as stub:
        scan(project, stub)
        assert len(stub.chat_requests) == 1
    assert audit(project)["outcome"] == "fallback"


def test_llm_without_an_endpoint_exits_3_and_still_writes_the_findings(project):
    result = scan(project, None)
    assert result.returncode == 3
    assert result.stderr.startswith("error: --llm needs a model endpoint")
    assert (project / "out" / "findings.json").is_file() and (project / "out" / "report.md").is_file()


def test_a_run_killed_mid_loop_resumes_without_repeating_finished_calls(project):
    with StubOpenAI(by_marker={SPECIALIST: [reply(WRONG), slow(60, then=reply(GOOD))], EVALUATOR: [APPROVE]},
                    when_empty="error") as stub:
        process = scan(project, stub, wait=False)
        deadline = time.monotonic() + 60
        while len([r for r in stub.chat_requests if r["marker"] == SPECIALIST]) < 2:
            assert time.monotonic() < deadline and process.poll() is None, (
                process.stderr.read() if process.poll() else "")
            time.sleep(0.1)
        process.send_signal(signal.SIGKILL)  # killed while the fix call is in flight
        process.wait(timeout=10)
    run_id = json.loads((project / "out" / "findings.json").read_text())["run_id"]
    assert not (project / "out" / "audit.json").exists()

    with StubOpenAI(by_marker={SPECIALIST: [reply(GOOD)], EVALUATOR: [APPROVE]}, when_empty="error") as stub:
        env = {**os.environ, "OPENAI_BASE_URL": stub.base_url, "OPENAI_API_KEY": API_KEY}
        resumed = subprocess.run([sys.executable, "-m", "watchdog", "resume", run_id, "--config",
                                  str(project / "watchdog.yaml")], env=env, cwd=project, capture_output=True,
                                 text=True, timeout=120)
        markers = [r["marker"] for r in stub.chat_requests]
    assert resumed.returncode == 1, resumed.stderr  # the findings' exit code, as the scan's
    assert markers == [SPECIALIST]  # only the unfinished fix: no re-scan, no second draft, no second review
    assert (project / "out" / "report.md").read_text() == GOOD
    assert [r["step"] for r in audit(project)["rounds"]] == ["write", "evaluate", "fix", "evaluate", "finalize"]
    filed = json.loads((project / "out" / "audit.json").read_text())  # filed as a scan that was not killed is
    assert (filed["run_id"], filed["audit"], filed["status"]) == (run_id, None, "failed")

    trail = subprocess.run([sys.executable, "-m", "watchdog", "trail", run_id, "--config",
                            str(project / "watchdog.yaml")], cwd=project, capture_output=True, text=True, timeout=60)
    assert trail.returncode == 0 and "write" in trail.stdout and "finalize" in trail.stdout
