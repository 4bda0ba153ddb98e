"""A problem claimed, without a number, about a check that passed: "missing names" while the only
``not_null`` check on a ``name`` column passed with 0 rows missing one.

:func:`check_problem_claims` reads one unit that speaks of no other finding and looks for a clear claim
of a problem in words: "missing <noun>", "<noun> (are) missing", "records without a <noun>", "ensure all
… have a <noun>" (``not_null``), "duplicate/duplicated/repeated <noun>" (``unique``). The noun matches a
column when it is the column's name or the column's last word ("names" ↔ ``name``, ``first_name``;
singular or plural, underscores as spaces). The claim is bad only when exactly one check of that kind
on a matching column exists among those that did not fail, it counts 0 failing rows (0 duplicated
values), and no check of that kind on a matching column (nor a custom check whose name holds the noun)
failed, warned or errored: then "missing names" may be about that one. Negated, hedged, conditional or
numbered claims, units in a check's own section and units in a passing list are left alone: only clear
contradictions are flagged, once per check.
"""

from __future__ import annotations

import re

from watchdog.verify.locate import Ctx, Index, IndexedFinding
from watchdog.verify.model import Results

__all__ = ["check_problem_claims"]

_W = r"[A-Za-z][A-Za-z_-]*"
_PHRASE = rf"({_W}(?:\s+{_W})?)"
# (kind, pattern); group 1 is the noun phrase, its last word the noun (or any word, see _nouns)
_CLAIMS: tuple[tuple[str, re.Pattern[str]], ...] = (
    ("not_null", re.compile(rf"\bmissing\s+(?:an?\s+|the\s+)?{_PHRASE}", re.I)),
    ("not_null", re.compile(rf"\b({_W})\s+(?:(?:are|is|were|was)\s+)?missing\b(?!\s+(?:from|in)\b)", re.I)),
    ("not_null", re.compile(rf"\b(?:records|rows|entries)\s+(?:without|lacking|with\s+no)\s+(?:an?\s+)?{_PHRASE}",
                            re.I)),
    ("not_null", re.compile(rf"^\s*(?:ensure|make\s+sure)\s+(?:that\s+)?(?:all|every|each)\b[^.;:]{{0,60}}?\s"
                            rf"(?:have|has)\s+(?:an?\s+)?{_PHRASE}\s*\.?\s*$", re.I)),
    ("unique", re.compile(rf"\b(?:duplicate|duplicated|repeated)\s+{_PHRASE}", re.I)),
)
# the sentence hedges, negates, guards, or speaks of passing: not a clear claim of a problem
_NOT_A_CLAIM = re.compile(
    r"\d|\b(?:if|whether|unless|would|could|might|may|should\s+(?:any|there)|any|prevent\w*|avoid\w*|guard\w*|"
    r"monitor\w*|continue\w*|keep\w*|maintain\w*|still|already|remain\w*|pass\w*|ok|clean|free|zero|none|never|"
    r"nothing|no\s+longer|checks?\s+(?:for|whether|if)|checked|checking|looks?\s+for|test\w*|detect\w*|verif\w*|"
    r"count\w*|measur\w*|future|again|expect\w*|must|rule|fixed|resolved|previous\w*|earlier|last\s+(?:week|month|"
    r"run|scan|time)|used\s+to|before|historic\w*)\b", re.I)
_NEGATED_BEFORE = re.compile(r"\b(?:no|not|without|zero|none|never|nor|n't)\b", re.I)
_STOP = {"a", "an", "the", "and", "or", "in", "of", "for", "on", "with", "some", "all", "from", "to", "values",
         "value", "records", "record", "rows", "row", "entries", "data", "fields", "field"}


def _singular(word: str) -> str:
    w = word.lower()
    if w.endswith("ies") and len(w) > 4:
        return w[:-3] + "y"
    if w.endswith(("ses", "xes", "ches", "shes")):
        return w[:-2]
    if w.endswith("s") and not w.endswith("ss") and len(w) > 3:
        return w[:-1]
    return w


def _nouns(phrase: str) -> list[str]:
    """The phrase's words that may name a column ("web domains" → web, domain; "email addresses" → email,
    address, email_address)."""
    words = [_singular(w.replace("-", "_")) for w in phrase.split()]
    words = [w for w in words if w not in _STOP]
    out = list(words)
    if len(words) == 2:
        out.append("_".join(words))
    return out


def _columns(item: IndexedFinding) -> list[str]:
    f = item.f
    return [c.lower() for c in (f.columns or ([f.column] if f.column else []))]


def _matches(noun: str, column: str) -> bool:
    return column == noun or column.split("_")[-1] == noun


def _quantity(item: IndexedFinding) -> str | None:
    """The passing check's own figure, when it is 0 (else the claim may be true); None otherwise."""
    f = item.f
    col = " ".join(_columns(item)[0].split("_")) if _columns(item) else "value"
    if f.check == "not_null":
        return f"0 rows with a missing {col}" if f.failing == 0 else None
    dup = (f.details or {}).get("duplicate_values", f.failing)
    return f"0 duplicated {col} values" if dup == 0 and f.failing == 0 else None


def check_problem_claims(res: Results, idx: Index, text: str, item: IndexedFinding | None, ctx: Ctx,
                         *, explicit: bool, ambiguous: bool) -> None:
    """Flag a clear, numberless claim of a problem (missing / duplicate values) about a check that passed.
    Only for a unit outside any check's section that names no finding exactly (see the module's docstring)."""
    if explicit or ambiguous or ctx.status_class is not None or _NOT_A_CLAIM.search(text):
        return
    if ctx.finding is not None:  # a check's own section: its description, causes and fixes
        return
    for kind, pattern in _CLAIMS:
        for m in pattern.finditer(text):
            before = " ".join(text[:m.start()].split()[-4:])
            if _NEGATED_BEFORE.search(before):
                continue
            target = _target(idx, kind, _nouns(m.group(1)))
            if target is None or (item is not None and item is not target):
                continue
            quantity = _quantity(target)
            if quantity is None:
                continue
            actual = "pass"
            if any(b.finding == target.name and b.actual == actual for b in res.bad):
                continue
            says = " ".join(m.group(0).split())
            words = m.group(1).split()
            col = _columns(target)[0]
            if len(words) == 2 and not (_matches(_singular(words[1]), col) or _matches("_".join(
                    _singular(w) for w in words), col)):  # "without a name cause": the claim ends at "name"
                says = " ".join(text[m.start():m.start(1) + len(words[0])].split())
            res.add_bad(target.name, says, actual,
                        f"{target.name} passed ({quantity}), but the report speaks of \"{says}\" as a problem.")


def _target(idx: Index, kind: str, nouns: list[str]) -> IndexedFinding | None:
    """The one passing check of ``kind`` on a column matching ``nouns``, when no check that may be meant
    instead did not pass; None when there is none or more than one."""
    if not nouns:
        return None
    passing: list[IndexedFinding] = []
    for it in idx.items:
        cols = _columns(it)
        hit = it.f.check == kind and any(_matches(n, c) for n in nouns for c in cols)
        if it.f.check == "custom_sql" and it.status != "pass":
            words = {_singular(w) for w in re.split(r"[_\W]+", it.name.lower()) if w}
            if any(n in words for n in nouns):
                return None
        if not hit:
            continue
        if it.status != "pass":
            return None
        if len(cols) == 1:
            passing.append(it)
        else:  # a check over several columns: never the flagged one, but it makes the noun ambiguous
            return None
    return passing[0] if len(passing) == 1 else None
