"""The evaluate node: verify_fn on every draft, structural checks (not a report, cut off, missing causes and
fixes), and the evaluator model's review (first round only) as ``llm.review`` says: gate, advisory or off.

The review is the judgement of a model; the numbers are verify_fn's. A review that cannot be had (the
endpoint fails, the JSON is cut by the token cap or does not parse) is recorded as unavailable and the
draft is judged on verify_fn alone: it never turns into "the model endpoint failed".
"""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, Field

from watchdog.graph import asks, compose, prompts
from watchdog.graph.models import LLMUnavailable
from watchdog.graph.nodes import GraphDeps, choices_for, entry, messages_for, with_format
from watchdog.graph.state import ReportState
from watchdog.verify.wording import copied_from


class Review(BaseModel):
    """The evaluator's structured verdict (first round only)."""

    confidence: float = Field(ge=0, le=1, description="0-1: how sure you are the report is correct and useful")
    issues: list[str] = Field(default_factory=list, description="concrete problems to fix; empty if none")


REVIEW_FORMAT = {"type": "json_schema", "json_schema": {"name": "Review", "strict": True, "schema": {
    "type": "object", "additionalProperties": False, "required": ["confidence", "issues"],
    "properties": {"confidence": {"type": "number", "minimum": 0, "maximum": 1},
                   "issues": {"type": "array", "items": {"type": "string"}}}}}}

def structural(state: ReportState, deps: GraphDeps) -> list[tuple[str | None, str]]:
    """(part or None, message) for what makes the draft unusable whatever its numbers say."""
    draft = state.get("draft") or ""
    cap = deps.config.max_output_tokens.specialist
    out: list[tuple[str | None, str]] = []
    if state.get("draft_finish") == "length":
        out.append((None, f"The answer was cut off by the output token cap ({cap} tokens, "
                          "llm.max_output_tokens.specialist): write it shorter, and complete."))
    if deps.config.table == "program":
        if state.get("prose") is None:
            _, problem = compose.parse_prose(draft)
            out.append((None, problem or "The answer is not the JSON object asked for."))
        else:
            prose = compose.Prose.model_validate(state["prose"])
            rules = {str(f["name"]): str(f.get("description") or "") for f in state["findings"].get("findings", [])}
            choices = choices_for(state) if deps.config.causes == "choose" else None
            out += list(asks.missing_prose(prose, prompts.problem_names(state["findings"]), rules, choices))
        return out
    # whether the draft is a report at all is verify_fn's (one verdict with `watchdog verify`); a fix answer that
    # turned an issue it was sent into a heading of the report is the graph's to see (it knows what it sent)
    sent = "\n".join(state.get("issues") or []) if state.get("fix_round") else ""
    for line in draft.split("\n"):
        heading = line.strip().lstrip("#").strip()
        if sent and line.lstrip().startswith("#") and len(heading.split()) >= 8 and copied_from(heading, sent, ""):
            out.append((None, f"The heading {heading[:100]!r} repeats an issue the fix was sent; it is not part of "
                              f"the report."))
    return out


def locate(state: ReportState, bad: list[dict[str, Any]]) -> list[str]:
    """Program mode: the prose parts the verification's bad items come from (by the text they quote)."""
    if not state.get("prose"):
        return []
    texts = compose.part_texts(compose.Prose.model_validate(state["prose"]))
    parts: list[str] = []
    for item in bad:
        says = str(item.get("says") or "").strip()
        found = [p for p, t in texts.items() if says and says in t]
        if not found and item.get("finding") and f"checks.{item['finding']}" in texts:
            found = [f"checks.{item['finding']}"]
        parts += [p for p in found or ["summary", *texts] if p not in parts]
    return parts


def ask_review(state: ReportState, deps: GraphDeps) -> tuple[dict[str, Any], dict[str, Any]]:
    """(review record, tokens). Never raises: a review that cannot be had says why."""
    cfg = deps.config
    try:
        result = deps.call(with_format(deps.models.evaluator, REVIEW_FORMAT),
                           messages_for(deps.config, state, prompts.review_request(state.get("draft") or "")))
    except LLMUnavailable as exc:
        return ({"available": False, "passed": None, "mode": cfg.review, "error": str(exc)},
                {"evaluator": exc.usage} if exc.usage else {})
    tokens = {"evaluator": result.usage}
    if result.truncated:
        return ({"available": False, "passed": None, "mode": cfg.review,
                 "error": "the review was cut by the token cap (raise llm.max_output_tokens.evaluator)"}, tokens)
    parsed = _parse_review(str(result.message.content or ""))
    if parsed is None:
        return ({"available": False, "passed": None, "mode": cfg.review,
                 "error": "the review was not the JSON asked for"}, tokens)
    passed = parsed.confidence >= cfg.review_threshold and not parsed.issues
    return ({"available": True, "confidence": parsed.confidence, "passed": passed, "issues": parsed.issues,
             "threshold": cfg.review_threshold, "mode": cfg.review}, tokens)


def _parse_review(text: str) -> Review | None:
    body = compose.unwrap(text, compose.has_object)
    start, end = body.find("{"), body.rfind("}")
    if start < 0 or end <= start:
        return None
    try:
        return Review.model_validate_json(body[start:end + 1])
    except ValueError:
        return None


def evaluate(state: ReportState, deps: GraphDeps) -> dict[str, Any]:
    draft = state.get("draft") or ""
    if deps.config.table == "program" and state.get("prose") is None:  # no prose to check: only what is wrong
        verified: dict[str, Any] = {"passed": False, "ok": [], "bad": []}
    else:
        verified = deps.verify_fn(draft, state["findings"]).to_json_dict()
    problems = structural(state, deps)
    if problems:
        verified = {**verified, "passed": False,
                    "bad": [*verified["bad"], *({"finding": None, "says": "", "actual": "", "message": m, "part": p}
                                                for p, m in problems)]}
    issues = [item["message"] for item in verified["bad"]]
    update: dict[str, Any] = {"verification": verified, "review_pending": False}
    record: dict[str, Any] = {"verification": verified}
    if deps.config.table == "program":
        pointed = [(p, m) for p, m in problems]
        for item in verified["bad"]:
            if "part" not in item:
                found = locate(state, [item])
                own = f"checks.{item.get('finding')}"
                part = own if own in found else found[0] if len(found) == 1 else None
                pointed.append((part, item["message"]))
        flagged = [p for p, _ in problems if p] + locate(state, [b for b in verified["bad"] if "part" not in b])
        update["flagged"] = list(dict.fromkeys(flagged)) if not [p for p, _ in problems if p is None] else []
        update["issue_parts"] = pointed
    if state.get("review") is None and not problems and deps.config.review != "off":
        review, tokens = ask_review(state, deps)
        update.update(review=review, tokens=tokens)
        record.update(review=review, tokens=tokens)
        if deps.config.review == "gate" and review["passed"] is False:
            issues += [f"Reviewer: {issue}" for issue in review["issues"]] or [
                "Reviewer: the report is not convincing; make causes and fixes specific to the findings."]
            update["review_pending"] = True
            if deps.config.table == "program" and not update.get("flagged"):
                update["flagged"] = ["summary", "priorities",
                                     *(f"checks.{n}" for n in prompts.problem_names(state["findings"]))]
    update["issues"] = issues
    return {**update, "trail": [entry("evaluate", state, **record)]}
