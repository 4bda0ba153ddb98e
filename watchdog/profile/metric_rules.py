"""Suggesting ``metric`` checks: a column's average, and the share of its missing values, with bounds from the data.

* **avg** on each column that gets a numeric range (numbers, or numbers stored as text with ``numeric_text:
  true``): the run measures the average (``observed``), and the bounds are that average widened by
  ``PROFILE_RANGE_HEADROOM`` (10%) of the column's spread (max - min) on each side, rounded outward to a round
  step of that margin's size; a column never below zero keeps 0 as its floor. A range says every value is
  plausible; the average says the whole column still is (a unit changed, a default took over). Not on
  all-different whole numbers (a row number's average grows with the table) nor on codes.
* **null_rate** on a column with too many missing values for ``not_null`` (over 5% at normal strictness): the
  share of rows that are NULL or one of the table's ``null_values``, with ``max`` 1.5 times today's (as a
  ``not_null``'s ``max_rate``), when that is under 1 and the table has ``min_support_rows`` rows (30 at normal
  strictness: a rate seen on 8 rows is chance).
"""

from __future__ import annotations

import math
from typing import Any

from watchdog.defaults import PROFILE_RANGE_HEADROOM
from watchdog.profile.numeric_rules import code_like
from watchdog.profile.rules import Candidate, Knobs, _number, _tidy, n, pct
from watchdog.profile.stats import ColumnProfile, TableProfile


def _around(center: float, spread: float, floor_at_zero: bool) -> tuple[float, float]:
    margin = spread * PROFILE_RANGE_HEADROOM
    step = 10 ** math.floor(math.log10(margin))
    low = math.floor(round((center - margin) / step, 9)) * step
    high = math.ceil(round((center + margin) / step, 9)) * step
    if floor_at_zero and low < 0:
        low = 0
    return _tidy(low, step), _tidy(high, step)


def _plain(value: float) -> int | float:
    return int(value) if float(value).is_integer() else value


def _set_bounds(low: float, high: float) -> Any:
    """After the run: bounds around the observed average (or the check is dropped when there was none)."""
    def settle(c: Candidate) -> None:
        if c.status != "pass" or not isinstance(c.observed, (int, float)):
            c.status, c.failure = "error", f"no average to bound (observed {c.observed})"
            return
        lo, hi = _around(float(c.observed), high - low, low >= 0)
        c.options["min"], c.options["max"] = _plain(lo), _plain(hi)
        c.evidence = (f"average {float(c.observed):.6g} today over values {low:g}..{high:g}; bounds "
                      f"{_plain(lo):g}..{_plain(hi):g} leave {pct(PROFILE_RANGE_HEADROOM)} of the spread on each side")
    return settle


def _extremes(col: ColumnProfile) -> tuple[float, float, bool] | None:
    """(min, max, numbers stored as text) of a column of numbers, or None."""
    if col.family in ("int", "real"):
        low, high = _number(col.min), _number(col.max)
        return None if low is None or high is None else (float(low), float(high), False)
    if col.numbers and col.numeric_min is not None and col.numeric_max is not None:
        return float(col.numeric_min), float(col.numeric_max), True
    return None


def metric_candidates(view: TableProfile, original: TableProfile, ranged: set[str], knobs: Knobs) -> list[Candidate]:
    """``avg`` on the columns of ``ranged`` (those given a numeric range), ``null_rate`` on columns too often missing
    for ``not_null``; ``view`` is the table read through its suggested ``null_values``."""
    out: list[Candidate] = []
    rows = view.rows
    if not rows:
        return out
    for col, raw in zip(view.columns, original.columns, strict=True):
        found = _extremes(raw)
        if col.name in ranged and found is not None and found[1] > found[0] and not code_like(col):
            low, high, as_text = found
            whole = low.is_integer() and high.is_integer()
            if not (whole and col.distinct_method == "exact" and col.distinct == rows - col.nulls):
                options: dict[str, Any] = {"column": col.name, "agg": "avg"}
                if as_text:
                    options["numeric_text"] = True
                out.append(Candidate(view.name, "metric", options, "average (bounds set from the run)",
                                     after_run=_set_bounds(low, high)))
        rate = col.nulls / rows
        ceiling = math.ceil(round(rate * 1.5 * 1000, 6)) / 1000
        if knobs.max_null_rate < rate and ceiling < 1 and rows >= knobs.min_support_rows:
            out.append(Candidate(view.name, "metric", {"column": col.name, "agg": "null_rate", "max": ceiling},
                                 f"{n(col.nulls)} of {n(rows)} rows missing (NULL or a null value: "
                                 f"{pct(rate)}); fails above {pct(ceiling)}"))
    return out
