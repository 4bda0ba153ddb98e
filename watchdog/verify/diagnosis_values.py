"""Offending values, their counts, and rows shared with other checks, as a report writes them about a diagnosis.

``'Active ' ×5``, ``"n/a" appears 29 times``, ``659 ×93`` → that value's count of failing rows; ``point to 4 customer
ids``, ``2 distinct wrong values`` → the number of different wrong values (when the diagnosis lists fewer than it
may, that is all of them; otherwise at least as many as listed); ``4 of these rows also fail X`` → the rows the
two checks share, from either one's diagnosis. A wrong value itself (an id) is never read as a count.
"""

from __future__ import annotations

import re

from watchdog.verify.diagnosis_facts import DiagFacts
from watchdog.verify.locate import Index, IndexedFinding, Mention
from watchdog.verify.model import Results
from watchdog.verify.numbers import Num, format_count

__all__ = ["OVERLAP_WORDS", "distinct_values", "overlap", "value_counts"]

def value_counts(res: Results, item: IndexedFinding, facts: DiagFacts, clause: str,
                  nums: list[Num]) -> list[tuple[int, int]]:
    """``'Active ' ×5``, ``'actve' (2 rows)``, ``"n/a" appears 4 times``: the count of a listed offending value."""
    blanks: list[tuple[int, int]] = []
    for v in facts.values:
        value = v.get("value")
        if value is None or isinstance(value, bool) or not isinstance(v.get("failing"), (int, float)):
            continue
        text = str(value)
        quoted = r"['\"`‘“]" + re.escape(text) + r"['\"`’”]"
        if isinstance(value, (int, float)):  # a key or a number may stand bare when a count follows it: 659 ×93
            quoted += rf"|(?<![\w.,]){re.escape(text)}(?![\w.,]\d)(?=\s*[x×*]\s*\d)"
        for m in re.finditer(quoted, clause):
            near = [n for n in nums if 0 <= n.start - m.end() <= 16 and re.fullmatch(
                r"['\"`’”]?\s*(?:[x×*(:]|appears|occurs|shows\s+up|is\s+used|in)?\s*", clause[m.end():n.start])]
            if not near:
                continue
            n = near[0]
            after = clause[n.end:n.end + 12]
            if not (re.match(r"\s*(?:times|rows|records|x\b|×|\))", after, re.I) or re.search(r"[x×*]\s*$", clause[
                    m.end():n.start])):
                continue
            if n.matches(float(v["failing"])):
                res.add_ok(f"{item.name}: {text!r} ×{n.text} matches the diagnosis")
            else:
                says = " ".join(clause.split())
                res.add_bad(item.name, says, f"{text!r} ×{format_count(v['failing'])}",
                            f"The report says {says!r} about {item.name}, but the diagnosis counts {text!r} in "
                            f"{format_count(v['failing'])} failing rows.")
            blanks.append((n.start, n.end))
    return blanks


_IDS = re.compile(r"^\s*(?:(?:distinct|different|missing|unknown|wrong|bad|invalid|non-?existent|separate)\s+)?"
                  r"(?:[\w.]+\s+){0,2}?(?:ids?|values?|keys?|codes?|references?|parents?)\b", re.I)
OVERLAP_WORDS = re.compile(r"\b(?:also|as\s+well|same\s+rows?|overlap\w*|shared\s+rows|share\s+(?:\d+\s+)?rows|both|"
                           r"too)\b", re.I)


def distinct_values(res: Results, item: IndexedFinding, facts: DiagFacts, clause: str,
                     nums: list[Num]) -> list[tuple[int, int]]:
    """``point to 4 customer ids: 1017, 1022, …``: the number of different wrong values, and the values."""
    if not facts.values:
        return []
    listed = {float(v["value"]) for v in facts.values if isinstance(v.get("value"), (int, float))
              and not isinstance(v.get("value"), bool)}
    blanks = []
    for n in nums:
        if not n.percent and n.value in listed and not n.approx:
            blanks.append((n.start, n.end))      # a wrong value itself (an id), not a count
            continue
        if n.percent or not _IDS.match(clause[n.end:]):
            continue
        known = facts.values_distinct
        ok = n.matches(float(known)) if known is not None else n.value >= len(facts.values) or n.approx == "over"
        says = " ".join(clause.split())
        if ok:
            res.add_ok(f"{item.name}: {n.text} matches the number of different wrong values")
        else:
            actual = f"{known} different values" if known is not None else f"at least {len(facts.values)}"
            res.add_bad(item.name, says, actual, f"The report says {says!r} about {item.name}, but the diagnosis "
                        f"finds {actual} among the failing rows.")
        blanks.append((n.start, n.end))
    return blanks


def overlap(res: Results, item: IndexedFinding, facts: DiagFacts, clause: str, nums: list[Num], idx: Index,
             explicit: list[Mention]) -> list[tuple[int, int]]:
    """"4 of these rows also fail X": the rows a finding shares with another, from either side's diagnosis."""
    if not OVERLAP_WORDS.search(clause) or not nums:
        return []
    tables = frozenset({item.table_key} if item.table_key else ())
    others = [i for i in idx.loose(clause.lower(), tables, strict=False) if i is not item]
    named = [m[2] for m in idx.explicit(clause) if m[2] is not item]
    others = [o for o in {id(o): o for o in named + others}.values() if o.status in ("fail", "warn")]
    if len(others) != 1:  # which check is meant is not clear: a figure of the overlap is still the overlap's
        return [(n.start, n.end) for n in nums if not n.percent and any(
            isinstance(o.get("rows"), (int, float)) and n.matches(float(o["rows"])) for o in facts.overlap)]
    other = others[0]
    shared = {o.get("check"): o.get("rows") for o in facts.overlap}
    rows = shared.get(other.name)
    if rows is None:
        theirs = DiagFacts.of(other.f)
        rows = {o.get("check"): o.get("rows") for o in (theirs.overlap if theirs else [])}.get(item.name)
    blanks = []
    for n in nums:
        if n.percent:
            continue
        if rows is not None and n.matches(float(rows)):
            res.add_ok(f"{item.name}: {n.text} rows shared with {other.name}")
        elif rows is not None or facts.overlap:
            says = " ".join(clause.split())
            actual = f"{format_count(rows or 0)} shared rows"
            res.add_bad(item.name, says, actual, f"The report says {says!r}, but the diagnosis finds {actual} "
                        f"between {item.name} and {other.name}.")
        else:
            continue
        blanks.append((n.start, n.end))
    return blanks
