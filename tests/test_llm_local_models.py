"""The LLM report as local models meet it, through real HTTP (the scripted OpenAI-compatible stub on 127.0.0.1):
streamed calls cut on idleness rather than total time, every attempt's tokens, the shared findings block first,
``llm.review`` off/advisory/gate, cut drafts and cut reviews, and ``llm.table: program``."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

import pytest

from tests.test_llm_report_e2e import APPROVE, EVALUATOR, GOOD, SPECIALIST
from watchdog.graph.models import clean_error
from watchdog.run.scan_run import run_scan
from watchdog.settings import load_settings
from watchdog.testing.openai_stub import StubOpenAI, reply, structured

DETAILS_WRONG = GOOD.replace("2 of 10 items (20%)", "7 of 10 items (70%)")
PROSE = {"summary": "One check failed: some items have no SKU, so they cannot be shipped.",
         "priorities": ["Backfill the missing SKUs before the next import."],
         "checks": [{"name": "items.sku.not_null",
                     "causes": ["The import job creates items before SKUs are assigned."],
                     "fixes": ["Backfill SKUs from the supplier feed.", "Make items.sku NOT NULL."]}]}


def config(tmp_path: Path, **llm: object) -> Path:
    lines = ["state_dir: state", "llm:", "  models: {planner: small, specialist: big, evaluator: small}",
             "  max_fix_rounds: 2", "  max_replans: 0", "  max_attempts: 2", "  retry_wait_max_s: 0",
             "  request_timeout_s: 5", "  idle_timeout_s: 1", "  tool_budget: 0"]
    lines += [f"  {k}: {v}" for k, v in llm.items()]
    path = tmp_path / "watchdog.yaml"
    path.write_text("\n".join(lines) + "\n")
    return path


@pytest.fixture
def shop(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    with sqlite3.connect(tmp_path / "shop.db") as conn:
        conn.execute("CREATE TABLE items (id INTEGER PRIMARY KEY, sku TEXT)")
        conn.executemany("INSERT INTO items VALUES (?, ?)",
                         [(i, None if i in (4, 8) else f"S{i}") for i in range(1, 11)])
    (tmp_path / "suite.yaml").write_text("tables:\n  items:\n    - not_null: sku\n    - unique: id\n")
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
    return tmp_path


def run(shop: Path, stub: StubOpenAI, **llm: object) -> tuple[str, dict]:
    import os

    os.environ["OPENAI_BASE_URL"] = stub.base_url
    try:
        settings = load_settings(config(shop, **llm))
        run_scan(f"sqlite:///{shop / 'shop.db'}", [shop / "suite.yaml"], out_dir=shop / "out", llm=True,
                 settings=settings)
    finally:
        del os.environ["OPENAI_BASE_URL"]
    meta = json.loads((shop / "out" / "audit.json").read_text())
    return (shop / "out" / "report.md").read_text(), meta["llm"]


def by_role(stub: StubOpenAI, marker: str) -> list[dict]:
    return [r for r in stub.chat_requests if r["marker"] == marker]


def test_a_slow_but_steady_stream_is_not_cut_however_long_it_takes(shop):
    # ~60 pieces 0.05 s apart: 3 s in all, three times the idle timeout, never 1 s without a token
    with StubOpenAI(by_marker={SPECIALIST: [reply(GOOD, piece_delay_s=0.05)], EVALUATOR: [APPROVE]},
                    when_empty="error") as stub:
        report, audit = run(shop, stub)
        assert all(r["body"].get("stream") is True for r in stub.chat_requests)
    assert audit["outcome"] == "verified" and report == GOOD
    write = audit["rounds"][0]
    assert write["step"] == "write" and write["finish_reason"] == "stop"


def test_a_stream_that_stalls_is_cut_retried_and_both_attempts_are_counted(shop):
    stalled = reply(GOOD, pause_after=5, pause_s=30)
    with StubOpenAI(by_marker={SPECIALIST: [stalled, reply(GOOD, usage=(900, 300))], EVALUATOR: [APPROVE]},
                    when_empty="error") as stub:
        report, audit = run(shop, stub)
        assert len(by_role(stub, SPECIALIST)) == 2
    assert audit["outcome"] == "verified" and report == GOOD
    spent = audit["tokens"]["specialist"]
    assert spent["calls"] == 2 and spent["failed_calls"] == 1
    assert spent["output"] == 300 + 5 and spent["input"] > 900  # the cut attempt's 5 pieces and its prompt, estimated


def test_a_stream_that_always_stalls_falls_back_naming_the_setting_to_raise(shop):
    with StubOpenAI(by_marker={SPECIALIST: [reply(GOOD, pause_after=3, pause_s=30)], EVALUATOR: [APPROVE]}) as stub:
        report, audit = run(shop, stub)
    assert audit["outcome"] == "fallback"
    assert "no token for 1 s after 3 token(s) (raise llm.idle_timeout_s)" in audit["fallback_reason"]
    assert "raise llm.idle_timeout_s" in report.split("\n")[2]  # the banner
    assert audit["tokens"]["specialist"]["failed_calls"] == 2 and audit["tokens"]["specialist"]["output"] == 6


def test_every_call_starts_with_the_same_findings_block(shop):
    with StubOpenAI(by_marker={SPECIALIST: [reply(DETAILS_WRONG), reply(GOOD)], EVALUATOR: [APPROVE]},
                    when_empty="error") as stub:
        run(shop, stub)
        firsts = {json.dumps(r["body"]["messages"][0]) for r in stub.chat_requests}
        roles = [r["marker"] for r in stub.chat_requests]
    assert roles == [SPECIALIST, EVALUATOR, SPECIALIST] and len(firsts) == 1
    first = json.loads(firsts.pop())
    assert first["role"] == "system" and "<data>" in first["content"] and "items.sku.not_null" in first["content"]


def test_a_fix_round_sends_and_replaces_only_the_flagged_section(shop):
    fixed_section = ("### `items.sku.not_null`\n\n2 of 10 items (20%) have no SKU. Likely cause: the import job. "
                     "Suggested fix: backfill the SKUs.\n")
    with StubOpenAI(by_marker={SPECIALIST: [reply(DETAILS_WRONG), reply(fixed_section)], EVALUATOR: [APPROVE]},
                    when_empty="error") as stub:
        report, audit = run(shop, stub)
        fix_prompt = by_role(stub, SPECIALIST)[1]["body"]["messages"][-1]["content"]
    assert "7 of 10 items (70%)" in fix_prompt and "| `items.id.unique` |" not in fix_prompt  # the table is not sent
    assert audit["outcome"] == "verified"
    assert report.startswith(GOOD.split("### ")[0]) and report.endswith(fixed_section)
    assert audit["rounds"][2]["sections"] == 1


def test_a_report_in_a_code_fence_is_unwrapped(shop):
    fenced = "```markdown\n" + GOOD + "```\n"
    with StubOpenAI(by_marker={SPECIALIST: [reply(fenced)], EVALUATOR: [APPROVE]}, when_empty="error") as stub:
        report, audit = run(shop, stub)
    assert audit["outcome"] == "verified" and report == GOOD


def test_a_draft_cut_by_the_token_cap_is_never_delivered_as_verified(shop):
    cut = GOOD.split("## Details")[0] + "## Details\n\n### `items.sku.not_null`\n\n- **Status**:"
    with StubOpenAI(by_marker={SPECIALIST: [reply(cut, finish_reason="length")], EVALUATOR: [APPROVE]}) as stub:
        report, audit = run(shop, stub)
        fix_prompt = by_role(stub, SPECIALIST)[1]["body"]["messages"][-1]["content"]
    assert audit["outcome"] == "fallback" and "Unverified LLM draft not delivered" in report
    assert "cut off by the output token cap" in fix_prompt and "llm.max_output_tokens.specialist" in fix_prompt


def test_a_review_cut_by_the_token_cap_is_not_an_endpoint_failure(shop):
    cut_review = reply('{"confidence": 0.9, "issues": ["The summary could name', finish_reason="length")
    with StubOpenAI(by_marker={SPECIALIST: [reply(GOOD)], EVALUATOR: [cut_review]}, when_empty="error") as stub:
        report, audit = run(shop, stub)
    assert audit["outcome"] == "verified" and report == GOOD
    assert audit["review"]["available"] is False and "llm.max_output_tokens.evaluator" in audit["review"]["error"]
    assert "endpoint failed" not in json.dumps(audit)


@pytest.mark.parametrize("mode, evaluator_calls, specialist_calls", [("off", 0, 1), ("advisory", 1, 1),
                                                                     ("gate", 1, 2)])
def test_llm_review_off_advisory_gate(shop, mode, evaluator_calls, specialist_calls):
    doubtful = structured({"confidence": 0.95, "issues": ["Causes are vague."]})
    with StubOpenAI(by_marker={SPECIALIST: [reply(GOOD)], EVALUATOR: [doubtful]}) as stub:
        _, audit = run(shop, stub, review=mode)
        assert len(by_role(stub, EVALUATOR)) == evaluator_calls
        assert len(by_role(stub, SPECIALIST)) == specialist_calls
    assert audit["outcome"] == "verified"
    if mode != "off":  # issues listed: not passed, whatever the confidence says
        assert audit["review"]["passed"] is False and audit["review"]["mode"] == mode


def test_program_mode_renders_the_numbers_and_the_model_writes_causes_and_fixes(shop):
    with StubOpenAI(by_marker={SPECIALIST: [structured(PROSE)], EVALUATOR: [APPROVE]}, when_empty="error") as stub:
        report, audit = run(shop, stub, table="program")
        asked = by_role(stub, SPECIALIST)[0]["body"]
    schema = asked["response_format"]["json_schema"]["schema"]
    assert schema["properties"]["checks"]["required"] == ["items.sku.not_null"]  # the one name, required
    assert list(schema["properties"]["checks"]["properties"]) == ["items.sku.not_null"]
    assert audit["outcome"] == "verified" and audit["fix_rounds"] == 0
    assert "| `items.sku.not_null` | FAIL | 2 | 10 | 20.00% |" in report  # the program's table
    assert "## Summary\n\nOne check failed" in report and "1. Backfill the missing SKUs" in report
    section = report.split("### `items.sku.not_null` (FAIL)")[1]
    assert "Failing rows: 2 of 10 (20.00%)" in section
    assert "**Likely causes**\n\n- The import job creates items" in section
    assert "**Suggested fixes**\n\n- Backfill SKUs from the supplier feed.\n- Make items.sku NOT NULL." in section


def test_program_mode_fixes_only_the_flagged_part(shop):
    wrong = {**PROSE, "summary": "7 items have a null sku, so they cannot be shipped."}
    fixed = {"summary": "Two items have no SKU, so they cannot be shipped.", "checks": []}
    with StubOpenAI(by_marker={SPECIALIST: [structured(wrong), structured(fixed)], EVALUATOR: [APPROVE]},
                    when_empty="error") as stub:
        report, audit = run(shop, stub, table="program")
        fix = by_role(stub, SPECIALIST)[1]["body"]
    sent = fix["messages"][-1]["content"]
    assert '"summary": The report says' in sent and "supplier feed" not in sent  # the summary only, and why
    assert fix["response_format"]["json_schema"]["schema"]["required"] == ["summary"]
    assert audit["outcome"] == "verified" and audit["rounds"][2]["parts"] == ["summary"]
    assert "Two items have no SKU" in report and "Backfill SKUs from the supplier feed." in report


def test_program_mode_asks_again_for_missing_causes_and_fixes(shop):
    bare = {**PROSE, "checks": []}
    with StubOpenAI(by_marker={SPECIALIST: [structured(bare), structured({"checks": PROSE["checks"]})],
                               EVALUATOR: [APPROVE]}, when_empty="error") as stub:
        report, audit = run(shop, stub, table="program")
        sent = by_role(stub, SPECIALIST)[1]["body"]["messages"][-1]["content"]
    assert "- `items.sku.not_null`: causes and fixes missing." in sent
    assert audit["outcome"] == "verified" and "**Likely causes**" in report


def test_client_dumps_never_reach_a_message():
    exc = ValueError("Could not parse response content as the length limit was reached - "
                     "CompletionUsage(completion_tokens=1000, prompt_tokens=5225, total_tokens=6225, "
                     "completion_tokens_details=CompletionTokensDetails(reasoning_tokens=0))")
    assert clean_error(exc) == "Could not parse response content as the length limit was reached"
