"""Likely causes grounded in the diagnosis, and how many checks' causes cite it.

A cause of a diagnosed check that names a segment, a value or a date must be one the diagnosis holds:

* ``column = 'value'`` (or ``column is 'value'``) names a segment: it must be one of the diagnosis's segments,
  one of its offending values (for the check's own column) or an accepted value of the check;
* a value that the finding's sample rows show in another column (``mobile_app`` where a sample row has
  ``source: mobile_app``) names that segment: the diagnosis must hold it;
* a date (a day, a part of a month, a month) must be the first or last failing row's, the first failed run's,
  or the table's first or last row's (a day off, or three days for a part of a month or a month).

:func:`check_causes` checks one check's causes (the graph's program mode calls it on the model's answer);
:func:`check_cause_sections` finds the causes in a rendered report (a ``Likely causes`` label or list under a
check's heading, or ``Cause:`` items) so that ``watchdog verify`` gives the same verdict. :func:`citation_share`
measures a draft: the share of diagnosed failing checks whose causes cite a diagnosis fact.
"""

from __future__ import annotations

import re
from datetime import timedelta
from typing import Any

from watchdog.findings import Finding, FindingsDoc
from watchdog.verify.diagnosis_dates import date_spans, parse_iso_day
from watchdog.verify.diagnosis_facts import DiagFacts, mentions, norm
from watchdog.verify.markdown import blocks, clean
from watchdog.verify.model import Results

__all__ = ["cause_texts", "check_causes", "check_cause_sections", "cites_diagnosis", "citation_share"]

_PAIR = re.compile(r"\b(?P<col>[A-Za-z_][\w]*)\s*(?:=|==|is|equals)\s*['\"`‘“](?P<val>[^'\"`’”]{1,80})['\"`’”]")
_CAUSE_LABEL = re.compile(r"^\W*(?:likely\s+|possible\s+|probable\s+|root\s+)?causes?\b\W*(?::\s*(?P<rest>.*))?$",
                          re.I | re.S)
_OTHER_LABEL = re.compile(r"^\W*(?:suggested\s+|possible\s+|recommended\s+)?(?:fix(?:es)?|remediation|next\s+steps?|"
                          r"actions?|status|impact|what\s+was\s+found|details?|sample\w*)\b", re.I)


def _diagnosed(f: Finding) -> DiagFacts | None:
    return DiagFacts.of(f) if f.status in ("fail", "warn") else None


def _sample_values(f: Finding, facts: DiagFacts) -> dict[str, str]:
    """normalised value -> the column a sample row shows it in, for values that look like a segment's: in a
    column the diagnosis grouped by, or repeated in the sample rows (not a name, an address, an id)."""
    own = {f.column, *(f.columns or [])}
    grouped = {s.column for s in facts.segments}
    seen: dict[tuple[str, str], int] = {}
    for row in f.sample or []:
        for col, v in row.items():
            if col in own or not isinstance(v, str) or not re.search(r"[A-Za-z]", v) or len(v) > 40 or \
                    re.search(r"[@/:]", v):
                continue
            seen[(col, norm(v))] = seen.get((col, norm(v)), 0) + 1
    return {v: col for (col, v), n in sorted(seen.items()) if v and (n >= 2 or col in grouped)}


def _held(facts: DiagFacts, f: Finding, column: str | None, value: str) -> bool:
    v = norm(value)
    if any(s.value_norm == v and (column is None or norm(s.column) == norm(column)) for s in facts.segments):
        return True
    if any(norm(x.get("value")) == v for x in facts.values):
        return True
    accepted = f.params.get("values") if isinstance(f.params, dict) else None
    return isinstance(accepted, list) and any(norm(a) == v for a in accepted)


def _dates_held(facts: DiagFacts) -> list[Any]:
    onset = facts.onset or {}
    keys = [onset.get(k) for k in ("first", "last", "table_first", "table_last")]
    keys.append((facts.first_failed_run or {}).get("at"))
    return [d for d in (parse_iso_day(k) for k in keys) if d is not None]


def check_causes(res: Results, f: Finding, causes: list[str]) -> None:
    """Flag each cause of ``f`` that names a segment, value or date its diagnosis does not hold."""
    facts = _diagnosed(f)
    if facts is None:
        return
    seen = _sample_values(f, facts)
    held_days = _dates_held(facts)
    year = held_days[0].year if held_days else 2000
    for cause in causes:
        text = clean(cause)[0]
        says = " ".join(text.split())
        for m in _PAIR.finditer(text):
            col, val = m.group("col"), m.group("val")
            if not _held(facts, f, col, val) and not _held(facts, f, None, val):
                _bad(res, f, says, f"{col} = '{val}'", facts)
        for value, col in seen.items():
            if mentions(text, value) and not _held(facts, f, col, value):
                _bad(res, f, says, f"{col} = '{value}'", facts)
        for _s, _e, lo, hi, slack in date_spans(text, year):
            pad = timedelta(days=slack)
            if not any(lo - pad <= d <= hi + pad for d in held_days):
                held = ", ".join(str(d) for d in held_days[:2]) or "no date"
                res.add_bad(f.name, says, f"the diagnosis dates: {held}",
                            f"The likely cause {says!r} of {f.name} names a date the diagnosis does not hold "
                            f"(its failing rows date from {held}): name only dates the diagnosis gives.")


def _bad(res: Results, f: Finding, says: str, named: str, facts: DiagFacts) -> None:
    res.add_bad(f.name, says, facts.summary(),
                f"The likely cause {says!r} of {f.name} names {named}, which the diagnosis does not hold "
                f"({facts.summary()}): ground the causes in the diagnosis.")


def cause_texts(markdown: str, doc: FindingsDoc) -> dict[str, list[str]]:
    """The likely causes a rendered report gives per check: the items of a ``Likely causes`` label or list
    (or a ``Cause:`` line) in the section of a check's heading."""
    names = sorted((f.name for f in doc.findings), key=len, reverse=True)
    out: dict[str, list[str]] = {}
    current: str | None = None
    in_causes = False
    cause_level = -1
    for block in blocks(markdown):
        text = clean(block.text)[0].strip()
        if block.kind == "heading":
            low = text.lower()
            named = next((n for n in names if n.lower() in low), None)
            if named is not None or block.level <= 2:
                current = named
            in_causes = bool(_CAUSE_LABEL.match(text)) and current is not None
            cause_level = -1
            continue
        if current is None:
            continue
        label = _CAUSE_LABEL.match(text)
        if label:
            rest = (label.group("rest") or "").strip()
            if rest:
                out.setdefault(current, []).append(rest)
            in_causes = True
            cause_level = block.level if block.kind == "item" else -1
            continue
        if _OTHER_LABEL.match(text) and (block.kind != "item" or re.match(r"^\W*\w[\w\s]*:", text)):
            in_causes = False
            continue
        if in_causes and block.kind == "item" and block.level > cause_level:
            out.setdefault(current, []).append(text)
        elif block.kind in ("para", "table", "break") and not label:
            in_causes = False
    return out


def check_cause_sections(res: Results, markdown: str, doc: FindingsDoc) -> None:
    """:func:`check_causes` for every check's causes found in a rendered report."""
    by_name = {f.name: f for f in doc.findings}
    for name, causes in cause_texts(markdown, doc).items():
        check_causes(res, by_name[name], causes)


def cites_diagnosis(f: Finding, causes: list[str]) -> bool:
    """Whether one of the causes quotes a fact of the diagnosis: a segment's value, an offending value, a date
    of the onset or another check failing on the same rows."""
    facts = _diagnosed(f)
    if facts is None:
        return False
    held_days = _dates_held(facts)[:2] + _dates_held(facts)[4:]
    year = held_days[0].year if held_days else 2000
    for cause in causes:
        text = clean(cause)[0]
        low = norm(text)
        if any(s.named_in(low) for s in facts.segments):
            return True
        if any(x.get("value") is not None and str(x["value"]).strip() and mentions(text, x["value"])
               for x in facts.values):
            return True
        if any(str(o.get("check", "")).lower() in text.lower() for o in facts.overlap if o.get("check")):
            return True
        for _s, _e, lo, hi, slack in date_spans(text, year):
            if any(lo - timedelta(days=slack) <= d <= hi + timedelta(days=slack) for d in held_days):
                return True
    return False


def _has_facts(f: Finding) -> bool:
    facts = _diagnosed(f)
    return facts is not None and bool(facts.segments or facts.values or facts.overlap or (facts.onset or {}).get(
        "first") or facts.first_failed_run)


def citation_share(draft: str | dict[str, Any], findings: FindingsDoc | dict[str, Any]) -> dict[str, Any]:
    """The share of failing (or warning) checks with diagnosis facts whose likely causes cite one.

    ``draft`` is a rendered report (Markdown) or a program-mode answer (``{"checks": [{"name", "causes"}]}`` or
    ``{"checks": {name: {"causes": [...]}}}``). Returns ``{"checks", "citing", "share", "per_check"}``;
    ``share`` is None when no check had diagnosis facts to cite."""
    doc = FindingsDoc.validate(findings)
    if isinstance(draft, dict):
        entries = draft.get("checks") or []
        if isinstance(entries, dict):
            entries = [{"name": k, **(v if isinstance(v, dict) else {})} for k, v in entries.items()]
        causes = {str(e.get("name", "")).strip("` "): [str(c) for c in e.get("causes") or []]
                  for e in entries if isinstance(e, dict)}
    else:
        causes = cause_texts(draft, doc)
    per_check = {f.name: cites_diagnosis(f, causes.get(f.name, [])) for f in doc.findings if _has_facts(f)}
    citing = sum(per_check.values())
    return {"checks": len(per_check), "citing": citing,
            "share": round(citing / len(per_check), 4) if per_check else None, "per_check": per_check}
