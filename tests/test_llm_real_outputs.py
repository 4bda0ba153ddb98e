"""Real model output, recorded (tests/fixtures/llm_real), replayed through the real-HTTP stub: what small local
models actually answer must never be delivered as a verified report, and the issues sent back must be true."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from watchdog.findings import FindingsDoc
from watchdog.graph.runner import run_llm_report
from watchdog.settings import LLMConfig, Settings
from watchdog.testing.openai_stub import StubOpenAI, reply

FIXTURES = Path(__file__).parent / "fixtures" / "llm_real"
SPECIALIST = "[role:specialist]"


def replay(tmp_path: Path, name: str, monkeypatch: pytest.MonkeyPatch, **llm: object):
    recorded = json.loads((FIXTURES / name).read_text())
    doc = FindingsDoc.validate(recorded["findings"])
    script = [reply(c["answer"], finish_reason=c["finish_reason"] or "stop") for c in recorded["calls"]]
    with StubOpenAI(by_marker={SPECIALIST: script}, when_empty="error") as stub:
        monkeypatch.setenv("OPENAI_BASE_URL", stub.base_url)
        monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
        config = LLMConfig(max_fix_rounds=len(script) - 1, max_replans=0, retry_wait_max_s=0, tool_budget=0, **llm)
        settings = Settings(root=tmp_path, state_dir=str(tmp_path / "state"), llm=config)
        outcome = run_llm_report(doc, tmp_path, settings=settings, run_id=name)
        return outcome, stub.chat_requests


def issues_of(outcome) -> list[list[str]]:
    return [[b["message"] for b in r["verification"]["bad"]] for r in outcome.rounds if r["step"] == "evaluate"]


def test_qwen_05b_program_mode_echo_repetition_and_cut_are_never_verified(tmp_path, monkeypatch):
    # the 0.5B model copied the instructions into the summary, repeated one priority until the 1,500-token cap
    # (finish_reason "length"), then answered the fixes with empty parts and an echo of the issue it was sent
    outcome, requests = replay(tmp_path, "qwen0.5b_demo_program.json", monkeypatch, table="program", review="off")
    assert outcome.outcome == "fallback" and outcome.final_report is None
    first, second, third = issues_of(outcome)
    assert any("cut off by the output token cap" in m for m in first)
    assert "The JSON answer is incomplete: it ends before the object closes." in first
    assert not any("never mentions" in m for m in first)  # no prose to check: no false items about it
    assert "The summary is missing." in second
    assert any("repeats the instructions given to the model" in m for m in third)  # the echo, said so
    assert len([m for m in third if "has no likely causes" in m]) == 10  # every problem check, none invented
    sent = requests[1]["body"]["messages"][-1]["content"]
    assert "cut off by the output token cap" in sent
    # each fix round asks by name for what is missing, with a schema that requires exactly those parts
    schema = requests[2]["body"]["response_format"]["json_schema"]["schema"]
    missing = [m.split("`")[1] for m in second if "has no likely causes" in m]
    assert schema["properties"]["checks"]["required"] == missing and len(missing) == 10
    assert all(f"- `{name}`: causes and fixes missing." in requests[2]["body"]["messages"][-1]["content"]
               for name in missing)


def test_qwen_05b_model_mode_table_of_zeros_is_caught_row_by_row(tmp_path, monkeypatch):
    # the 0.5B model's whole report: every check "pass", every row "0 | 200 | 0.0", causes copied per column
    recorded = json.loads((FIXTURES / "qwen0.5b_demo_model.json").read_text())
    from watchdog.verify import verify_fn

    bad = verify_fn(recorded["calls"][0]["answer"], recorded["findings"]).bad
    called_passing = {b.finding for b in bad if "passing" in b.message}
    failing = {f["name"] for f in recorded["findings"]["findings"] if f["status"] == "fail"}
    assert failing and failing <= called_passing  # every failing check called passing is caught
    outcome, requests = replay(tmp_path, "qwen0.5b_demo_model.json", monkeypatch, table="model", review="off")
    assert outcome.outcome == "fallback" and outcome.draft == recorded["calls"][0]["answer"]
    assert len(requests) == 1  # one recorded answer, no fix round configured


def test_qwen_05b_program_mode_one_cause_copied_to_every_check_is_sent_back(tmp_path, monkeypatch):
    # measured run (bench/llm_real.py, 0.5B, demo, program mode): delivered as verified before lines copied to
    # every check counted as missing; the same cause for all 10 checks is now an issue for each, with a fix round
    outcome, requests = replay(tmp_path, "qwen0.5b_demo_program_copied.json", monkeypatch, table="program",
                               review="off")
    assert outcome.outcome == "fallback" and len(requests) == 1
    (first,) = issues_of(outcome)
    copied = [m for m in first if "has no likely causes of its own: the same line is given for 10 checks" in m]
    assert len(copied) == 10
    assert not [m for m in first if "never mentions" in m or "The report says" in m]  # the program's numbers


def test_qwen_05b_program_mode_invented_check_on_an_all_passing_audit_is_sent_back(tmp_path, monkeypatch):
    # measured run (bench/llm_real.py, 0.5B, Chinook, program mode): every one of the 77 checks passed, and the
    # model wrote causes and fixes for `Customer.CustomerId.foreign_key` (no such check) with a summary about a
    # missing foreign key; it was delivered as verified. Entries for non-problem checks now send the summary and
    # priorities back, and are never rendered.
    outcome, requests = replay(tmp_path, "qwen0.5b_chinook_program_invented.json", monkeypatch, table="program",
                               review="off")
    assert outcome.outcome == "fallback" and outcome.final_report is None and len(requests) == 1
    (first,) = issues_of(outcome)
    assert any("`Customer.CustomerId.foreign_key`, which is not among the checks that failed, warned or errored" in m
               for m in first)
    assert not [m for m in first if "has no likely causes" in m]  # no problem check: nothing else to ask for


def test_program_mode_schema_allows_no_check_entries_when_every_check_passed():
    from watchdog.graph.asks import missing_prose
    from watchdog.graph.compose import Prose, prose_schema

    schema = prose_schema([])["json_schema"]["schema"]
    assert "checks" not in schema["properties"] and schema["required"] == ["summary", "priorities"]
    prose = Prose.model_validate({"summary": "All 77 checks passed on this run; nothing needs attention.",
                                  "priorities": [], "checks": []})
    assert missing_prose(prose, []) == []
    prose.checks = Prose.model_validate({"checks": [{"name": "a.b.unique", "causes": ["x"], "fixes": ["y"]}]}).checks
    parts = [part for part, _ in missing_prose(prose, ["c.d.not_null"])]
    assert parts == ["checks.c.d.not_null", "checks.c.d.not_null", "summary"]
