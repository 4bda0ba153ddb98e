"""When the failing rows of a check concentrate in a segment: the rule, a pure function.

A segment is the rows of the check's table (within its ``where``) holding one value of one column. With
``N`` rows in all, ``F`` of them failing, a segment of ``n`` rows of which ``k`` fail is reported only
when every one of these holds:

1. it holds at least :data:`MIN_FAILING` failing rows and at least :data:`MIN_SHARE` of all failing rows;
2. its rate of failing rows is at least :data:`MIN_LIFT` times the table's (``(k / n) / (F / N)``), i.e.
   its share of the failing rows is that many times its share of all rows;
3. it is not chance: the probability that ``k`` or more of the ``F`` failing rows fall into a segment of
   ``n`` rows when the failing rows are any ``F`` rows drawn at random (the hypergeometric upper tail,
   computed exactly) passes the Benjamini–Hochberg procedure at false-discovery rate :data:`FDR` over
   *every* segment tried for the check (every value of every candidate column). When no segment truly
   concentrates, the false discovery rate is the chance of claiming any segment at all: at most
   :data:`FDR` (0.1%) per check, ten times below the one false segment per hundred checks diagnosed that
   the diagnosis must not exceed; chance concentrations are left unsaid rather than claimed.

Segments that fail conditions 1 or 2 are not given a p-value (it is taken as 1, which only makes the
procedure stricter for the others); they still count among the segments tried.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

MIN_FAILING = 3
MIN_SHARE = 0.25
MIN_LIFT = 2.0
FDR = 0.001
#: reported segments per check, at most (the most failing rows first)
MAX_REPORTED = 3


@dataclass(frozen=True)
class Segment:
    column: str
    value: Any
    failing: int
    rows: int


def _log_choose(n: int, k: int) -> float:
    return math.lgamma(n + 1) - math.lgamma(k + 1) - math.lgamma(n - k + 1)


def hypergeom_tail(k: int, population: int, failing: int, drawn: int) -> float:
    """P(X >= k) for X the failing rows among ``drawn`` rows taken at random from ``population`` rows of
    which ``failing`` fail (exact, summed in log space from ``k`` up while the terms matter)."""
    low, high = max(0, drawn + failing - population), min(failing, drawn)
    if k <= low:
        return 1.0
    if k > high:
        return 0.0
    denominator = _log_choose(population, drawn)
    total = 0.0
    for i in range(k, high + 1):
        term = math.exp(_log_choose(failing, i) + _log_choose(population - failing, drawn - i) - denominator)
        total += term
        if term < total * 1e-17 and i > k:  # past the mode the terms only shrink
            break
    return min(1.0, total)


def benjamini_hochberg(p_values: list[float], q: float) -> list[bool]:
    """Which hypotheses the Benjamini–Hochberg step-up procedure rejects at false-discovery rate ``q``."""
    m = len(p_values)
    order = sorted(range(m), key=lambda i: p_values[i])
    cutoff = 0
    for rank, i in enumerate(order, start=1):
        if p_values[i] <= rank * q / m:
            cutoff = rank
    rejected = [False] * m
    for i in order[:cutoff]:
        rejected[i] = True
    return rejected


def screened(segment: Segment, rows: int, failing: int) -> bool:
    """Conditions 1 and 2 of the rule (size and lift), before any test."""
    if segment.failing < MIN_FAILING or failing <= 0 or rows <= 0 or segment.rows <= 0:
        return False
    share_of_failing = segment.failing / failing
    share_of_rows = segment.rows / rows
    return share_of_failing >= MIN_SHARE and share_of_failing >= MIN_LIFT * share_of_rows


def concentrations(segments: list[Segment], rows: int, failing: int, tried: int = 0) -> list[dict[str, Any]]:
    """The segments the rule reports (see the module's notes), as the diagnosis writes them, most failing first.

    ``segments`` are the segments measured for one check, ``rows`` and ``failing`` the check's totals; ``tried``
    is how many segments there are in all (those not measured could not pass conditions 1 and 2 and count
    with a p-value of 1), at least ``len(segments)``."""
    if not segments or failing <= 0 or rows <= 0:
        return []
    passes = [screened(s, rows, failing) for s in segments]
    p_values = [hypergeom_tail(s.failing, rows, failing, s.rows) if ok else 1.0 for s, ok in zip(segments, passes,
                                                                                                   strict=True)]
    p_values += [1.0] * max(0, tried - len(segments))
    rejected = benjamini_hochberg(p_values, FDR)[:len(segments)]
    found = [s for s, ok, r in zip(segments, passes, rejected, strict=True) if ok and r]
    found.sort(key=lambda s: (-s.failing, s.rows, s.column, _order(s.value)))
    return [{"column": s.column, "value": s.value, "failing": s.failing, "rows": s.rows,
             "share_of_failing": round(s.failing / failing, 4), "share_of_rows": round(s.rows / rows, 4),
             "lift": round((s.failing / s.rows) / (failing / rows), 2)}
            for s in found[:MAX_REPORTED]]


def _order(value: Any) -> tuple[int, str]:
    return (0, "") if value is None else (1, str(value))
