"""What a chat message says about a run, whatever the chat: the headline, the problem checks (bounded), links.

Slack blocks (:mod:`watchdog.report.slack_blocks`) and Teams cards (:mod:`watchdog.report.teams_card`) render
the same :class:`ChatMessage`, so both say the same thing. Links open pages of ``watchdog serve --ui`` under the
configuration's ``public_url``; without one a message carries no link (a server path opens nothing for its
reader).
"""

from __future__ import annotations

from dataclasses import dataclass, field

from watchdog.delivery.routing import PROBLEMS, Select, problem_findings
from watchdog.findings import Finding, FindingsDoc
from watchdog.report.diagnosis_text import sentences
from watchdog.report.escape import number, percent

__all__ = ["PROBLEMS", "STATUS_WORD", "ChatMessage", "ProblemLine", "Select", "message", "problem_findings"]

STATUS_WORD = {"fail": "FAIL", "warn": "WARN", "error": "ERROR", "pass": "PASS"}


@dataclass
class ProblemLine:
    name: str
    status: str
    figure: str          # "37 of 2,000 (1.85%)", "observed 12.5", the error
    change: str | None   # new, worse, better, unchanged (None: no previous run)
    why: str | None      # the diagnosis in a sentence or two


@dataclass
class ChatMessage:
    headline: str
    problems: list[ProblemLine]
    more: int
    links: list[tuple[str, str]] = field(default_factory=list)
    database_error: str | None = None


def _figure(f: Finding) -> str:
    if f.status == "error":
        return f.error or "could not run"
    if f.failing is not None and f.total is not None:
        rate = f" ({percent(f.rate)})" if f.rate is not None else ""
        return f"{number(f.failing)} of {number(f.total)}{rate}"
    if f.observed is not None:
        return f"observed {number(f.observed)}"
    return ""


def message(doc: FindingsDoc, *, audit: str, run_id: str, trends: dict[str, str], public_url: str | None,
            max_checks: int, select: Select | None = None) -> ChatMessage:
    from watchdog.report.live import public_links

    s = doc.summary
    parts = [f"{s.failed} failed" if s.failed else "", f"{s.warned} warned" if s.warned else "",
             f"{s.errors} errors" if s.errors else ""]
    outcome = ", ".join(p for p in parts if p) or f"all {s.checks} checks passed"
    new = sum(1 for v in trends.values() if v == "new")
    resolved = sum(1 for v in trends.values() if v == "resolved")
    extra = " · ".join(x for x in (f"{new} new" if new else "", f"{resolved} resolved" if resolved else "") if x)
    headline = f"{audit}: {outcome}" + (f" · {extra}" if extra else "")
    if select is not None and select.group is not None:
        headline += f" · owner {select.group}"
    problems = problem_findings(doc, trends, select)
    lines = [ProblemLine(f.name, f.status, _figure(f), trends.get(f.name), " ".join(sentences(f)) or None)
             for f in problems[:max_checks]]
    links = public_links(public_url, audit, run_id) if public_url else []
    return ChatMessage(headline, lines, max(0, len(problems) - max_checks), links, doc.error)
