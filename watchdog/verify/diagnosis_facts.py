"""A finding's diagnosis as the verifier reads it: segments, onset, offending values, overlap, and the figures
a number written about them may equal.

The diagnosis is the ``diagnosis`` block of a finding in findings.json (``segments``, ``onset``, ``values``,
``overlap``, ``first_failed_run``); a finding without one was not diagnosed, and nothing here applies to it.
An empty ``segments`` list means the diagnosis looked and found no concentration.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

from watchdog.findings import Finding
from watchdog.verify.numbers import format_count

#: the most offending values a diagnosis lists (fewer listed: that is all of them)
VALUES_LISTED = 5

__all__ = ["VALUES_LISTED", "DiagFacts", "Segment", "diagnosis_of", "norm", "percent_text", "segment_text"]


def diagnosis_of(finding: Finding) -> dict[str, Any] | None:
    """The finding's diagnosis block as plain JSON values, or None when it was not diagnosed."""
    value = getattr(finding, "diagnosis", None)
    if value is None:
        return None
    if hasattr(value, "to_json_dict"):
        value = value.to_json_dict()
    return value if isinstance(value, dict) else None


def _is_number(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def norm(text: Any) -> str:
    """Lower case, ``_``/``-``/quotes/backticks as spaces, one space: how a value is matched in prose."""
    return " ".join(re.sub(r"[_\-'\"`]+", " ", str(text).lower()).split())


def mentions(text: str, value: Any) -> bool:
    """Whether prose names ``value`` as a whole value: its words in order (``_``/``-``/spaces/quotes between them
    alike), not inside an identifier (``new`` is not named by ``new_erp``)."""
    words = norm(value).split()
    if not words:
        return False
    body = r"[\s_\-'\"`]+".join(re.escape(w) for w in words)
    return re.search(rf"(?<![\w\-]){body}(?![\w\-])", str(text).lower()) is not None


def percent_text(share: float) -> str:
    pct = share * 100
    return f"{pct:.0f}%" if pct >= 10 or pct == int(pct) else f"{pct:.1f}%"


@dataclass(frozen=True)
class Segment:
    column: str
    value: Any
    failing: int
    rows: int
    share_of_failing: float
    share_of_rows: float

    @property
    def value_norm(self) -> str:
        return "null" if self.value is None else norm(self.value)

    def named_in(self, low_norm: str) -> bool:
        """Whether normalised prose names this segment's value (whole words)."""
        v = self.value_norm
        if not v:
            return False
        if self.value is None:
            return re.search(rf"\b(?:null|empty|blank|no {re.escape(norm(self.column))})\b", low_norm) is not None
        return re.search(rf"(?<![\w]){re.escape(v)}(?![\w])", low_norm) is not None

    def loosely_named_in(self, low_norm: str) -> bool:
        """Whether prose names the value or its column, or a word of the value (``the CSV import``)."""
        if self.named_in(low_norm) or re.search(rf"\b{re.escape(norm(self.column))}\b", low_norm):
            return True
        parts = [p for p in self.value_norm.split() if len(p) >= 3]
        return any(re.search(rf"\b{re.escape(p[:5])}", low_norm) for p in parts)


def segment_text(seg: Segment, failing: int | None, total: int | None) -> str:
    """``21 of the 37 failing rows (57%) are in source = 'csv_import', which holds 120 of 2,000 rows (6%)``."""
    value = "NULL" if seg.value is None else f"'{seg.value}'"
    of_failing = f" of the {format_count(failing)} failing rows" if failing is not None else ""
    of_total = f" of {format_count(total)}" if total is not None else ""
    return (f"{format_count(seg.failing)}{of_failing} ({percent_text(seg.share_of_failing)}) are in "
            f"{seg.column} = {value}, which holds {format_count(seg.rows)}{of_total} rows "
            f"({percent_text(seg.share_of_rows)})")


@dataclass
class DiagFacts:
    """One finding's diagnosis, parsed; ``looked`` when the segments were searched (found or not)."""

    segments: list[Segment]
    looked: bool
    onset: dict[str, Any] | None
    values: list[dict[str, Any]]
    overlap: list[dict[str, Any]]
    first_failed_run: dict[str, Any] | None
    failing: int | None
    total: int | None
    values_distinct: int | None = None                       # how many different wrong values, when known
    figures: list[float] = field(default_factory=list)      # every count a number may equal
    percents: list[float] = field(default_factory=list)     # every share, in percent points

    @classmethod
    def of(cls, finding: Finding) -> DiagFacts | None:
        d = diagnosis_of(finding)
        if d is None:
            return None
        segments = []
        for s in d.get("segments") or []:
            try:
                segments.append(Segment(str(s["column"]), s.get("value"), int(s["failing"]), int(s["rows"]),
                                        float(s["share_of_failing"]), float(s["share_of_rows"])))
            except (KeyError, TypeError, ValueError):
                continue
        facts = cls(segments, isinstance(d.get("segments"), list), d.get("onset") if isinstance(
            d.get("onset"), dict) else None, [v for v in d.get("values") or [] if isinstance(v, dict)],
            [o for o in d.get("overlap") or [] if isinstance(o, dict)],
            d.get("first_failed_run") if isinstance(d.get("first_failed_run"), dict) else None,
            finding.failing, finding.total)
        distinct = d.get("values_distinct")
        if isinstance(distinct, int) and not isinstance(distinct, bool):
            facts.values_distinct = distinct
        elif facts.values and len(facts.values) < VALUES_LISTED:
            facts.values_distinct = len(facts.values)  # fewer than the diagnosis lists: all of them
        facts._derive(finding)
        return facts

    def _derive(self, f: Finding) -> None:
        failing, total = f.failing, f.total
        counts = [float(n) for n in (failing, total) if n is not None]
        pcts: list[float] = []
        if failing is not None and total:
            counts.append(float(total - failing))
            pcts.append(100 * failing / total)
        for s in self.segments:
            counts += [s.failing, s.rows, s.rows - s.failing]
            pcts += [100 * s.share_of_failing, 100 * s.share_of_rows, 100 * (1 - s.share_of_failing)]
            if s.rows:
                pcts.append(100 * s.failing / s.rows)
            if failing is not None:
                counts.append(float(failing - s.failing))
                if total is not None and total - s.rows > 0:
                    pcts.append(100 * (failing - s.failing) / (total - s.rows))
        counts.append(float(len(self.segments)))
        for v in self.values:
            counts += [float(x) for x in (v.get("failing"), v.get("value")) if x is not None and _is_number(x)]
        counts += [float(len(self.values))] if self.values else []
        counts += [float(self.values_distinct)] if self.values_distinct is not None else []
        counts += [float(o["rows"]) for o in self.overlap if _is_number(o.get("rows"))]
        self.figures = counts
        self.percents = pcts

    def segment_in(self, low_norm: str) -> Segment | None:
        """The segment whose value the (normalised) text names, the first written when several."""
        best: tuple[int, Segment] | None = None
        for s in self.segments:
            if s.named_in(low_norm):
                m = re.search(re.escape(s.value_norm), low_norm)
                pos = m.start() if m else 0
                if best is None or pos < best[0]:
                    best = (pos, s)
        return best[1] if best else None

    def summary(self) -> str:
        """What the diagnosis holds about segments, for a message."""
        if not self.segments:
            return "the diagnosis found no segment where the failing rows concentrate"
        return "the diagnosis found: " + "; ".join(segment_text(s, self.failing, self.total) for s in self.segments)
