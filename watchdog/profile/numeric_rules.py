"""Suggesting ``range … numeric_text: true`` for numbers stored as text.

A text column gets a numeric range when, read through the table's suggested ``null_values``, at least
``NEAR_SHAPE`` (90%) of its remaining values are numbers by the numeric-text rule and there are
``min_support_rows`` of them. The bounds get the same headroom as a numeric column's (today's extremes widened
by 10% of the spread, rounded outward; never below 0 when nothing is), never today's exact extremes. Two kinds
of number columns are left out or get a floor only:

* codes written with digits (a ZIP code, a phone number, a column named like an identifier: ``id``, ``code``,
  ``number``, ...) get no range: their size means nothing;
* a column of whole numbers that are all different (a row number, a sequence) gets only its floor: its maximum
  grows with the table.

A column where under 100% are numbers gets the check anyway, and it fails today: it is written commented out with
its measured failure, as a near shape is.
"""

from __future__ import annotations

import math

from watchdog.defaults import PROFILE_RANGE_HEADROOM
from watchdog.profile.null_values import TableSetting, present_numbers
from watchdog.profile.rules import ID_WORDS, NEAR_SHAPE, Candidate, Knobs, _words, headroom, n, n_or, pct
from watchdog.profile.stats import ColumnProfile, TableProfile

#: shapes of codes written with digits: no range on them
CODE_SHAPES = ("zip", "phone")


def code_like(col: ColumnProfile) -> bool:
    """Digits that are a code (a ZIP code, a phone number, an identifier by its name), not a quantity."""
    return (any(col.shapes.get(s, 0.0) >= NEAR_SHAPE for s in CODE_SHAPES)
            or bool(set(_words(col.name).split("_")) & ID_WORDS))


def _widen(low: float, high: float, integral: bool) -> tuple[int | float, int | float]:
    """Today's extremes with headroom (one value seen: 10% of its size, or 1, on each side); whole numbers for a
    column of whole numbers."""
    if high > low:
        wide_low, wide_high = headroom(low, high)
    else:
        pad = abs(low) * PROFILE_RANGE_HEADROOM or 1.0
        wide_low, wide_high = low - pad, high + pad
    if integral:
        return math.floor(wide_low), math.ceil(wide_high)
    return tuple(int(v) if float(v).is_integer() else v for v in (wide_low, wide_high))  # type: ignore[return-value]


def numeric_text_ranges(view: TableProfile, original: TableProfile, setting: TableSetting,
                        knobs: Knobs) -> list[Candidate]:
    """Numeric ranges for the text columns of ``view`` (the profile read through ``setting``) that hold numbers."""
    skip = set(original.primary_key) | {fk[0] for fk in original.foreign_keys}
    out = []
    for col, raw in zip(view.columns, original.columns, strict=True):
        if raw.numbers is None or raw.numeric_min is None or raw.numeric_max is None or col.name in skip:
            continue
        present = view.rows - col.nulls
        numbers = present_numbers(raw, setting.markers_of(col.name))
        if present < knobs.min_support_rows or numbers < NEAR_SHAPE * present or code_like(col):
            continue
        low, high = float(raw.numeric_min), float(raw.numeric_max)
        integral = low.is_integer() and high.is_integer()
        share = "every one" if numbers == present else pct(numbers / present)
        said = (f"{share} of {n(present)} values {'is a number' if numbers == present else 'are numbers'} "
                f"stored as text; observed min {low:g}, max {high:g}")
        sequence = integral and col.distinct_method == "exact" and col.distinct == present
        lo, hi = _widen(low, high, integral)
        if sequence:
            floor = lo
            options = {"column": col.name, "min": floor, "numeric_text": True}
            said += ("; all different whole numbers (a sequence or an identifier: its maximum grows with the "
                     f"table), so only the floor {n_or(floor)}")
        else:
            options = {"column": col.name, "min": lo, "max": hi, "numeric_text": True}
            said += f"; bounds {n_or(lo)}..{n_or(hi)} leave {pct(PROFILE_RANGE_HEADROOM)} of the spread as headroom"
        out.append(Candidate(view.name, "range", options, said))
    return out
