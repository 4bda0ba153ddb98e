"""Report-level claims: "no issues found" and summary counts of checks ("8 failed, 2 warned, 10 passed").

See the rules in :mod:`watchdog.verify` ("Bad items" 3 and 4).
"""

from __future__ import annotations

import re

from watchdog.findings import Summary
from watchdog.verify.locate import Ctx, Index, IndexedFinding, Mention
from watchdog.verify.markdown import Code
from watchdog.verify.model import Results
from watchdog.verify.numbers import MASK

__all__ = ["check_no_issues", "check_summary_counts"]

_NO_ISSUES = re.compile(
    r"(?P<all>\bno\s+(?:data[- ]quality\s+)?(?:issues|problems|anomalies)\s+(?:(?:were|was|have\s+been|has\s+been)\s+)?"
    r"(?:found|detected|reported|identified|observed|seen)\b"
    r"|\ball\s+(?:\d+\s+|of\s+the\s+|the\s+)?checks\s+(?:have\s+)?(?:passed|pass|succeeded|are\s+(?:passing|green))\b"
    r"|\bevery\s+check\s+(?:has\s+)?(?:passed|passes|succeeded)\b"
    r"|\beverything\s+(?:passed|passes|looks\s+(?:good|clean|fine))\b"
    r"|\b(?:the\s+)?(?:data(?:base)?|dataset)\s+(?:is|looks)\s+(?:clean|healthy|perfect|in\s+good\s+shape)\b"
    r"|\bno\s+(?:data[- ]quality\s+)?(?:issues|problems)\b\s*(?:[.!]|$))"
    r"|(?P<fail>\bno\s+(?:checks?\s+)?(?:failures|failed)\s+(?:(?:were|was)\s+)?(?:found|detected|reported)\b"
    r"|\bnothing\s+failed\b|\bno\s+checks?\s+failed\b|\bzero\s+failures\b|\bno\s+failing\s+checks\b)",
    re.I)
_NO_ISSUES_SKIP = re.compile(
    r"\b(?:if|once|until|unless|whether|when|would|could|should|might|not\s+all|except|but|apart|aside|"
    r"other\s+than|besides|these|those|remaining|other|rest|following|listed|below|above|here|this|that|"
    r"below|previous|last\s+(?:week|run|scan|time)|yesterday|expected|goal|target)\b", re.I)

_SUMMARY_NUM = (r"(?P<n>\d{1,3}(?:,\d{3})*|\d+|zero|no|one|two|three|four|five|six|seven|eight|nine|ten|eleven|"
                r"twelve|thirteen|fourteen|fifteen|sixteen|seventeen|eighteen|nineteen|twenty)")
#: "24 checks that ran", "20 checks were run": the number of checks in the scan
_CHECKS_RAN = re.compile(rf"(?<![\w.,]){_SUMMARY_NUM}\s+(?P<w>checks)\s+(?:that\s+|which\s+)?"
                         r"(?:ran|were\s+run|have\s+run)\b", re.I)
_SUMMARY_RES = [
    re.compile(rf"(?<![\w.,]){_SUMMARY_NUM}\s+(?P<w>failed|warned|passed|errored|errors?|failures|warnings)"
               r"(?!\s*(?:rows?|records?|values?|with|on|in|for|because|due|to|the|at|and\s+\d+\s+(?:rows|records)))",
               re.I),
    re.compile(rf"(?<![\w.,]){_SUMMARY_NUM}\s+(?:of\s+(?:the\s+)?(?P<m>\d+)\s+)?(?:checks?|tests?)\s+"
               r"(?:have\s+|has\s+)?"
               r"(?:(?:were|are|is|was)\s+)?(?P<w>failed|failing|passed|passing|warned|warning|errored|erroring|"
               r"in\s+error|raised\s+(?:a\s+)?warnings?|could\s+not\s+run)\b", re.I),
    re.compile(rf"(?<![\w.,]){_SUMMARY_NUM}\s+(?P<w>failing|failed|passing|passed|warning|warned|erroring|errored)"
               r"\s+checks?\b", re.I),
    re.compile(rf"(?:\(|\bof\s+(?:the\s+)?|\ball\s+|\bran\s+|\btotal\s+of\s+){_SUMMARY_NUM}\s+(?P<w>checks)\b", re.I),
    _CHECKS_RAN,
    re.compile(r"(?<![\w])(?P<w>(?:passed|passing|failed|failing|warned|warning|errored)\s+checks|failed|failures|"
               r"failing|passed|passing|warned|warnings?|errors?|errored|"
               r"checks(?:\s+run)?|total\s+checks)\s*[:=]\s*(?P<n>\d{1,3}(?:,\d{3})*|\d+)(?![\w.,%]|,\d)", re.I),
]
#: a line or list item that is only a count of checks by status ("- 5 warned", "4 failed."): a summary bullet
_COUNT_ALONE = re.compile(r"\s*(?:[-*+]\s+)?\d{1,3}\s+(?:failed|warned|passed|errors?|errored)\s*[.;,]?\s*")
_SUMMARY_SCOPED = re.compile(r"\b(?:other|remaining|rest\s+of\s+the|these|those|further|additional|another|"
                             r"last|first|previous|more|only|every|each)\s*$", re.I)
_SUMMARY_WORDNUM = {"zero": 0, "no": 0, "one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6, "seven": 7,
                    "eight": 8, "nine": 9, "ten": 10, "eleven": 11, "twelve": 12, "thirteen": 13, "fourteen": 14,
                    "fifteen": 15, "sixteen": 16, "seventeen": 17, "eighteen": 18, "nineteen": 19, "twenty": 20}


def check_no_issues(res: Results, idx: Index, text: str, item: IndexedFinding | None, ctx: Ctx,
                    explicit: list[Mention]) -> None:
    """"No issues found", "all checks passed", ... while a check in scope (the findings or tables the sentence
    names, else the section's table, else the whole report) did not pass."""
    m = _NO_ISSUES.search(text)
    if not m:
        return
    head = text[:m.start()]
    if _NO_ISSUES_SKIP.search(head) or _NO_ISSUES_SKIP.search(text[m.end():m.end() + 40]):
        return
    if re.search(r"\b(?:not|n['’]t|never|hardly)\s*$", head, re.I):
        return
    if ctx.status_class == "pass":
        return
    scope: list[IndexedFinding]
    distinct = {id(i): i for _s, _e, i in explicit}
    tables = idx.tables_in(text.lower())
    if distinct:
        scope = list(distinct.values())
    elif item is not None:
        scope = [item]
    elif tables:
        scope = [i for t in tables for i in idx.by_table.get(t, ())]
    elif ctx.tables:
        scope = [i for t in ctx.tables for i in idx.by_table.get(t, ())]
    else:
        scope = list(idx.items)
    statuses = ("fail", "error") if m.group("fail") else ("fail", "warn", "error")
    wrong = [i for i in scope if i.status in statuses]
    phrase = m.group().strip()
    if not wrong and not (scope is idx.items and idx.doc.error):
        res.add_ok(f'"{phrase}" matches the findings')
        return
    count = {st: sum(1 for i in scope if i.status == st) for st in ("fail", "warn", "error")}
    actual = f"{count['fail']} failed, {count['warn']} warned, {count['error']} errors"
    names = ", ".join(f"{i.name} ({i.status})" for i in wrong[:6]) + (" …" if len(wrong) > 6 else "")
    if not wrong:
        names = f"the scan could not complete ({idx.doc.error})"
    res.add_bad(None, phrase, actual,
                f'The report says "{phrase}", but {len(wrong)} check(s) did not pass: {names}.')


def check_summary_counts(res: Results, idx: Index, text: str, code: Code, *, only_ran: bool = False) -> None:
    """Counts of checks by status ("8 failed, 2 warned", "3 checks failed", "(20 checks)", "Failed: 8") that
    disagree with the findings' summary (or, when the sentence names tables, those tables' checks).
    ``only_ran``: only "N checks (that) ran", in a text about one finding."""
    masked = list(text)
    for s, e in code:
        masked[s:e] = MASK * (e - s)
    plain = "".join(masked)
    low = plain.lower()
    if only_ran:
        for m in _CHECKS_RAN.finditer(plain):
            _check_count(res, idx.doc.summary, [], plain, m)
        return
    if not re.search(r"\bchecks?\b|\btests?\b", low) and len(re.findall(
            r"\b\d+\s+(?:failed|warned|passed|errors?|errored)\b", low)) < 2 and not _SUMMARY_RES[-1].search(plain) \
            and not _COUNT_ALONE.fullmatch(low):
        return
    per_table = [
        {st: sum(1 for i in idx.by_table.get(t, ()) if i.status == st) for st in ("pass", "fail", "warn", "error")}
        for t in idx.tables_in(low)]
    seen: set[int] = set()
    for regex in _SUMMARY_RES:
        for m in regex.finditer(plain):
            if m.start("n") in seen:
                continue
            seen.add(m.start("n"))
            _check_count(res, idx.doc.summary, per_table, plain, m)


def _check_count(res: Results, summary: Summary, per_table: list[dict[str, int]], plain: str,
                 m: re.Match[str]) -> None:
    """One count of checks by status, against the summary (or a named table's checks)."""
    if _SUMMARY_SCOPED.search(plain[max(0, m.start("n") - 30):m.start("n")]):
        return  # "the other 9 checks passed": a part, not the summary
    raw_n = m.group("n").lower()
    if raw_n == "no" and m.group("w").lower().startswith("fail"):
        return  # "no checks failed" is a no-issues claim, checked once by check_no_issues()
    n = _SUMMARY_WORDNUM.get(raw_n)
    if n is None:
        n = int(raw_n.replace(",", ""))
    allowed_label = _allowed_counts(summary, per_table, m.group("w").lower())
    if allowed_label is None:
        return
    allowed, label = allowed_label
    if m.groupdict().get("m"):
        total = int(m.group("m"))
        if total not in {summary.checks} | {sum(c.values()) for c in per_table}:
            _summary_bad(res, f"{total} checks", "checks", summary)
    if n in allowed:
        res.add_ok(f"summary: {m.group().strip()} matches")
    else:
        _summary_bad(res, m.group().strip(), label, summary)


def _allowed_counts(s: Summary, per_table: list[dict[str, int]], w: str) -> tuple[set[int], str] | None:
    """The counts a status word may be given (failures may include errors or warnings), and its label."""
    if w.startswith("fail") or w.startswith("broken"):
        allowed = {s.failed, s.failed + s.errors, s.failed + s.warned, s.failed + s.warned + s.errors}
        allowed |= {c["fail"] + c["error"] for c in per_table} | {c["fail"] for c in per_table}
        return allowed, "failed"
    if w.startswith("pass") or w == "green":
        return {s.passed} | {c["pass"] for c in per_table}, "passed"
    if w.startswith("warn") or "warning" in w:
        return {s.warned} | {c["warn"] for c in per_table}, "warned"
    if w.startswith("error") or "error" in w or "could not" in w:
        return {s.errors} | {c["error"] for c in per_table}, "errors"
    if "checks" in w:
        return {s.checks} | {sum(c.values()) for c in per_table}, "checks"
    return None


def _summary_bad(res: Results, says: str, label: str, s: Summary) -> None:
    actual = {"failed": f"{s.failed} failed", "passed": f"{s.passed} passed", "warned": f"{s.warned} warned",
              "errors": f"{s.errors} errors", "checks": f"{s.checks} checks"}[label]
    res.add_bad(None, says, actual,
                f'The report says "{says}", but the findings show {s.failed} failed, {s.warned} warned, '
                f"{s.passed} passed and {s.errors} errors ({s.checks} checks).")
