"""Dates a report writes about a diagnosis's onset: "since 2026-11-14", "all of them from mid-November on",
"between 3 and 9 October", "the latest on Nov 30".

A date after a start word (since, starting, began, from, as of, first … on, earliest) is held to the first
failing row's timestamp, a date after an end word (until, through, latest, last … on, most recent) to the
last one's, "between D1 and D2" / "from D1 to D2" to both. A date is a day (``2026-11-14``, ``Nov 14``,
``14 November 2026``), a part of a month (``early``/``mid``/``late`` ``November``: days 1-12, 8-22, 18-31)
or a month (``November 2026``; a bare month name only after such a word); without a year it takes the
onset's. A day may be one day off (time zones), a part of a month or a month three days. "Most of them since
…" (a part, not all) is only held to be before the last failing row. Relative dates ("last week") are left
alone; a finding whose diagnosis has no onset is not checked.
"""

from __future__ import annotations

import re
from datetime import date, timedelta
from typing import TYPE_CHECKING

from watchdog.verify.diagnosis_facts import DiagFacts

if TYPE_CHECKING:
    from watchdog.verify.locate import IndexedFinding
    from watchdog.verify.model import Results

__all__ = ["check_onset", "date_spans", "parse_iso_day"]

_MONTHS = {"jan": 1, "feb": 2, "mar": 3, "apr": 4, "may": 5, "jun": 6, "jul": 7, "aug": 8, "sep": 9, "oct": 10,
           "nov": 11, "dec": 12}
_MONTH = (r"(?:jan(?:uary)?|feb(?:ruary)?|mar(?:ch)?|apr(?:il)?|may|june?|july?|aug(?:ust)?|sept?(?:ember)?|"
          r"oct(?:ober)?|nov(?:ember)?|dec(?:ember)?)\.?")
_DATE = re.compile(
    rf"(?P<iso>\b(?P<iy>\d{{4}})-(?P<im>\d{{1,2}})-(?P<id>\d{{1,2}})(?:[T ]\d{{1,2}}:\d{{2}}(?::\d{{2}})?)?)"
    rf"|(?P<md>\b(?P<mdm>{_MONTH})\s+(?P<mdd>\d{{1,2}})(?:st|nd|rd|th)?\b(?:,?\s+(?P<mdy>\d{{4}}))?)"
    rf"|(?P<dm>\b(?P<dmd>\d{{1,2}})(?:st|nd|rd|th)?(?:\s+of)?\s+(?P<dmm>{_MONTH})(?:,?\s+(?P<dmy>\d{{4}}))?)"
    rf"|(?P<part>\b(?P<pp>early|mid|late|end\s+of|the\s+end\s+of|the\s+start\s+of|start\s+of|beginning\s+of)"
    rf"[-\s]+(?P<pm>{_MONTH})(?:\s+(?P<py>\d{{4}}))?)"
    rf"|(?P<my>\b(?P<mym>{_MONTH})\s+(?P<myy>\d{{4}})\b)"
    rf"|(?P<bare>\b(?P<bm>{_MONTH})\b)",
    re.I)
_START = re.compile(
    r"\b(?:since|starting(?:\s+(?:on|from|in|at))?|started(?:\s+(?:on|in|at))?|beginning(?:\s+(?:on|in))?|"
    r"began(?:\s+(?:on|in|at))?|from|as\s+of|onwards?\s+from|first\s+(?:\w+\s+){0,3}?(?:on|in|at|appeared|seen|was)|"
    r"earliest\s+(?:\w+\s+){0,3}?(?:on|in|at|is|was|dates?\s+from|from))\s+(?:the\s+)?$", re.I)
_END = re.compile(
    r"\b(?:until|till|through|up\s+to|latest\s+(?:\w+\s+){0,3}?(?:on|in|at|is|was)|"
    r"last\s+(?:failing|bad|broken|invalid|one|\w+\s+row)\s+(?:\w+\s+){0,2}?(?:on|in|at|is|was)|"
    r"most\s+recent\s+(?:\w+\s+){0,3}?(?:on|in|at|is|was))\s+(?:the\s+)?$", re.I)
_ABOUT_ROWS = re.compile(r"\b(?:they|them|all|fail\w*|rows?|records?|these|those|dat(?:e|es|ing)|appear\w*|began|"
                         r"start\w*|onwards?|since)\b", re.I)
_BETWEEN = re.compile(r"\bbetween\s+(?:the\s+)?$", re.I)
_PARTIAL = re.compile(r"\b(?:most|majority|bulk|many|some|several|half|nearly\s+all|almost\s+all|\d+\s+of)\b", re.I)
_PARTS = {"early": (1, 12), "mid": (8, 22), "late": (18, 31), "end of": (20, 31), "the end of": (20, 31),
          "start of": (1, 10), "the start of": (1, 10), "beginning of": (1, 10)}


def parse_iso_day(value: object) -> date | None:
    m = re.match(r"\s*(\d{4})-(\d{2})-(\d{2})", str(value or ""))
    if not m:
        return None
    try:
        return date(int(m.group(1)), int(m.group(2)), int(m.group(3)))
    except ValueError:
        return None


def _month(text: str) -> int:
    return _MONTHS[text.lower().rstrip(".")[:3]]


def _last_day(year: int, month: int) -> int:
    return ((date(year + (month == 12), month % 12 + 1, 1)) - timedelta(days=1)).day


def date_spans(text: str, default_year: int) -> list[tuple[int, int, date, date, int]]:
    """The dates written in ``text``: (start, end, first day, last day, slack in days)."""
    out = []
    for m in _DATE.finditer(text):
        try:
            if m.group("iso"):
                d = date(int(m.group("iy")), int(m.group("im")), int(m.group("id")))
                out.append((m.start(), m.end(), d, d, 1))
            elif m.group("md") or m.group("dm"):
                g = ("md", "mdm", "mdd", "mdy") if m.group("md") else ("dm", "dmm", "dmd", "dmy")
                year = int(m.group(g[3]) or default_year)
                d = date(year, _month(m.group(g[1])), int(m.group(g[2])))
                out.append((m.start(), m.end(), d, d, 1))
            elif m.group("part"):
                year, month = int(m.group("py") or default_year), _month(m.group("pm"))
                lo, hi = _PARTS[" ".join(m.group("pp").lower().split())]
                out.append((m.start(), m.end(), date(year, month, lo),
                            date(year, month, min(hi, _last_day(year, month))), 3))
            elif m.group("my") or m.group("bare"):
                if m.group("bare") and (m.group("bm").lower() == "may" or not m.group("bm")[0].isupper()):
                    continue  # "may" the verb; a bare month is a month only when capitalised
                month = _month(m.group("mym") or m.group("bm"))
                year = int(m.group("myy") or default_year)
                out.append((m.start(), m.end(), date(year, month, 1), date(year, month, _last_day(year, month)), 3))
        except ValueError:
            continue
    return out


def check_onset(res: Results, item: IndexedFinding, facts: DiagFacts, clause: str) -> bool:
    """Check the onset dates of one clause; True when the clause speaks of the onset (a start or end date)."""
    onset = facts.onset or {}
    first, last = parse_iso_day(onset.get("first")), parse_iso_day(onset.get("last"))
    run_at = parse_iso_day((facts.first_failed_run or {}).get("at"))
    if first is None and run_at is None:
        return False
    year = (first or run_at or date(2000, 1, 1)).year
    table_first, table_last = parse_iso_day(onset.get("table_first")), parse_iso_day(onset.get("table_last"))
    spans = date_spans(clause, year)
    spoke = False
    for k, (s, _e, lo, hi, slack) in enumerate(spans):
        before = clause[:s]
        pad = timedelta(days=slack)
        if _BETWEEN.search(before) or (re.search(r"\bfrom\s+(?:the\s+)?$", before, re.I) and k + 1 < len(spans)
                                         and re.match(r"\s*(?:to|until|through|and|[-–])\s*(?:the\s+)?$",
                                                      clause[_e:spans[k + 1][0]], re.I)):
            role = "start"
        elif k and re.match(r"\s*(?:and|to|until|through|[-–])\s*(?:the\s+)?$", clause[spans[k - 1][1]:s], re.I) \
                and (_BETWEEN.search(clause[:spans[k - 1][0]]) or re.search(r"\bfrom\s+(?:the\s+)?$",
                                                                              clause[:spans[k - 1][0]], re.I)):
            role = "end"
        elif _START.search(before) and (not re.search(r"\bfrom\s+(?:the\s+)?$", before, re.I) or _ABOUT_ROWS.search(
                clause)):
            role = "start"  # a bare "from <date>" only where the clause speaks of the failing rows
        elif _END.search(before):
            role = "end"
        else:
            continue
        spoke = True
        written = clause[s:_e]
        if any(d is not None and lo - pad <= d <= hi + pad for d in (table_first, table_last)) and \
                re.search(r"\b(?:table|back\s+to|range|history|oldest|newest)\b", clause, re.I):
            continue  # the table's own range ("the table's rows go back to …")
        if role == "start":
            partial = _PARTIAL.search(before) is not None
            candidates = [d for d in (first, run_at) if d is not None]
            # "most of them since …" is a part: only after the last failing row would it be false
            ok = (last is None or lo - pad <= last) if partial else any(lo - pad <= d <= hi + pad for d in candidates)
            actual = onset.get("first") or (facts.first_failed_run or {}).get("at")
            what = "the first failing row"
        else:
            ok = last is None or lo - pad <= last <= hi + pad
            actual, what = onset.get("last"), "the last failing row"
        if ok:
            res.add_ok(f"{item.name}: {written} matches {what}")
        else:
            says = " ".join(clause.split())
            res.add_bad(item.name, says, f"{what}: {actual}",
                        f"The report says {says!r} about {item.name}, but the diagnosis dates {what} {actual}.")
    return spoke
