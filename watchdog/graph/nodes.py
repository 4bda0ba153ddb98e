"""The report graph's nodes and routers. Nodes are made by :func:`make_nodes` from their dependencies.

plan → write → evaluate ⇄ fix → finalize | (replan → plan/write) | fallback
"""

from __future__ import annotations

import re
import time
import warnings
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any, Literal

from langchain_core.messages import HumanMessage, SystemMessage
from langchain_core.tools import BaseTool
from pydantic import BaseModel, Field

from watchdog.graph import prompts
from watchdog.graph.models import Call, LLMUnavailable, Models, invoke
from watchdog.graph.state import ReportState
from watchdog.graph.tools import build_tool_loop, loop_recursion_limit
from watchdog.settings import LLMConfig


class Review(BaseModel):
    """The evaluator's structured verdict (first round only)."""

    confidence: float = Field(ge=0, le=1, description="0-1: how sure you are the report is correct and useful")
    issues: list[str] = Field(default_factory=list, description="concrete problems to fix; empty if none")


VerifyFn = Callable[[str, Any], Any]


@dataclass
class GraphDeps:
    models: Models
    verify_fn: VerifyFn
    config: LLMConfig
    tools: list[BaseTool]


def _now() -> str:
    return datetime.now(UTC).isoformat(timespec="seconds").replace("+00:00", "Z")


def _entry(step: str, state: ReportState, **fields: Any) -> dict[str, Any]:
    return {"step": step, "at": _now(), "fix_round": state.get("fix_round", 0), "replans": state.get("replans", 0),
            **fields}


_HEADING = re.compile(r"^\s{0,3}#{1,6}\s+\S", re.M)


def draft_problems(draft: str | None) -> list[str]:
    """Structural problems that make a draft not a report at all (error text, empty answers)."""
    if not draft or not draft.strip():
        return ["The draft is empty: write the complete report."]
    if not _HEADING.search(draft):
        return ["The draft is not a report: it has no Markdown heading. Write the report with the required "
                "structure (title, summary, findings table, details)."]
    return []


def make_nodes(deps: GraphDeps) -> dict[str, Callable[[ReportState], dict[str, Any]]]:
    cfg = deps.config

    def call(runnable: Any, messages: list[Any]) -> Call:
        return invoke(runnable, messages, attempts=cfg.max_attempts, max_wait_s=cfg.retry_wait_max_s)

    def plan(state: ReportState) -> dict[str, Any]:
        messages = [SystemMessage(prompts.PLANNER_SYSTEM),
                    HumanMessage(prompts.planner_request(state["findings"], state.get("failure_context")))]
        try:
            result = call(deps.models.planner, messages)
        except LLMUnavailable as exc:
            return {"llm_error": str(exc), "trail": [_entry("plan", state, error=str(exc))]}
        outline = str(result.message.content or "")
        return {"outline": outline, "tokens": {"planner": result.usage},
                "trail": [_entry("plan", state, outline=outline, tokens={"planner": result.usage},
                                 latency_s=round(result.latency_s, 3))]}

    def write(state: ReportState) -> dict[str, Any]:
        loop = build_tool_loop(deps.models.specialist, deps.tools, cfg.tool_budget, call)
        messages = [SystemMessage(prompts.SPECIALIST_SYSTEM),
                    HumanMessage(prompts.writer_request(state["findings"], state.get("outline"),
                                                        state.get("failure_context")))]
        start = time.monotonic()
        try:
            # the loop keeps no checkpoints of its own (the write node is the unit of resumption);
            # durability="exit" so it does not wait for checkpoint writes it never makes
            with warnings.catch_warnings():
                warnings.filterwarnings("ignore", message="`durability` has no effect")
                out = loop.invoke({"messages": messages, "tool_calls": 0},
                                  {"recursion_limit": loop_recursion_limit(cfg.tool_budget)}, durability="exit")
        except LLMUnavailable as exc:
            return {"llm_error": str(exc), "trail": [_entry("write", state, error=str(exc))]}
        draft = str(out["messages"][-1].content or "")
        tokens = out.get("tokens", {})
        return {"draft": draft, "fix_round": 0, "review_pending": False, "tokens": tokens,
                "trail": [_entry("write", state, draft=draft, tool_calls=out.get("tool_calls", 0), tokens=tokens,
                                 latency_s=round(time.monotonic() - start, 3))]}

    def evaluate(state: ReportState) -> dict[str, Any]:
        draft = state.get("draft") or ""
        verification = deps.verify_fn(draft, state["findings"])
        verified = verification.to_json_dict()
        structural = draft_problems(draft)
        if structural:
            verified = {**verified, "passed": False,
                        "bad": [*verified["bad"], *({"finding": None, "says": "", "actual": "", "message": m}
                                                    for m in structural)]}
        issues = [item["message"] for item in verified["bad"]]
        update: dict[str, Any] = {"verification": verified}
        entry: dict[str, Any] = {"verification": verified}
        if state.get("review") is None and not structural:
            try:
                result = call(deps.models.evaluator.with_structured_output(Review, include_raw=True),
                              [SystemMessage(prompts.EVALUATOR_SYSTEM),
                               HumanMessage(prompts.review_request(state["findings"], draft))])
            except LLMUnavailable as exc:
                return {"llm_error": str(exc), **update, "trail": [_entry("evaluate", state, **entry, error=str(exc))]}
            parsed = result.message.get("parsed") if isinstance(result.message, dict) else result.message
            review = parsed if isinstance(parsed, Review) else Review(confidence=0.0, issues=[
                "The review could not be parsed; check the report against the findings once more."])
            passed = review.confidence >= cfg.review_threshold
            update["review"] = {"confidence": review.confidence, "passed": passed, "issues": review.issues,
                                "threshold": cfg.review_threshold}
            update["tokens"] = {"evaluator": result.usage}
            entry.update(review=update["review"], tokens={"evaluator": result.usage},
                         latency_s=round(result.latency_s, 3))
            if not passed:
                issues += [f"Reviewer: {issue}" for issue in review.issues] or [
                    "Reviewer: the report is not convincing; make causes and fixes specific to the findings."]
                update["review_pending"] = True
        else:
            update["review_pending"] = False
        update["issues"] = issues
        return {**update, "trail": [_entry("evaluate", state, **entry)]}

    def fix(state: ReportState) -> dict[str, Any]:
        messages = [SystemMessage(prompts.FIX_SYSTEM),
                    HumanMessage(prompts.fix_request(state["findings"], state.get("draft") or "",
                                                     state.get("issues") or []))]
        try:
            result = call(deps.models.specialist, messages)
        except LLMUnavailable as exc:
            return {"llm_error": str(exc), "trail": [_entry("fix", state, error=str(exc))]}
        draft = str(result.message.content or "")
        return {"draft": draft, "fix_round": state.get("fix_round", 0) + 1, "tokens": {"specialist": result.usage},
                "trail": [_entry("fix", state, issues=state.get("issues") or [], draft=draft,
                                 tokens={"specialist": result.usage}, latency_s=round(result.latency_s, 3))]}

    def replan(state: ReportState) -> dict[str, Any]:
        context = "\n".join(f"- {issue}" for issue in state.get("issues") or [])
        return {"replans": state.get("replans", 0) + 1, "fix_round": 0, "failure_context": context,
                "outline": None, "trail": [_entry("replan", state, failure_context=context)]}

    def finalize(state: ReportState) -> dict[str, Any]:
        return {"outcome": "verified", "final_report": state.get("draft"),
                "trail": [_entry("finalize", state)]}

    def fallback(state: ReportState) -> dict[str, Any]:
        if state.get("llm_error"):
            reason = f"the model endpoint failed: {state['llm_error']}"
        else:
            issues = state.get("issues") or []
            reason = (f"the LLM draft failed verification after {state.get('fix_round', 0)} fix round(s) and "
                      f"{state.get('replans', 0)} re-plan(s): " + " ".join(issues[:5]))
        return {"outcome": "fallback", "fallback_reason": reason, "trail": [_entry("fallback", state, reason=reason)]}

    return {"plan": plan, "write": write, "evaluate": evaluate, "fix": fix, "replan": replan,
            "finalize": finalize, "fallback": fallback}


# ---- routers: plain Python returning the name of the next step


def make_routers(config: LLMConfig) -> dict[str, Callable[[ReportState], str]]:
    def route_start(state: ReportState) -> Literal["plan", "write"]:
        return "plan" if config.use_planner else "write"

    def route_after_draft(state: ReportState) -> Literal["evaluate", "fallback"]:
        return "fallback" if state.get("llm_error") else "evaluate"

    def route_after_plan(state: ReportState) -> Literal["write", "fallback"]:
        return "fallback" if state.get("llm_error") else "write"

    def route_after_evaluate(state: ReportState) -> Literal["finalize", "fix", "replan", "fallback"]:
        if state.get("llm_error"):
            return "fallback"
        verified = bool((state.get("verification") or {}).get("passed"))
        if verified and not state.get("review_pending"):
            return "finalize"
        if state.get("fix_round", 0) < config.max_fix_rounds:
            return "fix"
        if verified:  # no fix round left for the review's issues: the numbers are right
            return "finalize"
        if state.get("replans", 0) < config.max_replans:
            return "replan"
        return "fallback"

    return {"start": route_start, "after_plan": route_after_plan, "after_draft": route_after_draft,
            "after_evaluate": route_after_evaluate}
