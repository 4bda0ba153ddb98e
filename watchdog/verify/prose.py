"""Check one unit of prose (a sentence, heading, list item sentence or table cell) against the findings.

:func:`check_sentence` resolves the finding the unit is about, checks the statuses and "no issues"
claims in it, summary counts when it is about no finding, and its numbers; a unit naming several
findings is checked clause by clause (:func:`_check_clauses`).
"""

from __future__ import annotations

import re

from watchdog.verify.consistency import check_numbers
from watchdog.verify.diagnosis import review_diagnosis
from watchdog.verify.locate import (
    Ctx,
    Index,
    IndexedFinding,
    Mention,
    resolve,
    without_names,
)
from watchdog.verify.markdown import Code, clause_bounds, clean
from watchdog.verify.model import Results
from watchdog.verify.problems import check_problem_claims
from watchdog.verify.status import section_status, status_claims
from watchdog.verify.summary import check_no_issues, check_summary_counts

__all__ = ["check_sentence"]

_CLAUSE_OR_PAREN = re.compile(r"[()\[\]]|;|:\s|\s[—–]\s|,\s|\s(?:and|but|while|whereas|whilst|or)\s")


def check_sentence(res: Results, idx: Index, raw_text: str, ctx: Ctx, *,
                   cleaned: tuple[str, Code] | None = None) -> IndexedFinding | None:
    """Check one unit (``raw_text``, or its already ``cleaned`` text and code spans) in context ``ctx``; return
    the one finding it is about, if any."""
    text, code = cleaned if cleaned is not None else clean(raw_text)
    item, explicit, ambiguous = resolve(res, idx, text, ctx)
    status_claims(res, text, explicit, ctx)
    check_no_issues(res, idx, text, item, ctx, explicit)
    if item is None and not ambiguous and ctx.finding is None:
        check_summary_counts(res, idx, text, code)
    else:  # "There were 24 checks that ran" is about the whole scan wherever it stands
        check_summary_counts(res, idx, text, code, only_ran=True)
    check_problem_claims(res, idx, text, item, ctx, explicit=bool(explicit), ambiguous=ambiguous)
    text = review_diagnosis(res, idx, text, explicit, item, ctx)  # its numbers blanked: checked there
    if ambiguous:
        _check_clauses(res, idx, text, code, explicit, ctx)
        return None
    if item is not None:
        if not explicit:
            section_status(res, text, item)
        check_numbers(res, idx, text, code, explicit, item)
    return item


def _check_clauses(res: Results, idx: Index, text: str, code: Code, explicit: list[Mention], ctx: Ctx) -> None:
    """A sentence about several findings: check clause by clause, numbers after the name they follow."""
    tables = frozenset(idx.tables_in(text.lower())) | ctx.tables
    listing = False  # the previous clause only listed names: what follows is "respectively"
    bounds = clause_bounds(text, _CLAUSE_OR_PAREN)
    for a, b in zip(bounds, bounds[1:], strict=False):
        seg = text[a:b]
        inside = [(s - a, e - a, i) for s, e, i in explicit if s >= a and e <= b]
        sub_code = tuple((max(s - a, 0), min(e, b) - a) for s, e in code if e > a and s < b)
        distinct = {id(i): i for _s, _e, i in inside}
        rest = without_names(seg, inside)
        if distinct and not re.search(r"[^\W\d_]{3,}|\d", re.sub(r"\b(?:and|or|the|checks?|as|well)\b", "",
                                                                     rest, flags=re.I)):
            listing = True
        elif len(distinct) == 1 and not listing:
            (item,) = distinct.values()
            check_numbers(res, idx, seg, sub_code, inside, item)
        elif len(distinct) > 1 and not listing:
            _check_names_in_clause(res, idx, seg, sub_code, inside)
        elif not distinct and not listing:
            loose = idx.loose(seg.lower(), tables)
            if len(loose) == 1:
                check_numbers(res, idx, seg, sub_code, [], loose[0])


def _check_names_in_clause(res: Results, idx: Index, seg: str, sub_code: Code, inside: list[Mention]) -> None:
    """A clause naming several findings: a number belongs to the name it follows."""
    for k, (s, e, item) in enumerate(inside):
        end = inside[k + 1][0] if k + 1 < len(inside) else len(seg)
        if inside[k + 1:] and inside[k + 1][2] is item:
            continue
        piece = seg[s:end]
        pc = tuple((max(cs - s, 0), min(ce, end) - s) for cs, ce in sub_code if ce > s and cs < end)
        check_numbers(res, idx, piece, pc, [(0, e - s, item)], item)
