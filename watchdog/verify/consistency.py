"""Whether each number a unit claims about its finding is consistent with the finding's facts.

A claimed number is consistent when it equals one of the facts its kind allows
(:meth:`~watchdog.verify.facts.Facts.values`) within the precision written
(:meth:`~watchdog.verify.numbers.Num.matches`: rounding, "about", "over", "under", percent
decimals, durations). A match is recorded as ok; a mismatch is a bad item only for a strong claim, and
never for a bare year or an "over/under" age.
"""

from __future__ import annotations

import re

from watchdog.verify.claims import AFTER_STOP, COUNT_NOUNS, find_claims
from watchdog.verify.facts import actual_label, actual_text, counts_text, describe
from watchdog.verify.locate import Index, IndexedFinding, Mention
from watchdog.verify.markdown import Code
from watchdog.verify.model import Results
from watchdog.verify.numbers import Num, format_count

__all__ = ["check_numbers", "compare"]

_RATE_AFTER = re.compile(r"\s*(?:fail(?:ure|ing)?\s+|error\s+|warn(?:ing)?\s+)?rate\b", re.I)
_OK_WORDS = {"failing": "failing", "failing_strict": "failing", "dup": "duplicate_values", "excess": "excess_rows",
             "group_rows": "the rows of the duplicated groups", "total": "total", "generic": "a fact",
             "passing": "the passing rows", "rate": "the rate", "age": "the age",
             "threshold": "a threshold"}


def check_numbers(res: Results, idx: Index, text: str, code: Code, explicit: list[Mention], item: IndexedFinding,
                  *, header_kind: str | None = None, header: str = "") -> None:
    """Check every number ``text`` claims about ``item`` (``header``: the table column it sits in)."""
    masked, claims = find_claims(idx, text, code, explicit, item, header_kind)
    for num, kind, strong in claims:
        compare(res, num, kind, strong, item, masked, header)


def compare(res: Results, num: Num, kind: str, strong: bool, item: IndexedFinding, masked: str, header: str) -> None:
    """Record whether ``num``, a claim of ``kind`` about ``item``, matches its facts."""
    facts = item.facts
    if kind == "threshold":
        _threshold(res, num, item)
        return
    if kind == "rate" and not num.percent:
        bare = _bare_rate(num, item, header)
        if bare is None:
            return
        num, kind = bare
    if num.percent and kind != "rate":
        kind = "rate"
    if kind == "observed":
        kind = "generic"
    if kind == "failing_strict" and facts.failing is None:
        _no_failing_count(res, num, item, header)
        return
    if kind in ("rate", "total") and not facts.values(kind):
        # in prose a percentage may be a shortfall ("about 20% short of the minimum"): only cells, and a
        # percentage called a rate ("7.00% fail rate"), are held to it
        called_rate = kind == "rate" and _RATE_AFTER.match(masked[num.end:num.end + 24]) is not None
        if strong and (header or called_rate) and not (num.value == 0 and item.status == "pass"):
            _no_such_fact(res, num, item, header, kind)
        return
    values = facts.values(kind)
    if not values:
        return
    if any(num.matches(v) for v in values):
        res.add_ok(f"{item.name}: {num.describe()} matches {_OK_WORDS.get(kind, kind)}")
        return
    if num.year or not strong or (kind == "age" and num.approx in ("over", "under")):
        return
    says = _says(masked, num, header, item)
    res.add_bad(item.name, says, actual_text(item, kind), _message(kind, num, says, item, header))


def _bare_rate(num: Num, item: IndexedFinding, header: str) -> tuple[Num, str] | None:
    """A number without % under a rate header: a fraction or percent points; for a check without a rate a whole
    number is its observed value (row_count and freshness put it there) and "0" on a passing one is harmless."""
    if item.facts.rate is None and not num.decimals:
        return None if num.value == 0 and item.status == "pass" else (num, "generic")
    return _as_percent(num, header), "rate"


def _threshold(res: Results, num: Num, item: IndexedFinding) -> None:
    """A number worded as a threshold is never flagged; it is recorded when it matches a parameter."""
    facts = item.facts
    values = facts.thresholds()
    if num.percent:
        values = [facts.max_rate * 100] if facts.max_rate is not None else []
    if any(num.matches(v) for v in values):
        res.add_ok(f"{item.name}: {num.describe()} matches a threshold")


def _as_percent(num: Num, header: str) -> Num:
    """A bare number under a rate header: a fraction (0.0185) or percent points (1.85)."""
    if num.value <= 1 and num.decimals >= 2 and "%" not in header and "percent" not in header.lower():
        return Num(num.start, num.end, num.text, num.value * 100, max(num.decimals - 2, 0), percent=True,
                   approx=num.approx, approx_text=num.approx_text)
    return Num(num.start, num.end, num.text, num.value, num.decimals, percent=True, approx=num.approx,
               approx_text=num.approx_text)


def _no_failing_count(res: Results, num: Num, item: IndexedFinding, header: str) -> None:
    """A number under a Failing header for a check that counts no failing rows (row_count, freshness)."""
    if num.value == 0 and item.status == "pass":
        res.add_ok(f"{item.name}: {num.describe()} under {header or 'failing'} for a passing check")
        return
    if header:
        res.add_bad(item.name, f"{num.describe()} ({header})", "no failing-row count",
                    f"The report puts {num.describe()} under \"{header}\" for {item.name}, but a {item.f.check} "
                    f"check counts no failing rows ({describe(item)}); write – there.")
        return
    if num.value == 0:
        res.add_bad(item.name, "no failing rows", item.status,
                    f"The report says no rows of {item.name} failed, which reads as a pass, but its status is "
                    f"{item.status.upper()}: {describe(item)}.")
        return
    res.add_bad(item.name, f"{num.describe()} failing rows", "no failing-row count",
                f"The report says {item.name} has {num.describe()} failing rows, but a {item.f.check} check counts "
                f"no failing rows; its status is {item.status.upper()}: {describe(item)}.")


def _no_such_fact(res: Results, num: Num, item: IndexedFinding, header: str, kind: str) -> None:
    """A number under a Rate or Total header for a check that has no rate or no total (row_count, freshness,
    custom_sql)."""
    what = "rate" if kind == "rate" else "total"
    if not header:
        res.add_bad(item.name, f"{num.describe()} {what}", f"no {what}",
                    f"The report gives {item.name} a {what} of {num.describe()}, but a {item.f.check} check has no "
                    f"{what}: {describe(item)}.")
        return
    res.add_bad(item.name, f"{num.describe()} ({header})", f"no {what}",
                f"The report gives {item.name} {num.describe()} under \"{header}\", but a {item.f.check} check has "
                f"no {what}: {describe(item)}; write – there.")


def _column(header: str) -> str:
    return f' (column "{header}")' if header else ""


def _message(kind: str, num: Num, says: str, item: IndexedFinding, header: str) -> str:
    """One sentence for the fix prompt that names the check's own quantity and states only true facts."""
    actual = actual_text(item, kind)
    column = _column(header)
    bare = re.sub(r"\s*(?:rows?|records?)$", "", num.describe())
    if kind == "rate":
        return (f"The report says {item.name} has a rate of {num.describe()}{column}, but the findings show "
                f"{actual} ({counts_text(item)}).")
    if kind == "age":
        return (f"The report says the newest value of {item.name} is {num.describe()} old{column}, but the "
                f"findings show {actual} ({format_count(item.f.observed)} s).")
    if kind == "total":
        claimed = f'"{says}"' if ":" in says else f"{bare} rows"
        return (f"The report says {item.name} looked at {claimed}{column}, but the findings show {actual} rows "
                f"({describe(item)}).")
    label = actual_label(item, kind)
    claimed = f"{bare} {label}" if header else (f'"{says}"' if ":" in says else says)
    return (f"The report says {item.name} has {claimed}{column}, but the findings show {actual} {label} "
            f"({describe(item)}).")


def _says(masked: str, num: Num, header: str, item: IndexedFinding) -> str:
    """What the report claims, as written: "39 contacts", "Distinct duplicated values: 5", "7 (Failing)"."""
    if header:
        return f"{num.describe()} ({header})"
    words = re.findall(r"[A-Za-z][\w'’-]*", AFTER_STOP.split(masked[num.end:num.end + 60], maxsplit=1)[0])
    nouns = [k for k, w in enumerate(words[:4]) if w.lower() in COUNT_NOUNS or w.lower() in item.nouns]
    if nouns:
        end = nouns[0]
        while end + 1 in nouns:
            end += 1
        return f"{num.describe()} {' '.join(words[:end + 1])}"
    label = re.search(r"(?:^|[.;!?(\n]|\s[-—–]\s)\s*([A-Za-z][A-Za-z' /_-]{0,40}?)\s*:\s*$",
                      masked[max(0, num.start - 45):num.start])
    if label and len(label.group(1).split()) <= 5:
        return f"{label.group(1).strip()}: {num.describe()}"
    return num.describe()
