"""The report graph's typed state. Loop counters live here; their limits live in the config.

``trail`` and ``tokens`` have reducers: every node appends what it did (nothing is overwritten),
and token counts per role are summed.
"""

from __future__ import annotations

import operator
from typing import Annotated, Any, Literal

from typing_extensions import TypedDict  # pydantic reads it on Python < 3.12 (the input JSON schema)

Role = Literal["planner", "specialist", "evaluator"]
Outcome = Literal["verified", "fallback"]


Tokens = dict[str, dict[str, int]]


def add_tokens(left: Tokens | None, right: Tokens | None) -> Tokens:
    """Sum token usage per role: {"specialist": {"input": 10, "output": 5, "calls": 1}}."""
    out = {role: dict(counts) for role, counts in (left or {}).items()}
    for role, counts in (right or {}).items():
        mine = out.setdefault(role, {})
        for key, value in counts.items():
            mine[key] = mine.get(key, 0) + int(value)
    return out


class ReportInput(TypedDict, total=False):
    """What a run starts from (the graph's input schema)."""

    run_id: str
    findings: dict[str, Any]          # the findings document (schema_version 1)
    out_dir: str                      # the run folder
    trends: dict[str, str] | None     # finding name -> new/resolved/worse/better/unchanged (audits)


class ReportState(ReportInput, total=False):
    # working state
    outline: str | None               # the planner's outline
    draft: str | None                 # the latest report draft (program mode: the assembled report)
    draft_finish: str | None          # the finish reason of the call that wrote it ("length": cut by the cap)
    prose: dict[str, Any] | None      # program mode: the model's parts (summary, priorities, checks)
    issues: list[str]                 # what the next fix must address (verify + review, merged)
    flagged: list[str]                # program mode: the parts the issues point at
    issue_parts: list[tuple[str | None, str]]  # program mode: (part or None, issue) for the next fix round
    last_answer: str | None           # the model's last raw answer (a fix that repeats it ends the loop)
    repeated: bool                    # the last fix answered word for word as the round before
    review: dict[str, Any] | None     # the first-round review: {confidence, passed, issues}
    verification: dict[str, Any] | None  # verify_fn's last result (to_json_dict)
    fix_round: int                    # fixes done since the last (re)write
    replans: int                      # full rewrites done after fixing was exhausted
    review_pending: bool              # the review asked for changes and they get their one fix round
    failure_context: str | None       # why the last attempt failed (for a re-plan)
    llm_error: str | None             # the endpoint failed (after retries): fall back
    # outputs
    outcome: Outcome | None
    final_report: str | None
    fallback_reason: str | None
    # accumulated
    trail: Annotated[list[dict[str, Any]], operator.add]
    tokens: Annotated[dict[str, dict[str, int]], add_tokens]
