"""Whether a draft was cut off (a model that hit its output-token limit stops mid-line or mid-structure).

A draft is cut off when the fence around it or a reasoning block was never closed, or when its last line
stops where no writer stops: a label with no value (``- **Status**:``), a heading with no section under
it, an unfinished table row, an unclosed ``**`` or code span, a trailing comma, article, preposition or
conjunction, or a paragraph sentence with no closing punctuation.
"""

from __future__ import annotations

import re

from watchdog.verify.model import Results
from watchdog.verify.unwrap import Unwrapped

__all__ = ["check_truncation"]

_DANGLING_WORD = re.compile(
    r"(?:^|\s)(?:a|an|the|of|to|in|on|at|by|for|from|with|without|and|or|but|nor|is|are|was|were|be|been|has|have|"
    r"had|that|which|who|whose|where|when|than|as|into|onto|per|such|its|their|this|these|those|because|"
    r"while|if|via|e\.g\.|i\.e\.|like|including)$", re.I)
_OPEN_END = re.compile(r"(?:[,;(\[{/+=&–—-]|\s-)$")
_CLOSED_PARAGRAPH = re.compile(r"[.!?…:)\]\"'”’`*_|>]$|[\u2600-\u27ff\U0001F300-\U0001FAFF]$")
_TABLE_ROW = re.compile(r"^\s*\|")
_HEADING = re.compile(r"^\s{0,3}#{1,6}\s")
_TAG_PIECE = re.compile(r"^\s*</?[A-Za-z]*>?\s*$")
_ITEM = re.compile(r"^\s*(?:[-*+•]|\d{1,3}[.)])\s+")


def check_truncation(res: Results, unwrapped: Unwrapped, checks: int = 0) -> None:
    """Add a bad item when the draft (already unwrapped) looks cut off; ``checks``: how many checks the findings
    have (a findings table that ends early, on a row without its closing pipe, is cut)."""
    lines = [ln for ln in unwrapped.text.split("\n") if ln.strip()]
    while lines and _TAG_PIECE.match(lines[-1]):  # an echoed closing tag, whole or cut ("</report"): not text
        lines.pop()
    if unwrapped.unclosed_reasoning and not lines:
        res.add_bad(None, "(only a reasoning block)", "no report",
                    "The draft has no report: it opens a reasoning block (<think>) that never closes and nothing "
                    "follows it. Write the report itself, starting with '# Data-quality report'.")
        return
    last = lines[-1].strip() if lines else ""
    reason = _reason(lines, unwrapped, checks)
    if reason is None:
        return
    shown = last if len(last) <= 80 else "…" + last[-79:]
    res.add_bad(None, shown or "(empty)", "the report is cut off",
                f"The report is cut off: {reason} (it ends with \"{shown}\"); the model probably hit its output "
                "token limit. Write the report complete, every section finished.")


def _reason(lines: list[str], unwrapped: Unwrapped, checks: int) -> str | None:
    if unwrapped.unclosed_fence:
        return "the code fence around it is never closed"
    if not lines:
        return None
    last = lines[-1].strip()
    if _TABLE_ROW.match(last):
        return _table_reason(lines, checks)
    if _HEADING.match(last):
        return "it ends with a heading that has nothing under it"
    body = _ITEM.sub("", last)
    if body.count("**") % 2 or _odd_backticks(body):
        return "the last line stops inside bold text or a code span"
    plain = body.rstrip("*_ ").rstrip()
    if plain.endswith(":") or plain.endswith("**:"):
        return "the last line is a label with no value"
    if _OPEN_END.search(plain) or _DANGLING_WORD.search(plain):
        return "the last line stops mid-sentence"
    fragment = re.split(r"[.!?:]\s", plain)[-1]
    if not _ITEM.match(last) and not _CLOSED_PARAGRAPH.search(plain) and re.search(r"[a-z]{2,}$", plain) \
            and len(fragment.split()) >= 6:
        return "the last sentence has no end"
    return None


def _table_reason(lines: list[str], checks: int) -> str | None:
    """An unfinished last table row: fewer cells than the header, or, in a table with fewer rows than the findings
    have checks, no closing pipe where every other row has one (a last row without it is otherwise a habit)."""
    rows = []
    for ln in reversed(lines):
        if not _TABLE_ROW.match(ln):
            break
        rows.append(ln.strip())
    rows.reverse()
    header, last = rows[0], rows[-1]
    if len(rows) < 2:
        return "the table has only a header"
    if _cells(last) < _cells(header):
        return "the last table row is unfinished"
    if not last.endswith("|") and 3 <= len(rows) < checks + 2 and all(r.endswith("|") for r in rows[:-1]):
        return "the table stops early, on a row without its closing |"
    return None


def _cells(row: str) -> int:
    return len(re.split(r"(?<!\\)\|", row.strip().strip("|")))


def _odd_backticks(text: str) -> bool:
    return len(re.findall(r"(?<!`)`(?!`)", text)) % 2 == 1
