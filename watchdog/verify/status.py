"""Statuses the report states: contradicted statuses, names of checks that do not exist, checks never mentioned.

A status is read from a status word or emoji next to a finding's name ("X passed", "X (FAIL)",
"✅ X", "Failed: X, Y"), from a table's Status cell (or a cell that is only a status), and from a
heading, lead-in or list ending in ":" that lists passing checks. See the rules in
:mod:`watchdog.verify` ("Bad items" 2, 5 and 6).
"""

from __future__ import annotations

import re

from watchdog.verify.facts import describe
from watchdog.verify.locate import (
    CHECK_TYPES,
    Ctx,
    Index,
    IndexedFinding,
    Mention,
    without_names,
)
from watchdog.verify.markdown import Code
from watchdog.verify.model import Results

__all__ = ["EMOJI", "cell_status", "check_unknown_names", "check_unmentioned", "claim_status", "lists_passing",
           "section_status", "status_claims", "status_of_word"]

_STATUS_WORDS = {
    "pass": r"pass|passed|passes|passing|ok|okay|green|success|succeeded|healthy|clean|good|✅|✔️|✔|☑️|🟢",
    "fail": r"fail|failed|fails|failing|failure|✗|✘|❌|🔴|red|broken|critical",
    "warn": r"warn|warning|warnings|warned|⚠️|⚠|🟡|🟠|yellow|amber",
    "error": r"error|errored|erroring|errors|💥|not\s+run|could\s+not\s+run",
}
_STATUS_CELL = {k: re.compile(rf"^(?:{v})$", re.I) for k, v in _STATUS_WORDS.items()}
_STATUS_ANY = re.compile("|".join(rf"(?P<{k}>(?<![\w])(?:{v})(?![\w]))" for k, v in _STATUS_WORDS.items()), re.I)
EMOJI = {"✅": "pass", "✔️": "pass", "✔": "pass", "☑️": "pass", "🟢": "pass", "❌": "fail", "✗": "fail",
         "✘": "fail", "🔴": "fail", "⚠️": "warn", "⚠": "warn", "🟡": "warn", "🟠": "warn", "💥": "error"}

_NAME_AFTER_STATUS = re.compile(
    r"^[\s`*_\"'”’)\]]*(?:"
    r"(?:\(\s*(?:status\s*:?\s*)?|[:—–-]\s*|,\s*)(?P<mark>pass(?:ed|es|ing)?|ok|fail(?:ed|s|ing|ure)?|warn(?:ed|ing)?|"
    r"error(?:ed)?|✅|❌|⚠️|⚠)(?![\w])"
    r"|(?:\s+check)?\s+(?:(?:has|have|had)\s+|(?:is|was|are|were)\s+(?:now\s+|still\s+|currently\s+)?)?"
    r"(?:also\s+)?(?P<verb>passed|passes|passing|succeeded|failed|fails|failing|warned|warns|warning|errored|"
    r"ok|fine|clean|healthy)\b"
    r"|\s*(?P<emoji>✅|❌|⚠️|⚠))",
    re.I)
_NAME_BEFORE_STATUS = re.compile(r"(?P<emoji>✅|❌|⚠️|⚠|🟢|🔴|🟡)\s*[`*_\s]*$|"
                                 r"\b(?P<label>pass(?:ed)?|fail(?:ed)?|warn(?:ing)?|error)\s*[:—–-]\s*[`*_\s]*$", re.I)
_NEGATION = re.compile(r"\b(?:not|n['’]t|never|no\s+longer|would\s+have|could\s+have|to)\s*$", re.I)
_PASS_HEADING = re.compile(r"(?<![\w])(?:pass(?:ed|ing|es)?|healthy|clean|ok|succeeded|green|✅)(?![\w])", re.I)
_PROBLEM_HEADING = re.compile(
    r"(?<![\w])(?:fail\w*|warn\w*|error\w*|issues?|problems?|attention|not|n['’]t|but|except|❌|⚠️|⚠|"
    r"tolerated|with)(?![\w])", re.I)
_LEAD_IN = re.compile(r"^\W*(?P<label>passed|passing|passes|ok|healthy|clean|green|✅|failed|failing|fails|❌)"
                      r"(?:\s+checks?)?\s*(?:\(\s*\d+\s*\))?\s*[:—–-]", re.I)
_STATUS_LABEL = re.compile(
    r"^\W*(?:status|result|outcome|verdict|state)\s*(?:[:=]|[—–-]\s)\s*[`*_\s]*(?P<value>[^\s.,;]+)", re.I)
_BARE_STATUS = re.compile(r"^[\W_]*(?P<value>[^\W_]+|✅|❌|⚠️|⚠)[\W_]*$")
_CHECK_VERB = re.compile(
    r"^\W*(?:the|this)\s+(?:check|test|rule)\s+(?:has\s+|have\s+|is\s+|was\s+)?(?:also\s+)?(?P<value>passed|passes|"
    r"passing|succeeded|failed|fails|failing|warned|warns|errored)\b"
    r"|^\W*it\s+(?:has\s+)?(?P<value2>passed|succeeded|failed|warned|errored)\b", re.I)
_CAUSE_LABEL = re.compile(r"^[\W_]*(?:likely\s+|possible\s+|root\s+)?(?:causes?|reasons?|why|issues?|problems?|"
                         r"explanation|notes?|details?|finding)[*_\s]*[:—–-]\s*", re.I)
_KIND_WORDS = {"not_null": r"not[\s_-]*null|null|non[\s_-]*null|completeness",
               "unique": "unique|uniqueness|duplicates?",
               "pattern": "pattern|format|regex", "accepted_values": r"accepted[\s_-]*values?|allowed[\s_-]*values?",
               "range": "range|bounds?", "foreign_key": r"foreign[\s_-]*key|reference|referential",
               "freshness": "freshness|fresh", "row_count": r"row[\s_-]*count|rows?|volume",
               "custom_sql": r"custom[\s_-]*sql|sql|query", "row_condition": r"row[\s_-]*condition|condition"}


def _own_check_verb(text: str, item: IndexedFinding) -> re.Match[str] | None:
    """"The row count check failed." / "Row count check failed" in the section of a row_count check: the check
    is named by its own kind (or column), so the status is said of it."""
    own = _KIND_WORDS.get(item.f.check, re.escape(item.f.check))
    if item.f.column:
        own += "|" + re.escape(item.f.column.lower()).replace("_", r"[\s_-]*")
    return re.match(rf"^\W*(?:(?:the|this)\s+)?(?:{own})\s+(?:check|test|rule)\s+(?:has\s+|have\s+|is\s+|was\s+)?"
                    rf"(?:also\s+)?(?P<value>passed|passes|passing|succeeded|failed|fails|failing|warned|warns|errored)\b"
                    rf"(?P<value2>)", text, re.I)


_MEETS = re.compile(r"\b(?<!not )(?<!n't )(?:meets?|satisf(?:y|ies)|fulfils?|fulfills?)\s+the\s+"
                    r"(?:minimum\s+|maximum\s+)?(?:[\w-]+\s+){0,2}(?:requirements?|thresholds?|limits?|expectations?|"
                    r"bounds?)\b", re.I)
_UNKNOWN_NAME = re.compile(rf"^[A-Za-z_][\w$]*(?:\.[\w$+]+)*\.(?:{'|'.join(CHECK_TYPES)})$")
_IDENTIFIER = re.compile(r"^[A-Za-z_][\w$]*(?:[.+][\w$]+)*$")


def lists_passing(text: str) -> bool:
    """Whether a heading, label or lead-in introduces passing checks ("Passed checks", "**Healthy:**")."""
    return bool(_PASS_HEADING.search(text)) and not _PROBLEM_HEADING.search(text)


def claim_status(res: Results, item: IndexedFinding, claim: str, says: str, *, strict: bool,
                 emoji: bool = False) -> None:
    """Record whether the report's status ``claim`` for ``item`` (as written: ``says``) fits its status.
    ``strict`` (a Status cell) also tells FAIL from WARN; ``emoji`` ⚠️/❌ fit a pass with failing rows."""
    actual = item.status
    f = item.f
    bad = False
    if claim == "pass":
        bad = actual != "pass"
    elif claim == "fail":
        bad = actual == "pass" and not (emoji and (f.failing or 0) > 0)
        if strict and not emoji and actual == "warn":
            bad = True
    elif claim == "warn":
        bad = actual == "pass" and not (emoji and (f.failing or 0) > 0)
        if strict and not emoji and actual == "fail":
            bad = True
    elif claim == "error":
        bad = actual == "pass"
    if bad:
        word = {"pass": "passing", "fail": "failed", "warn": "a warning", "error": "an error"}[claim]
        res.add_bad(item.name, says, actual,
                    f"The report calls {item.name} {word} ({says}), but its status is {actual.upper()}: "
                    f"{describe(item)}.")
    else:
        res.add_ok(f"{item.name}: status {says} matches {actual}")


def status_claims(res: Results, text: str, explicit: list[Mention], ctx: Ctx) -> None:
    """Statuses stated next to the names in a sentence ("X passed", "X (FAIL)", "✅ X", "Failed: X, Y"), or
    implied by a passing section it is listed in."""
    distinct = {id(i): i for _s, _e, i in explicit}
    lead = _LEAD_IN.match(text)
    if lead and distinct:
        label = lead.group("label").lower()
        passing = ("passed", "passing", "passes", "ok", "healthy", "clean", "green", "✅")
        claim = "pass" if label in passing else "fail"
        for item in distinct.values():
            claim_status(res, item, claim, lead.group("label"), strict=False, emoji=claim == "fail")
        return
    for s, e, item in explicit:
        m = _NAME_AFTER_STATUS.match(text[e:e + 60])
        if m:
            word = (m.group("mark") or m.group("verb") or m.group("emoji") or "").lower()
            if _NEGATION.search(text[e:e + m.start(m.lastgroup or 0)] if m.lastgroup else ""):
                continue
            found = status_of_word(word)
            if found:
                claim_status(res, item, found, word, strict=False, emoji=word in EMOJI)
                continue
        b = _NAME_BEFORE_STATUS.search(text[max(0, s - 12):s])
        if b:
            word = (b.group("emoji") or b.group("label") or "").lower()
            found = status_of_word(word)
            if found:
                claim_status(res, item, found, word, strict=False, emoji=word in EMOJI)
    if ctx.status_class == "pass" and len(distinct) == 1 and not _STATUS_ANY.search(
            without_names(text, explicit)):
        (item,) = distinct.values()
        claim_status(res, item, "pass", "listed under a passing heading", strict=False)


def section_status(res: Results, text: str, item: IndexedFinding) -> None:
    """A status stated for the finding whose section or list item this is, without naming it: "Status: PASS",
    "- **Status**: `pass`", a line that is only "PASS", "The check passed: …", "It failed …"."""
    m = _STATUS_LABEL.match(text)
    if m:
        word = cell_status(m.group("value"), whole=True)
        claim = status_of_word(word) if word else None
        if claim:
            claim_status(res, item, claim, f"Status: {m.group('value')}", strict=True, emoji=word in EMOJI)
        return
    m = _BARE_STATUS.match(text)
    if m and len(text.strip()) <= 16:
        word = cell_status(m.group("value"), whole=True)
        claim = status_of_word(word) if word else None
        if claim:
            claim_status(res, item, claim, text.strip(), strict=True, emoji=word in EMOJI)
        return
    if _MEETS.search(text):
        claim_status(res, item, "pass", "meets the requirement", strict=False)
        return
    m = _CHECK_VERB.match(text) or _own_check_verb(_CAUSE_LABEL.sub("", text, count=1), item)
    if m:
        word = (m.group("value") or m.group("value2")).lower()
        claim = status_of_word(word) or ("pass" if word == "succeeded" else None)
        if claim:
            claim_status(res, item, claim, f"the check {word}", strict=False)


def status_of_word(word: str) -> str | None:
    """pass, fail, warn or error for a status word or emoji."""
    word = word.strip().lower()
    if word in EMOJI:
        return EMOJI[word]
    if word.startswith("pass") or word in ("ok", "succeeded", "fine", "clean", "healthy"):
        return "pass"
    if word.startswith("fail"):
        return "fail"
    if word.startswith("warn"):
        return "warn"
    if word.startswith("error"):
        return "error"
    return None


def cell_status(text: str, *, whole: bool) -> str | None:
    """The status word in a table cell; with ``whole``, only when the cell is nothing but a status."""
    t = " ".join(text.replace("*", "").split()).strip().lower()
    if not t:
        return None
    if whole:
        parts = t.split()
        if len(parts) > 2:
            return None
        for p in parts:
            if p in EMOJI:
                continue
            if not any(r.match(p) for r in _STATUS_CELL.values()) or p in ("good", "red", "green", "clean",
                                                                              "critical", "yellow", "amber"):
                return None
    words = [m.group() for m in _STATUS_ANY.finditer(t)]
    if not words:
        return None
    textual = [w for w in words if w not in EMOJI]
    return (textual or words)[0]


def check_unknown_names(res: Results, idx: Index, text: str, code: Code, *, whole_cell: bool = False) -> None:
    """A table row or heading naming a check that does not exist: ``table.column.check`` with a known check
    type or, for a whole cell, a backticked identifier that is no finding, table or column."""
    stripped = text.strip()
    candidates = []
    if _UNKNOWN_NAME.match(stripped):
        candidates.append(stripped)
    elif whole_cell and code and len(code) == 1 and code[0][0] == text.find(stripped) and \
            code[0][1] - code[0][0] == len(stripped) and _IDENTIFIER.match(stripped):
        low = stripped.lower()
        if low not in idx.table_words and low not in idx.column_words:
            parts = low.split(".")
            if not (len(parts) == 2 and parts[0] in idx.table_words and parts[1] in idx.column_words) \
                    and low not in {t.split(".")[-1] for t in idx.table_words}:
                candidates.append(stripped)
    for name in candidates:
        if name.lower() in idx.by_name:
            continue
        res.add_bad(None, name, "no such check",
                    f"The report has a row for {name}, but no check of that name exists in the findings "
                    f"({len(idx.items)} checks); remove it or use a real check name.")


def check_unmentioned(res: Results, idx: Index) -> None:
    """Failed or warned findings the report never names, exactly or loosely."""
    for item in idx.items:
        if item.status in ("fail", "warn") and item.name not in res.mentioned and not any(
                idx.names_loosely(item, low, tables) for low, tables in res.coverage_texts):
            res.add_bad(item.name, "(not mentioned)", f"{item.status}: {describe(item)}",
                        f"The report never mentions {item.name}, which "
                        f"{'failed' if item.status == 'fail' else 'warned'}: {describe(item)}.")
