"""A table row about a check's diagnosis: ``| source = csv_import | 21 | 120 | 57% |`` under the check's section.

A row that names one of the diagnosis's segment values (or one of its offending values) is about that segment (or
value), not about the check's own counts: its numbers are held to the segment's failing rows and rows, its
percentages to the segment's shares (of the failing rows, of all rows, or its own rows' failing share), a value's
count to that value's count. A number that equals none of these is flagged; the check's own number checks skip the
row.
"""

from __future__ import annotations

from watchdog.verify.diagnosis_facts import DiagFacts, norm, segment_text
from watchdog.verify.locate import IndexedFinding
from watchdog.verify.model import Results
from watchdog.verify.numbers import extract_numbers, format_count

__all__ = ["check_diagnosis_row"]


def check_diagnosis_row(res: Results, item: IndexedFinding, texts: list[str]) -> bool:
    """Check a row about ``item``'s diagnosis; False (nothing done) when the row is not about it."""
    facts = DiagFacts.of(item.f)
    if facts is None:
        return False
    row = " | ".join(texts)
    seg = facts.segment_in(norm(row))
    value = next((v for v in facts.values if v.get("value") is not None and any(
        norm(t).strip() == norm(v["value"]) for t in texts)), None)
    if seg is None and value is None:
        return False
    says = " ".join(row.split())
    for text in texts:
        if (seg is not None and seg.named_in(norm(text))) or (value is not None and norm(text) == norm(
                value["value"])):
            continue  # the cell naming the segment or value
        for n in extract_numbers(text):
            if n.year:
                continue
            if seg is not None:
                pool = ([100 * seg.share_of_failing, 100 * seg.share_of_rows,
                         100 * seg.failing / seg.rows if seg.rows else 0.0] if n.percent
                        else [seg.failing, seg.rows, seg.rows - seg.failing])
                actual = segment_text(seg, facts.failing, facts.total)
            else:
                pool = [] if n.percent else [float(value["failing"])] if value else []
                actual = f"{value['value']!r} ×{format_count(value['failing'])}" if value else ""
            if n.percent and value is not None and seg is None:
                continue
            if any(n.matches(float(v)) for v in pool) or (n.percent and any(
                    n.approx is None and 0 <= v - n.value < 10 ** -n.decimals for v in pool)):
                res.add_ok(f"{item.name}: {n.text} in the row of {says!r} matches the diagnosis")
            else:
                res.add_bad(item.name, says, actual, f"The report's row {says!r} under {item.name} says {n.text}, "
                            f"but in the diagnosis {actual}.")
    return True
