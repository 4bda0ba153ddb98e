"""The report graph's nodes and routers: module-level functions, each taking the state and what it depends on
(:class:`GraphDeps` for nodes that call a model, :class:`~watchdog.settings.LLMConfig` for routers), so each
can be called and tested on its own. :mod:`watchdog.graph.graph` binds the dependencies.

plan → write → evaluate ⇄ fix → finalize | (replan → plan/write) | fallback
"""

from __future__ import annotations

import time
import warnings
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any, Literal

from langchain_core.messages import BaseMessage, HumanMessage, SystemMessage
from langchain_core.tools import BaseTool

from watchdog.graph import asks, compose, prompts
from watchdog.graph.models import Call, Limits, LLMUnavailable, Models, invoke
from watchdog.graph.state import ReportState
from watchdog.graph.tools import build_tool_loop, loop_recursion_limit
from watchdog.settings import LLMConfig

VerifyFn = Callable[[str, Any], Any]


@dataclass
class GraphDeps:
    models: Models
    verify_fn: VerifyFn
    config: LLMConfig
    tools: list[BaseTool]

    def call(self, runnable: Any, messages: list[BaseMessage]) -> Call:
        return invoke(runnable, messages, Limits.of(self.config))


def now() -> str:
    return datetime.now(UTC).isoformat(timespec="seconds").replace("+00:00", "Z")


def entry(step: str, state: ReportState, **fields: Any) -> dict[str, Any]:
    return {"step": step, "at": now(), "fix_round": state.get("fix_round", 0), "replans": state.get("replans", 0),
            **fields}


def failed(step: str, role: str, state: ReportState, exc: LLMUnavailable) -> dict[str, Any]:
    """The update of a node whose model call failed: the error, and the tokens its attempts spent."""
    tokens = {role: exc.usage} if exc.usage else {}
    return {"llm_error": str(exc), "tokens": tokens,
            "trail": [entry(step, state, error=str(exc), tokens=tokens, attempts=exc.attempts)]}


def messages_for(config: LLMConfig, state: ReportState, request: str) -> list[BaseMessage]:
    """Every call: the shared findings block first (the same for all roles and rounds of a run), then the role's
    request. Choosing causes among candidates, the model needs no sample rows: the block leaves them out."""
    samples = not (config.table == "program" and config.causes == "choose")
    return [SystemMessage(prompts.shared_system(state["findings"], samples=samples)), HumanMessage(request)]


def with_format(model: Any, response_format: dict[str, Any]) -> Any:
    """``model`` asked for JSON. Sent in the request body (extra_body), not as langchain's ``response_format``:
    that path parses the answer itself and fails on a cut answer with a raw client dump."""
    extra = dict(getattr(model, "extra_body", None) or {})
    return model.bind(extra_body={**extra, "response_format": response_format})


def _tokens_entry(role: str, result: Call) -> dict[str, Any]:
    return {"tokens": {role: result.usage}, "latency_s": round(result.latency_s, 3), "attempts": result.log,
            "finish_reason": result.finish_reason}


# ---- nodes


def plan(state: ReportState, deps: GraphDeps) -> dict[str, Any]:
    try:
        result = deps.call(deps.models.planner, messages_for(deps.config, state, prompts.planner_request(
            state.get("failure_context"))))
    except LLMUnavailable as exc:
        return failed("plan", "planner", state, exc)
    outline = compose.unwrap(str(result.message.content or ""), compose.any_text)
    return {"outline": outline, "tokens": {"planner": result.usage},
            "trail": [entry("plan", state, outline=outline, **_tokens_entry("planner", result))]}


def write(state: ReportState, deps: GraphDeps) -> dict[str, Any]:
    """The first draft: the whole report (``llm.table: model``) or the prose around the program's (``program``)."""
    if deps.config.table == "program":
        return write_prose(state, deps)
    cfg = deps.config
    loop = build_tool_loop(deps.models.specialist, deps.tools, cfg.tool_budget, deps.call)
    request = prompts.writer_request(state.get("outline"), state.get("failure_context"))
    messages = messages_for(deps.config, state, request)
    start = time.monotonic()
    try:
        # the loop keeps no checkpoints of its own (the write node is the unit of resumption);
        # durability="exit" so it does not wait for checkpoint writes it never makes
        with warnings.catch_warnings():
            warnings.filterwarnings("ignore", message="`durability` has no effect")
            out = loop.invoke({"messages": messages, "tool_calls": 0},
                              {"recursion_limit": loop_recursion_limit(cfg.tool_budget)}, durability="exit")
    except LLMUnavailable as exc:
        return failed("write", "specialist", state, exc)
    last = out["messages"][-1]
    draft = compose.unwrap(str(last.content or ""))
    finish = (getattr(last, "response_metadata", None) or {}).get("finish_reason")
    tokens = out.get("tokens", {})
    return {"draft": draft, "draft_finish": finish, "fix_round": 0, "review_pending": False, "tokens": tokens,
            "last_answer": str(last.content or ""), "repeated": False,
            "trail": [entry("write", state, draft=draft, finish_reason=finish, tool_calls=out.get("tool_calls", 0),
                            tokens=tokens, latency_s=round(time.monotonic() - start, 3))]}


def write_prose(state: ReportState, deps: GraphDeps) -> dict[str, Any]:
    names = prompts.problem_names(state["findings"])
    choose = deps.config.causes == "choose"
    request = prompts.writer_request(state.get("outline"), state.get("failure_context"), prose=True, names=names,
                                     choose=choose, problems=prompts.problems_hint(state["findings"]))
    schema = compose.prose_schema(names, choices=choices_for(state) if choose else None,
                                  lines=lines_for(state) if choose else None)
    try:
        result = deps.call(with_format(deps.models.specialist, schema), messages_for(deps.config, state, request))
    except LLMUnavailable as exc:
        return failed("write", "specialist", state, exc)
    raw = str(result.message.content or "")
    prose, _ = compose.parse_prose(raw)
    draft = _assembled(state, prose) if prose is not None else raw
    return {"draft": draft, "draft_finish": result.finish_reason, "prose": prose.model_dump() if prose else None,
            "fix_round": 0, "review_pending": False, "tokens": {"specialist": result.usage},
            "last_answer": raw, "repeated": False,
            "trail": [entry("write", state, draft=draft, answer=raw, **_tokens_entry("specialist", result))]}


def choices_for(state: ReportState) -> dict[str, tuple[list[str], list[str]]]:
    """``llm.causes: choose``: each problem check's candidate causes and fixes."""
    from watchdog.graph.candidates import candidates

    return {str(f["name"]): candidates(f) for f in state["findings"].get("findings", [])
            if f.get("status") in ("fail", "warn", "error")}


def lines_for(state: ReportState) -> tuple[list[str], list[str]]:
    """``llm.causes: choose``: the summaries and the priorities to choose from."""
    from watchdog.graph.candidates import priority_candidates, summary_candidates

    return summary_candidates(state["findings"]), priority_candidates(state["findings"])


def _assembled(state: ReportState, prose: compose.Prose) -> str:
    from watchdog.findings import FindingsDoc

    return compose.assemble(FindingsDoc.validate(state["findings"]), prose)


def fix(state: ReportState, deps: GraphDeps) -> dict[str, Any]:
    """Rewrite only the flagged parts; keep the rest of the draft as it is."""
    issues = state.get("issues") or []
    if deps.config.table == "program":
        return fix_prose(state, deps, issues)
    draft = state.get("draft") or ""
    parts = compose.sections(draft)
    bad = (state.get("verification") or {}).get("bad", [])
    whole = state.get("draft_finish") == "length" or state.get("review_pending") or not parts
    flagged = list(range(len(parts))) if whole else compose.flagged_sections(parts, bad)
    request = prompts.fix_request("".join(parts[i] for i in flagged).strip() or draft, issues)
    try:
        result = deps.call(deps.models.specialist, messages_for(deps.config, state, request))
    except LLMUnavailable as exc:
        return failed("fix", "specialist", state, exc)
    answer = str(result.message.content or "")
    new = compose.splice(parts, flagged, answer) if parts else compose.unwrap(answer)
    return {"draft": new, "draft_finish": result.finish_reason, "fix_round": state.get("fix_round", 0) + 1,
            "tokens": {"specialist": result.usage}, **_answer(state, answer),
            "trail": [entry("fix", state, issues=issues, sections=len(flagged), of_sections=len(parts), answer=answer,
                            draft=new, **_tokens_entry("specialist", result))]}


def fix_prose(state: ReportState, deps: GraphDeps, issues: list[str]) -> dict[str, Any]:
    """Ask only for what is missing or wrong, by name, with a schema that requires exactly those parts."""
    names = prompts.problem_names(state["findings"])
    old = compose.Prose.model_validate(state["prose"]) if state.get("prose") else compose.Prose()
    pointed = [(p, m) for p, m in state.get("issue_parts") or []]
    choose = deps.config.causes == "choose"
    ask = asks.ask_for(state.get("flagged") or [] if state.get("prose") else [], pointed, names,
                       choices_for(state) if choose else None, prompts.problems_hint(state["findings"]),
                       lines_for(state) if choose else None)
    try:
        result = deps.call(with_format(deps.models.specialist, ask.schema),
                           messages_for(deps.config, state, prompts.fix_prose_request(ask.lines)))
    except LLMUnavailable as exc:
        return failed("fix", "specialist", state, exc)
    raw = str(result.message.content or "")
    new, _ = compose.parse_prose(raw)
    prose = compose.merge_prose(old, new, ask.parts) if new is not None else old
    prose.checks = [c for c in prose.checks if c.name.strip("` ") in names]  # only problem checks have entries
    draft = _assembled(state, prose)
    return {"draft": draft, "draft_finish": result.finish_reason, "prose": prose.model_dump(),
            "fix_round": state.get("fix_round", 0) + 1, "tokens": {"specialist": result.usage},
            **_answer(state, raw),
            "trail": [entry("fix", state, issues=issues, parts=ask.parts, asked=ask.lines, answer=raw, draft=draft,
                            **_tokens_entry("specialist", result))]}


def _answer(state: ReportState, raw: str) -> dict[str, Any]:
    """The answer kept for the next round, and whether it is the previous round's again (word for word)."""
    same = " ".join(raw.split()) == " ".join((state.get("last_answer") or "").split())
    return {"last_answer": raw, "repeated": bool(raw.strip()) and same}


def replan(state: ReportState) -> dict[str, Any]:
    context = "\n".join(f"- {issue}" for issue in state.get("issues") or [])
    return {"replans": state.get("replans", 0) + 1, "fix_round": 0, "failure_context": context,
            "outline": None, "prose": None, "flagged": [], "last_answer": None,
            "trail": [entry("replan", state, failure_context=context)]}


def finalize(state: ReportState) -> dict[str, Any]:
    return {"outcome": "verified", "final_report": state.get("draft"), "trail": [entry("finalize", state)]}


def fallback(state: ReportState) -> dict[str, Any]:
    rounds = f"{state.get('fix_round', 0)} fix round(s) and {state.get('replans', 0)} re-plan(s)"
    if state.get("llm_error"):
        reason = f"the model endpoint failed: {state['llm_error']}"
    elif state.get("repeated"):
        reason = f"the model repeated itself: fix round {state.get('fix_round', 0)} answered word for word as before"
    else:
        reason = f"the LLM draft failed verification after {rounds}"
    return {"outcome": "fallback", "fallback_reason": reason, "trail": [entry("fallback", state, reason=reason)]}


# ---- routers: plain functions of the state and the config, returning the name of the next step


def route_start(state: ReportState, cfg: LLMConfig) -> Literal["plan", "write"]:
    return "plan" if cfg.use_planner else "write"


def route_after_draft(state: ReportState) -> Literal["evaluate", "fallback"]:
    """A fix that answers word for word as the round before ends the loop (another round would cost as much and
    answer the same), unless that draft was verified and only a review's wish was pending."""
    if state.get("llm_error"):
        return "fallback"
    if state.get("repeated") and not (state.get("verification") or {}).get("passed"):
        return "fallback"
    return "evaluate"


def route_after_plan(state: ReportState) -> Literal["write", "fallback"]:
    return "fallback" if state.get("llm_error") else "write"


def route_after_evaluate(state: ReportState, cfg: LLMConfig) -> Literal["finalize", "fix", "replan", "fallback"]:
    if state.get("llm_error"):
        return "fallback"
    verified = bool((state.get("verification") or {}).get("passed"))
    if verified and not state.get("review_pending"):
        return "finalize"
    if state.get("fix_round", 0) < cfg.max_fix_rounds:
        return "fix"
    if verified:  # no fix round left for the review's issues: the numbers are right
        return "finalize"
    if state.get("replans", 0) < cfg.max_replans:
        return "replan"
    return "fallback"

