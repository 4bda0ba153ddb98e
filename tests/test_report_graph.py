"""The report graph's nodes, routers and loop, with in-process fake models (no endpoint)."""

from __future__ import annotations

import sqlite3
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx
import openai
import pytest
from langgraph.checkpoint.sqlite import SqliteSaver

from tests.fake_models import ScriptedChat, ai
from watchdog.graph.graph import build_report_graph
from watchdog.graph.models import Models
from watchdog.graph.nodes import route_after_evaluate
from watchdog.settings import LLMConfig

FINDINGS = {
    "schema_version": 1, "database": "sqlite:///x.db", "started_at": "2026-11-29T06:00:00Z", "duration_s": 0.1,
    "summary": {"checks": 2, "passed": 1, "warned": 0, "failed": 1, "errors": 0},
    "findings": [
        {"name": "contacts.email.not_null", "check": "not_null", "table": "contacts", "column": "email",
         "status": "fail", "severity": "fail", "failing": 37, "total": 2000, "rate": 0.0185},
        {"name": "contacts.id.unique", "check": "unique", "table": "contacts", "column": "id",
         "status": "pass", "severity": "fail", "failing": 0, "total": 2000, "rate": 0.0},
    ],
}
GOOD = "# Data-quality report\n\n`contacts.email.not_null` FAIL: 37 of 2,000 rows.\n"
WRONG = "# Data-quality report\n\n`contacts.email.not_null` FAIL: 73 of 2,000 rows.\n"


@dataclass
class StubVerification:
    bad: list[dict[str, Any]] = field(default_factory=list)

    def to_json_dict(self) -> dict[str, Any]:
        return {"passed": not self.bad, "ok": [], "bad": self.bad}


def stub_verify(report: str, findings: Any) -> StubVerification:
    """Passes when the report says 37 (the true count) and not 73."""
    if "73" in report or "37" not in report:
        return StubVerification([{"finding": "contacts.email.not_null", "says": "73", "actual": "37",
                                  "message": "The report says 73 failing rows for contacts.email.not_null; it is 37."}])
    return StubVerification()


def run(models: Models, config: LLMConfig | None = None, checkpointer: Any = None, thread: str = "t1",
        tools: list | None = None) -> dict[str, Any]:
    config = config or LLMConfig(retry_wait_max_s=0)
    graph = build_report_graph(models, stub_verify, checkpointer, config=config, tools=tools)
    initial = {"run_id": thread, "findings": FINDINGS, "out_dir": "/tmp", "fix_round": 0, "replans": 0,
               "trail": [], "tokens": {}}
    return graph.invoke(initial, {"configurable": {"thread_id": thread}, "recursion_limit": 40})


def models(specialist: list[Any], reviews: list[Any] = ({"confidence": 0.9, "issues": []},),
           planner: list[Any] = ()) -> Models:
    return Models(planner=ScriptedChat(list(planner)), specialist=ScriptedChat(specialist),
                  evaluator=ScriptedChat([], reviews=list(reviews)))


def steps(state: dict[str, Any]) -> list[str]:
    return [entry["step"] for entry in state["trail"]]


def test_a_correct_first_draft_is_finalized_after_one_review():
    state = run(models([GOOD]))
    assert state["outcome"] == "verified" and state["final_report"] == GOOD
    assert steps(state) == ["write", "evaluate", "finalize"]
    assert state["review"]["confidence"] == 0.9 and state["review"]["passed"] is True
    assert state["tokens"]["specialist"] == {"input": 10, "output": 5, "calls": 1}
    assert state["tokens"]["evaluator"] == {"input": 7, "output": 3, "calls": 1}


def test_a_wrong_number_is_flagged_fixed_and_passes():
    m = models([WRONG, GOOD])
    state = run(m)
    assert steps(state) == ["write", "evaluate", "fix", "evaluate", "finalize"]
    fix_prompt = m.specialist.calls[1][1].content
    assert "it is 37" in fix_prompt and WRONG.strip() in fix_prompt
    assert state["outcome"] == "verified" and state["fix_round"] == 1
    assert len(m.evaluator.calls) == 1  # the LLM review runs on the first round only


def test_review_issues_get_exactly_one_fix_round():
    m = models([GOOD, GOOD], reviews=[{"confidence": 0.2, "issues": ["Causes are vague."]}])
    state = run(m)
    assert steps(state) == ["write", "evaluate", "fix", "evaluate", "finalize"]
    assert "Reviewer: Causes are vague." in m.specialist.calls[1][1].content


def test_never_converging_replans_once_then_falls_back():
    config = LLMConfig(max_fix_rounds=2, max_replans=1, retry_wait_max_s=0)
    wrongs = [WRONG.replace("73", str(n)) for n in (73, 74, 75, 76, 77, 78)]  # wrong, and never the same twice
    state = run(models(wrongs), config)
    assert steps(state) == ["write", "evaluate", "fix", "evaluate", "fix", "evaluate", "replan", "write", "evaluate",
                            "fix", "evaluate", "fix", "evaluate", "fallback"]
    assert state["outcome"] == "fallback" and "failed verification" in state["fallback_reason"]
    assert state["draft"] == wrongs[-1] and state["replans"] == 1


def test_a_fix_that_repeats_the_previous_answer_ends_the_loop_at_once():
    config = LLMConfig(max_fix_rounds=3, max_replans=1, retry_wait_max_s=0)
    m = models([WRONG, WRONG, GOOD])
    state = run(m, config)
    assert steps(state) == ["write", "evaluate", "fix", "fallback"]
    assert state["fallback_reason"].startswith("the model repeated itself")
    assert len(m.specialist.calls) == 2  # no third round, no re-plan


def test_the_planner_outlines_before_writing_when_enabled():
    m = models([GOOD], planner=["- lead with the missing emails"])
    state = run(m, LLMConfig(use_planner=True, retry_wait_max_s=0))
    assert steps(state)[:2] == ["plan", "write"]
    assert "lead with the missing emails" in m.specialist.calls[0][1].content


def transient() -> Exception:
    return openai.APIConnectionError(request=httpx.Request("POST", "http://127.0.0.1/v1/chat/completions"))


def test_transient_endpoint_errors_are_retried():
    m = models([transient(), transient(), GOOD])
    state = run(m, LLMConfig(max_attempts=3, retry_wait_max_s=0))
    assert state["outcome"] == "verified" and len(m.specialist.calls) == 3


def test_an_endpoint_that_stays_down_falls_back_and_says_so():
    m = models([transient()] * 3)
    state = run(m, LLMConfig(max_attempts=3, retry_wait_max_s=0))
    assert state["outcome"] == "fallback" and len(m.specialist.calls) == 3
    assert "model endpoint failed" in state["fallback_reason"] and "3 attempt(s)" in state["fallback_reason"]


def test_authentication_errors_are_not_retried():
    request = httpx.Request("POST", "http://127.0.0.1/v1/chat/completions")
    denied = openai.AuthenticationError("bad key", response=httpx.Response(401, request=request), body=None)
    m = models([denied, GOOD])
    state = run(m, LLMConfig(max_attempts=4, retry_wait_max_s=0))
    assert state["outcome"] == "fallback" and len(m.specialist.calls) == 1


def test_the_specialist_tool_loop_is_bounded_by_its_own_budget():
    calling = [ai("", tool_calls=[{"name": "query_database", "args": {"sql": "SELECT 1"}, "id": f"c{i}"}])
               for i in range(10)]
    m = models([*calling[:3], GOOD])  # keeps calling tools; then the fix writes the report
    from langchain_core.tools import StructuredTool

    seen: list[str] = []

    def query_database(sql: str) -> str:
        """Run a query."""
        seen.append(sql)
        return '{"rows": [[1]]}'

    tool = StructuredTool.from_function(query_database)
    state = run(m, LLMConfig(tool_budget=2, retry_wait_max_s=0), tools=[tool])
    assert len(seen) == 2  # the budget: then the model is asked to write without tools
    assert state["trail"][0]["tool_calls"] == 2
    # 3 loop calls (2 with tools, the last without, its tool calls dropped), then the empty draft is fixed
    assert steps(state) == ["write", "evaluate", "fix", "evaluate", "finalize"]
    assert len(m.specialist.calls) == 4 and state["outcome"] == "verified"


class Killed(BaseException):
    """Stands for the process being killed in the middle of a model call."""


def test_a_run_killed_mid_loop_resumes_from_its_checkpoint(tmp_path: Path):
    conn = sqlite3.connect(tmp_path / "cp.sqlite", check_same_thread=False)
    saver = SqliteSaver(conn)
    first = models([WRONG, Killed()])
    with pytest.raises(Killed):
        run(first, checkpointer=saver, thread="run-1")
    second = models([GOOD], reviews=[])
    graph = build_report_graph(second, stub_verify, saver, config=LLMConfig(retry_wait_max_s=0))
    state = graph.invoke(None, {"configurable": {"thread_id": "run-1"}, "recursion_limit": 40})
    assert state["outcome"] == "verified"
    assert steps(state) == ["write", "evaluate", "fix", "evaluate", "finalize"]
    assert len(second.specialist.calls) == 1  # only the fix: the finished write was not repeated
    assert second.evaluator.calls == []  # nor the finished review


@pytest.mark.parametrize("draft, ok", [("", False), ("Error code: 500 - internal error", False),
                                       ("I'm sorry, I can't help with that.", False), (GOOD, True)])
def test_error_text_or_empty_answers_are_not_reports(draft, ok):
    from watchdog.verify import verify_fn

    not_a_report = [b for b in verify_fn(draft, FINDINGS).bad if b.actual == "no report"]
    assert (not not_a_report) is ok


def test_routers_return_named_steps():
    config = LLMConfig(max_fix_rounds=1, max_replans=0)

    def route(state):
        return route_after_evaluate(state, config)

    assert route({"verification": {"passed": True}}) == "finalize"
    assert route({"verification": {"passed": False}, "fix_round": 0}) == "fix"
    assert route({"verification": {"passed": False}, "fix_round": 1}) == "fallback"
    assert route({"verification": {"passed": True}, "review_pending": True, "fix_round": 1}) == "finalize"
    assert route({"llm_error": "down"}) == "fallback"


def test_nodes_are_plain_functions_of_the_state_and_their_dependencies():
    from watchdog.graph import nodes
    from watchdog.graph.review import evaluate

    deps = nodes.GraphDeps(models=models(["## Details\n\n`contacts.email.not_null` FAIL: 37 of 2,000 rows.\n"]),
                           verify_fn=stub_verify, config=LLMConfig(retry_wait_max_s=0, review="off"), tools=[])
    state = {"findings": FINDINGS, "draft": WRONG, "fix_round": 0, "replans": 0}
    checked = evaluate(state, deps)
    assert checked["verification"]["passed"] is False and checked["issues"][0].endswith("it is 37.")
    assert "review" not in checked  # llm.review: off
    fixed = nodes.fix({**state, **checked}, deps)
    assert fixed["fix_round"] == 1 and "37 of 2,000" in fixed["draft"] and fixed["tokens"]["specialist"]["calls"] == 1
    assert nodes.route_after_evaluate({**state, **checked}, LLMConfig(max_fix_rounds=0, max_replans=0)) == "fallback"


def test_the_graph_takes_only_its_inputs():
    from watchdog.graph.graph import build_report_graph
    from watchdog.graph.models import placeholder_models

    graph = build_report_graph(placeholder_models(), stub_verify)
    assert set(graph.get_input_jsonschema()["properties"]) == {"run_id", "findings", "out_dir", "trends"}


def test_a_fix_that_turns_an_issue_into_a_heading_is_sent_back():
    from watchdog.graph import nodes
    from watchdog.graph.review import evaluate

    deps = nodes.GraphDeps(models=models([]), verify_fn=stub_verify, config=LLMConfig(review="off"), tools=[])
    issue = "No checks mentioned in customers.age.range, which failed: 5 failing of 2,000 rows."
    draft = GOOD + "\n### No checks mentioned in customers.age.range, which failed: 5 failing\n"
    checked = evaluate({"findings": FINDINGS, "draft": draft, "fix_round": 1, "issues": [issue]}, deps)
    assert any(m.startswith("The heading 'No checks mentioned in customers.age.range") for m in checked["issues"])
    clean = evaluate({"findings": FINDINGS, "draft": GOOD, "fix_round": 1, "issues": [issue]}, deps)
    assert not [m for m in clean["issues"] if m.startswith("The heading")]
