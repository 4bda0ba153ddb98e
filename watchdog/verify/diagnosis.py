"""Claims a report makes about a check's diagnosis: where the failing rows concentrate, since when, which values.

:func:`review_diagnosis` reads one unit of prose about a diagnosed finding clause by clause. A clause is
about the diagnosis when it names one of the diagnosis's segment values, claims a concentration ("most
bad rows come from …", "concentrated in …"), states an onset ("since 2026-11-14", "from mid-November")
or quotes an offending value with a count. In such a clause:

* a number in a role (``21 of the 37`` → the segment's failing rows of the failing rows; ``57%`` of
  them → the segment's share of the failing rows; ``which holds 6% of all …`` → its share of the rows;
  ``'Active ' ×5`` → that value's count) must equal that fact, as written (rounding, "about", "over");
* a share in words must agree: "all" (every failing row), "nearly all"/"the vast majority" (at least
  three in four), "most"/"the majority"/"mostly" (more than half), "nine in ten", "two thirds", "half"
  (within about six points);
* a concentration claimed in a segment the diagnosis does not hold is a fabrication ("most bad rows
  come from the mobile app" when the diagnosis found none, or found another);
* a start date must be the first failing row's day (its month or part of a month when written so:
  "mid-November"), an end date the last one's (:mod:`watchdog.verify.diagnosis_dates`).

Every number of such a clause that equals a diagnosis figure is taken out of the finding's own number
checks (which would read "21 of the 37" as a wrong failing count); the rest are left to them. Prefer
false negatives: a number in no clear role is only checked against all the figures, and a finding with
no diagnosis block is never checked here.
"""

from __future__ import annotations

import re

from watchdog.verify.diagnosis_dates import check_onset
from watchdog.verify.diagnosis_facts import DiagFacts, Segment, norm, percent_text, segment_text
from watchdog.verify.diagnosis_values import OVERLAP_WORDS, distinct_values, overlap, value_counts
from watchdog.verify.locate import Ctx, Index, IndexedFinding, Mention
from watchdog.verify.markdown import clause_bounds
from watchdog.verify.model import Results
from watchdog.verify.numbers import Num, extract_numbers, format_count

__all__ = ["review_diagnosis"]

_CLAUSE = re.compile(r"[()\[\]]|;|:\s|\s[—–]\s|,\s|\.\s")
_VERB = re.compile(
    r"\b(?:come|comes|came|coming|originat\w*|stem\w*|sit|sits|fall|falls|belong\w*|concentrat\w*|cluster\w*|"
    r"arriv\w*|enter\w*|created|imported|sourced|loaded|(?:are|is|were|was|all|mostly|mainly|largely))\b"
    r"(?:\s+\w+){0,3}?\s+(?:from|in|via|through|under)\b", re.I)
_VALUE_WORDS = re.compile(r"(?:(?:a|one|the|two|three|few|a few|single|same|handful of|small number of)\s+)*"
                          r"(?:values?|address(?:es)?|emails?|ids?|keys?|codes?|names?|duplicates?|placeholders?)\b")
_CONCENTRATE = re.compile(r"\b(?:concentrat\w*|cluster\w*|disproportionate\w*|over-?represented)\b", re.I)
_TEMPORAL = re.compile(
    r"\b(?:since|after|before|until|between|onwards?|recent\w*|last\s+(?:week|month|days?|year|night)|"
    r"yesterday|today|this\s+(?:week|month|year)|(?:early|mid|late)[-\s]|jan\w*|feb\w*|mar(?:ch)?|apr\w*|may|"
    r"june?|july?|aug\w*|sep\w*|oct\w*|nov\w*|dec\w*|\d{4}-\d\d|days?|weeks?|months?|deploy\w*|release\w*)\b",
    re.I)
_NOT_A_SEGMENT = re.compile(r"\b(?:sample\w*|example\w*|same\s+rows?|these\s+rows|this\s+check|the\s+table)\b", re.I)
_WORD_SHARES = [
    (re.compile(r"\b(?:all\s+but\s+(?:one|two|a\s+few)|nearly\s+all|almost\s+all|virtually\s+all|practically\s+all|"
                r"(?:the\s+)?(?:vast|overwhelming)\s+majority|overwhelmingly)\b", re.I), 0.75, 1.0, "nearly all"),
    (re.compile(r"\b(?:most|mostly|mainly|largely|predominantly|chiefly|primarily|majority|the\s+bulk|"
                r"more\s+than\s+half)\b", re.I), 0.5, 1.0, "most"),
    (re.compile(r"\b(?:two[-\s]thirds)\b", re.I), 0.6, 0.73, "two thirds"),
    (re.compile(r"\b(?:three[-\s]quarters)\b", re.I), 0.69, 0.81, "three quarters"),
    (re.compile(r"\b(?:(?:about|roughly|around|nearly|almost)\s+)?half\b", re.I), 0.42, 0.58, "half"),
    (re.compile(r"\b(?:a|one)[-\s]third\b", re.I), 0.27, 0.4, "a third"),
    (re.compile(r"\b(?:a|one)[-\s]quarter\b", re.I), 0.19, 0.31, "a quarter"),
]
_ALL = re.compile(r"^\W*(?:all|every\s+one|each)\b(?!\s+but)(?:\s+of\s+(?:them|these|those|the))?", re.I)
_N_IN_M = re.compile(
    r"\b(?P<n>\d+|one|two|three|four|five|six|seven|eight|nine|ten)\s+(?:in|out\s+of)\s+(?P<d>\d+|two|three|four|"
    r"five|six|seven|eight|nine|ten|a\s+hundred)\b(?!\s+(?:rows|records|\w+s\b))", re.I)
_FRACTION_WORD = re.compile(r"[-\s]+(?:quarters?|thirds?|fifths?|halves|tenths?)\b", re.I)
_SMALL = {"one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6, "seven": 7, "eight": 8, "nine": 9,
          "ten": 10, "a hundred": 100}
_OF_ROWS = re.compile(r"^\s*(?:of\s+(?:all|every|the\s+(?:whole\s+)?table|(?:all\s+)?(?:the\s+)?(?:rows|records)\b)|"
                      r"of\s+(?:all\s+)?(?:the\s+)?(?P<noun>[a-z_]+))", re.I)
_HOLDS = re.compile(r"\b(?:holds?|has|have|contains?|makes?\s+up|accounts?\s+for|represents?|is|are|only)\s*"
                    r"(?:just|only|about|around|roughly|~)?\s*$", re.I)
_NUMERATOR = re.compile(r"^\s*(?:\w+\s+)?(?:of|out\s+of)\s+(?:the\s+|these\s+|those\s+|them\b|all\s+|its\s+|\d)",
                        re.I)


def review_diagnosis(res: Results, idx: Index, text: str, explicit: list[Mention], item: IndexedFinding | None,
                     ctx: Ctx) -> str:
    """Check the diagnosis claims of ``text`` (a cleaned unit about ``item``, or about the section's finding);
    return ``text`` with the numbers this checked blanked out, for the finding's own number checks."""
    target = item or ctx.finding
    if ctx.finding is not None and item is not None and item is not ctx.finding and OVERLAP_WORDS.search(text):
        target = ctx.finding  # "4 of these rows also fail <another check>", in this check's section
    if target is None:
        return text
    facts = DiagFacts.of(target.f)
    if facts is None:
        return text
    out = list(text)
    prev_segment: Segment | None = None
    for a, b in _clauses(text):
        clause = text[a:b]
        if not clause.strip():
            continue
        blank = _clause(res, target, facts, clause, prev_segment, idx, explicit)
        prev_segment = blank[1]
        for s, e in blank[0]:
            for k in range(a + s, a + e):
                out[k] = " "
    return "".join(out)


def _clauses(text: str) -> list[tuple[int, int]]:
    bounds = clause_bounds(text, _CLAUSE)
    return list(zip(bounds, bounds[1:], strict=False))


def _clause(res: Results, item: IndexedFinding, facts: DiagFacts, clause: str, prev: Segment | None, idx: Index,
            explicit: list[Mention]) -> tuple[list[tuple[int, int]], Segment | None]:
    """One clause: returns the spans to blank and the segment it spoke of (for a "which holds …" after it)."""
    low = norm(clause)
    fractions = [(m.start(), m.end()) for m in _N_IN_M.finditer(clause)]
    nums = [n for n in extract_numbers(clause) if not n.year and not n.is_duration and not (n.word and n.value == 1)
            and not any(a <= n.start < b for a, b in fractions)
            and not (n.word and _FRACTION_WORD.match(clause[n.end:]))]
    handled = check_onset(res, item, facts, clause)
    seg = facts.segment_in(low)
    continues = prev is not None and re.match(
        r"\s*(?:which|that|whose|where|in\s+which|among|(?:a|an)\s+\w+\s+(?:that|which|holding|with|where)|holding|"
        r"accounting|while|whereas|against|versus|vs|compared|but|"
        r"[\w,]+\s+of\s+(?:them|these|those|its|which))\b|.*\b(?:elsewhere|the\s+rest|other\s+\w+s)\b", clause,
        re.I) is not None
    if seg is None and prev is not None and not continues:  # "… come from it": the segment just named
        verb = _VERB.search(clause)
        continues = verb is not None and _pronoun(clause[verb.end():])
    if seg is None and continues:
        seg = prev
    if seg is not None:
        handled = True
        blanks = _segment_numbers(res, item, facts, seg, clause, nums, continued=continues and seg is prev)
        _word_share(res, item, facts, seg, clause)
    else:
        blanks = []
        if _fabricated(res, item, facts, clause, nums, idx):  # flagged once: its numbers are not claims too
            return [(n.start, n.end) for n in nums], None
    blanks += value_counts(res, item, facts, clause, nums)
    blanks += distinct_values(res, item, facts, clause, nums)
    blanks += overlap(res, item, facts, clause, nums, idx, explicit)
    if handled:  # every other figure of a diagnosis clause that equals a diagnosis fact is the diagnosis's
        taken = {s for s, _e in blanks}
        blanks += [(n.start, n.end) for n in nums if n.start not in taken and _any_fact(n, facts)]
    return blanks, seg


def _segment_numbers(res: Results, item: IndexedFinding, facts: DiagFacts, seg: Segment, clause: str,
                     nums: list[Num], *, continued: bool) -> list[tuple[int, int]]:
    blanks: list[tuple[int, int]] = []
    for k, n in enumerate(nums):
        before, after = clause[:n.start], clause[n.end:]
        if n.percent:
            roles = _percent_roles(seg, facts, clause, before, after, continued=continued)
            if any(_pct_ok(n, v) for v, _w in roles):
                res.add_ok(f"{item.name}: {n.text} matches a share of {seg.column} = {seg.value!r}")
            else:
                _bad(res, item, facts, seg, clause, " or ".join(f"{w} is {percent_text(v / 100)}" for v, w in roles))
            blanks.append((n.start, n.end))
            continue
        nxt = nums[k + 1] if k + 1 < len(nums) else None
        if _NUMERATOR.match(after):
            denominator = nxt.value if nxt is not None and nxt.start - n.end < 24 else None
            if denominator is not None and facts.total is not None and nxt is not None and nxt.matches(facts.total) \
                    and denominator != facts.failing:
                expected, what = float(seg.rows), "the rows in it"
            else:
                expected, what = float(seg.failing), "its failing rows"
            if n.matches(expected):
                res.add_ok(f"{item.name}: {n.text} matches {what} in {seg.column} = {seg.value!r}")
            else:
                _bad(res, item, facts, seg, clause, f"{what}: {format_count(expected)}")
            blanks.append((n.start, n.end))
        elif re.search(r"\bof\s+(?:the\s+|these\s+|those\s+|its\s+|all\s+)?$", before, re.I):
            allowed = [facts.failing, facts.total, seg.rows]
            if any(a is not None and n.matches(float(a)) for a in allowed):
                blanks.append((n.start, n.end))
            elif _strong_count(after):
                _bad(res, item, facts, seg, clause, "the failing rows, the rows or the segment's rows")
                blanks.append((n.start, n.end))
        elif any(n.matches(float(a)) for a in (seg.failing, seg.rows)):
            blanks.append((n.start, n.end))
    return blanks


def _small(word: str) -> int:
    word = " ".join(word.lower().split())
    return int(word) if word.isdigit() else _SMALL[word]


_OF_FAILING = re.compile(r"^\s*of\s+(?:them|those|these|all\s+failures|failures|(?:all\s+)?the\s+(?:\d[\d,]*\s+)?"
                         r"(?:(?!(?:are|is|were|was|have|has)\b)\w+\s+){0,2}?(?:failing|bad|broken|invalid|missing|affected|problem\w*|errors?|"
                         r"failures|offending|orphan\w*|null\w*|wrong|malformed|duplicat\w*)\b)", re.I)
_SEGMENT_RATE = re.compile(r"^\s*of\s+(?:its|their|the\s+(?:segment|group)['’]s|[\w'’]+['’]s)\s+(?:\w+\s+)?"
                           r"(?:rows|records)|^\s*(?:of\s+(?:the\s+)?(?:rows|records)\s+in\b)", re.I)


def _percent_roles(seg: Segment, facts: DiagFacts, clause: str, before: str, after: str, *,
                   continued: bool) -> list[tuple[float, str]]:
    """What a percentage in a segment clause may be: its share of the failing rows, of all rows, or the share
    of its own rows that fail; a clear wording allows only that one."""
    of_failing = (100 * seg.share_of_failing, "its share of the failing rows")
    of_rows = (100 * seg.share_of_rows, "its share of all rows")
    rate = (100 * seg.failing / seg.rows if seg.rows else 0.0, "the share of its own rows that fail")
    if re.search(r"\b(?:elsewhere|outside|the\s+rest|other\s+\w+s)\b", clause, re.I):
        roles = [(100 - of_failing[0], "the share of the failing rows outside it"), rate]
        if facts.failing is not None and facts.total is not None and facts.total > seg.rows:
            roles.append((100 * (facts.failing - seg.failing) / (facts.total - seg.rows),
                          "the share of the other rows that fail"))
        return roles
    if _OF_FAILING.match(after):
        return [of_failing]
    if _SEGMENT_RATE.match(after) or re.search(r"\b(?:fail(?:ure)?\s+rate|error\s+rate)\s+(?:of\s+|is\s+)?$", before,
                                                re.I):
        return [rate]
    if continued and re.match(r"\s*of\s+(?:the\s+|its\s+|their\s+)?(?:rows|records)\b(?:\s+\w+){0,3}?\s+(?:are|is|were|"
                              r"fail\w*|have\s+no|has\s+no|lack\w*)\b", after, re.I):
        return [rate]
    if _OF_ROWS.match(after) or (continued and _HOLDS.search(before)):
        return [of_rows]
    return [of_failing, of_rows, rate]


def _strong_count(after: str) -> bool:
    return re.match(r"\s*(?:\w+\s+){0,2}(?:rows|records|failing|failures|entries|values)\b", after, re.I) is not None


def _word_share(res: Results, item: IndexedFinding, facts: DiagFacts, seg: Segment, clause: str) -> None:
    """"most/nearly all/nine in ten/half … come from V" must agree with V's share of the failing rows."""
    verb = _VERB.search(clause)
    head = clause[:verb.end()] if verb else clause
    if re.search(r"\b(?:of\s+(?:all|the)\s+(?:rows|table)|holds?|makes?\s+up|accounts?\s+for)\b", head, re.I):
        return  # a share of the table, not of the failing rows
    share = seg.share_of_failing
    m = _N_IN_M.search(head)
    if m:
        n, d = (_small(m.group(g)) for g in ("n", "d"))
        if d and not abs(n / d - share) <= 0.06:
            _bad(res, item, facts, seg, clause, f"its share of the failing rows is {percent_text(share)}")
        return
    if verb and _ALL.match(head) and share < 0.995 and not re.search(r"\d", head):
        _bad(res, item, facts, seg, clause, f"only {percent_text(share)} of the failing rows are in it")
        return
    for regex, lo, hi, _label in _WORD_SHARES:
        if regex.search(head if verb else clause):
            if not lo - 1e-9 <= share <= hi + 1e-9:
                _bad(res, item, facts, seg, clause, f"its share of the failing rows is {percent_text(share)}")
            return


def _fabricated(res: Results, item: IndexedFinding, facts: DiagFacts, clause: str, nums: list[Num],
                idx: Index) -> bool:
    """A concentration claimed where the diagnosis holds none: "most bad rows come from the mobile app"."""
    if not facts.looked:
        return False
    verb = _VERB.search(clause)
    concentrate = _CONCENTRATE.search(clause)
    if verb is None and concentrate is None:
        return False
    head = clause[:verb.start()] if verb else clause[:concentrate.start()] if concentrate else clause
    quantified = any(r.search(head) for r, *_ in _WORD_SHARES) or _N_IN_M.search(head) is not None or any(
        n.percent or _NUMERATOR.match(clause[n.end:]) for n in nums if n.end <= (verb.start() if verb else len(
            clause))) or concentrate is not None or (verb is not None and re.search(
                r"\b(?:mostly|mainly|largely|predominantly|chiefly|primarily|all)\b", verb.group(), re.I))
    if not quantified or re.search(r"\b(?:no|not|none|never|nor|without|neither|isn['’]t|aren['’]t|doesn['’]t|"
                                   r"don['’]t|nothing)\b", head, re.I):
        return False
    where = clause[verb.end():] if verb else clause[concentrate.end():] if concentrate else ""
    low = norm(where)
    if not low or _TEMPORAL.search(where) or _NOT_A_SEGMENT.search(where) or _pronoun(where):
        return False
    other_value = _other_value(where, facts)
    if other_value is None and any(s.loosely_named_in(low) for s in facts.segments):
        return False
    if idx.tables_in(where.lower()) and not re.search(r"[`'\"=]", where):
        return False  # "… come from the patients table": not a segment
    if verb is not None and re.match(r"(?:are|is|were|was|all|mostly|mainly|largely)\b", verb.group(), re.I) and \
            re.search(r"\bin\s*$", verb.group(), re.I) and not re.search(r"[`'\"=_]|\w\d", where) and not re.search(
                r"concentrat|cluster|come|origin|stem|arriv|enter|creat|import|sourc|load", verb.group(), re.I):
        return False  # "most values are in range": only a named value ("are in `web_form`") is a segment here
    if _VALUE_WORDS.match(low) or any(norm(v.get("value")) in low for v in facts.values if v.get("value") is not None):
        return False  # "most duplicates come from one address": about values, not a segment
    says = " ".join(clause.split())
    res.add_bad(item.name, says, facts.summary(),
                f"The report says {says!r} about {item.name}, but {facts.summary()}: name only a concentration "
                f"the diagnosis holds, or none.")
    return True


def _pronoun(where: str) -> bool:
    """"… come from it/them/there": the thing just named, not a new one."""
    return re.fullmatch(r"\s*(?:it|them|there|that|this|those|these|one|each|which)\b.*", where,
                        re.I | re.S) is not None


def _other_value(where: str, facts: DiagFacts) -> str | None:
    """A diagnosis segment's column named with another value: "firmware v1_3" when the diagnosis holds v2_0."""
    for seg in facts.segments:
        m = re.search(rf"\b{re.escape(seg.column)}\s*(?:=|==|is|of)?\s*['\"`]?([\w.\-]+)", where, re.I)
        if m and norm(m.group(1)) != seg.value_norm and (re.search(r"[\d_]", m.group(1)) or where[m.start(1) - 1:
                                                                                               m.start(1)] in "'\"`"):
            return m.group(1)
    return None


def _pct_ok(n: Num, value: float) -> bool:
    """As written, or cut (not rounded) to the decimals written: 57.6% as "57%"."""
    return n.matches(value, relative=0.10) or (n.approx is None and 0 <= value - n.value < 10 ** -n.decimals)


def _any_fact(n: Num, facts: DiagFacts) -> bool:
    pool = facts.percents if n.percent else facts.figures
    return any(n.matches(v) for v in pool)


def _bad(res: Results, item: IndexedFinding, facts: DiagFacts, seg: Segment, clause: str, what: str) -> None:
    says = " ".join(clause.split())
    actual = segment_text(seg, facts.failing, facts.total)
    res.add_bad(item.name, says, actual,
                f"The report says {says!r} about {item.name}, but in the diagnosis {actual} ({what}).")
