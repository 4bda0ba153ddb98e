"""Suggestion rules: turn a table profile into candidate checks, each with the evidence behind it.

Rules only propose; every candidate is run on the data before it is written (see ``verify``). A rule fitted
to today's rows must still hold when more rows like them arrive, so:

* **Headroom**: a range's bounds are today's extremes widened by ``PROFILE_RANGE_HEADROOM`` (10%) of the
  observed spread on each side, rounded outward to a round step of the margin's size; a column never below
  zero keeps 0 as its floor. Dates get the same headroom below their earliest value, in whole days.
* **Support**: ``accepted_values`` and ``range`` need ``min_support_rows`` non-null rows (30 at normal
  strictness), and ``accepted_values`` also needs every value seen at least twice (a value seen once
  says more unseen ones are coming); ``unique`` on a column that is not a declared key needs values shaped
  like identifiers (email, UUID, URL, ZIP, phone, numbers) or an identifier's name (``*_id``, ``code``,
  ``email``, ``sku``, ...): titles and names are not keys however few repeat today.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import date, datetime, timedelta
from typing import Any

from watchdog.defaults import PROFILE_RANGE_HEADROOM
from watchdog.profile.shapes import DESCRIPTIONS, SHAPES
from watchdog.profile.stats import ColumnProfile, TableProfile

KINDS = ("row_count", "not_null", "unique", "accepted_values", "range", "pattern", "foreign_key", "freshness",
         "functional_dependency", "metric")
STRICTNESS = ("loose", "normal", "strict")
#: a shape most values have: suggested anyway, and written commented out with its failure rate
NEAR_SHAPE = 0.9


@dataclass
class Candidate:
    table: str
    kind: str
    options: dict[str, Any]
    evidence: str
    #: "declared" (from the schema) or "inferred" (from names and values): inferred ones that fail are dropped
    origin: str = "profile"
    # filled in by the verify step
    status: str | None = None
    failure: str | None = None
    #: (failing rows, total rows) when the run measured them
    measured: tuple[int, int] | None = None
    #: the finding's observed value (a metric's aggregate)
    observed: Any = None
    notes: list[str] = field(default_factory=list)
    #: called with the candidate after its run (a metric sets its bounds from what the run observed)
    after_run: Callable[[Candidate], None] | None = field(default=None, repr=False, compare=False)

    @property
    def column(self) -> str | None:
        value = self.options.get("column")
        return value if isinstance(value, str) else None


@dataclass(frozen=True)
class Knobs:
    """How far each rule goes at a strictness level."""

    max_null_rate: float        # above this, no not_null at all
    max_accepted: int           # most distinct values for accepted_values
    min_rows_per_value: int     # rows per distinct value needed to call a column categorical
    min_unique_rows: int        # unique on non-key columns only from this many rows
    freshness_max_days: float   # columns older than this get no freshness check
    non_key_unique: bool
    min_support_rows: int       # accepted_values and range only from this many non-null rows


KNOBS = {
    "loose": Knobs(0.0, 5, 10, 10**9, 30, False, 100),
    "normal": Knobs(0.05, 12, 5, 100, 90, True, 30),
    "strict": Knobs(0.2, 20, 2, 5, 365, True, 10),
}
#: a column named like an identifier (words of its name): ``unique`` may be suggested on it without a key shape
ID_WORDS = {"id", "ids", "uuid", "guid", "key", "code", "email", "sku", "isbn", "ean", "upc", "slug", "username",
            "login", "handle", "number", "no", "num", "ref", "reference", "serial", "token", "hash", "iban"}
#: value shapes of identifiers
ID_SHAPES = ("uuid", "email", "url", "zip", "phone", "numeric")


def n(value: int) -> str:
    return f"{value:,}"


def pct(rate: float) -> str:
    return f"{rate * 100:.2f}%".replace(".00%", "%")


def rules(profile: TableProfile, all_tables: dict[str, TableProfile], strictness: str = "normal") -> list[Candidate]:
    knobs = KNOBS[strictness]
    t = profile.name
    out: list[Candidate] = []
    rows = profile.rows
    low = rows if strictness == "strict" else (max(1, rows // 2) if strictness == "normal" else 1)
    out.append(Candidate(t, "row_count", {"min": min(low, rows) if rows else 0},
                         f"{n(rows)} rows today; fails when the table has fewer than {n(min(low, rows))}"))
    if rows == 0:
        return out
    keys = {c for c in profile.primary_key}
    fk_columns = {fk[0] for fk in profile.foreign_keys}
    for col in profile.columns:
        out += _not_null(t, col, rows, knobs)
    if len(profile.primary_key) > 1:
        out.append(Candidate(t, "unique", {"column": list(profile.primary_key)},
                             f"declared primary key ({', '.join(profile.primary_key)})"))
    for col in profile.columns:
        nonnull = rows - col.nulls
        if col.distinct_method == "exact" and nonnull and col.distinct == nonnull:
            is_key = [col.name] == profile.primary_key
            if is_key or (knobs.non_key_unique and nonnull >= knobs.min_unique_rows
                          and col.family in ("int", "text") and col.name not in fk_columns and _identifier(col)):
                why = "declared primary key; " if is_key else ""
                out.append(Candidate(t, "unique", {"column": col.name},
                                     f"{why}{n(col.distinct or 0)} distinct values in {n(nonnull)} non-null rows"))
        out += _accepted(t, col, rows, knobs, keys | fk_columns)
        if col.name not in keys and col.name not in fk_columns and rows - col.nulls >= knobs.min_support_rows:
            out += _range(t, col)
        out += _pattern(t, col)
    out += _foreign_keys(profile, all_tables)
    out += _freshness(profile, knobs)
    return out


def _not_null(t: str, col: ColumnProfile, rows: int, knobs: Knobs) -> list[Candidate]:
    if col.nulls == 0:
        return [Candidate(t, "not_null", {"column": col.name}, f"0 nulls in {n(rows)} rows")]
    if col.null_rate <= knobs.max_null_rate:
        ceiling = math.ceil(round(col.null_rate * 1.5 * 1000, 6)) / 1000
        return [Candidate(t, "not_null", {"column": col.name, "max_rate": ceiling},
                          f"{n(col.nulls)} nulls in {n(rows)} rows ({pct(col.null_rate)}); "
                          f"fails above {pct(ceiling)}")]
    return []


def _accepted(t: str, col: ColumnProfile, rows: int, knobs: Knobs, keys: set[str]) -> list[Candidate]:
    if col.family != "text" or not col.top_values or col.name in keys or col.distinct is None:
        return []
    if col.distinct > knobs.max_accepted or len(col.top_values) != col.distinct:
        return []
    if (rows - col.nulls) < max(knobs.min_rows_per_value * col.distinct, knobs.min_support_rows):
        return []
    if any(count < 2 for _, count in col.top_values):  # a value seen once: unseen ones are likely to come
        return []
    values = sorted(str(v) for v, _ in col.top_values)
    counts = ", ".join(f"{v} {n(c)}" for v, c in col.top_values[:6])
    more = "" if len(col.top_values) <= 6 else ", ..."
    return [Candidate(t, "accepted_values", {"column": col.name, "values": values},
                      f"{col.distinct} distinct values in {n(rows - col.nulls)} rows: {counts}{more}")]


def _identifier(col: ColumnProfile) -> bool:
    """Values shaped like identifiers, or a column named like one (``CustomerCode``, ``email``, ``order_no``)."""
    if col.family == "int" or any(col.shapes.get(shape, 0.0) == 1.0 for shape in ID_SHAPES):
        return True
    return bool(set(_words(col.name).split("_")) & ID_WORDS)


def headroom(low: float, high: float, share: float = PROFILE_RANGE_HEADROOM) -> tuple[float, float]:
    """``[low, high]`` widened by ``share`` of its spread on each side, rounded outward to a round step of the
    margin's size (a power of ten); a non-negative range keeps 0 as its floor. ``[0.99, 25.86]`` → ``(0, 29)``."""
    margin = (high - low) * share
    if margin <= 0:
        return low, high
    step = 10 ** math.floor(math.log10(margin))
    wide_low = math.floor(round((low - margin) / step, 9)) * step
    wide_high = math.ceil(round((high + margin) / step, 9)) * step
    if low >= 0 > wide_low:
        wide_low = 0
    return _tidy(wide_low, step), _tidy(wide_high, step)


def _tidy(value: float, step: float) -> float:
    return round(value, max(0, -math.floor(math.log10(step)))) if step < 1 else float(round(value))


def _range(t: str, col: ColumnProfile) -> list[Candidate]:
    if col.min is None or col.max is None:
        return []
    if col.family in ("int", "real"):
        low, high = _number(col.min), _number(col.max)
        if low is None or high is None:
            return []
        wide_low, wide_high = headroom(float(low), float(high))
        as_int = col.family == "int" or (isinstance(low, int) and isinstance(high, int))
        lo: int | float = int(wide_low) if as_int or float(wide_low).is_integer() else wide_low
        hi: int | float = int(wide_high) if as_int or float(wide_high).is_integer() else wide_high
        if as_int:
            lo, hi = math.floor(wide_low), math.ceil(wide_high)
        return [Candidate(t, "range", {"column": col.name, "min": lo, "max": hi},
                          f"observed min {low}, max {high}; bounds {n_or(lo)}..{n_or(hi)} leave "
                          f"{pct(PROFILE_RANGE_HEADROOM)} of the spread as headroom")]
    if col.family in ("date", "time"):
        earliest, latest = _as_date(col.min), _as_date(col.max)
        if earliest is None or latest is None:
            return []
        days = math.ceil((latest - earliest).total_seconds() * PROFILE_RANGE_HEADROOM / 86400)
        bound = (earliest - timedelta(days=days)).date().isoformat()
        return [Candidate(t, "range", {"column": col.name, "min": bound},
                          f"observed earliest {col.min}, latest {col.max}; the bound {bound} leaves "
                          f"{pct(PROFILE_RANGE_HEADROOM)} of the span ({n(days)} days) as headroom")]
    return []


def n_or(value: int | float) -> str:
    return n(value) if isinstance(value, int) else f"{value:g}"


def _as_date(value: Any) -> datetime | None:
    if isinstance(value, datetime):
        return value.replace(tzinfo=None)
    if isinstance(value, date):
        return datetime(value.year, value.month, value.day)
    try:
        return datetime.fromisoformat(str(value).strip().replace("Z", "")).replace(tzinfo=None)
    except ValueError:
        return None


def _number(value: Any) -> int | float | None:
    try:
        number = float(value)
    except (TypeError, ValueError):
        return None
    if math.isnan(number) or math.isinf(number):
        return None
    return int(number) if number.is_integer() and not isinstance(value, float) else number


def _pattern(t: str, col: ColumnProfile) -> list[Candidate]:
    """The first shape every value has; else the first most values have (it will fail: written commented out)."""
    if col.family != "text":
        return []
    for threshold in (1.0, NEAR_SHAPE):
        for shape in SHAPES:
            share = col.shapes.get(shape, 0.0)
            if share >= threshold:
                what = "every non-null value is" if share == 1.0 else f"{pct(share)} of non-null values are"
                return [Candidate(t, "pattern", {"column": col.name, "regex": SHAPES[shape]},
                                  f"{what} {DESCRIPTIONS[shape]} ({n(col.min_length or 0)}-{n(col.max_length or 0)}"
                                  " characters)")]
    return []


def _foreign_keys(profile: TableProfile, all_tables: dict[str, TableProfile]) -> list[Candidate]:
    out = []
    seen = set()
    for column, ref_table, ref_column in profile.foreign_keys:
        seen.add(column)
        out.append(Candidate(profile.name, "foreign_key", {"column": column, "references": f"{ref_table}.{ref_column}"},
                             f"declared foreign key to {ref_table}.{ref_column}", origin="declared"))
    for col in profile.columns:
        if col.name in seen or col.name in profile.primary_key or col.family not in ("int", "text"):
            continue
        target = _referenced(col.name, profile.name, all_tables)
        if target:
            out.append(Candidate(profile.name, "foreign_key", {"column": col.name, "references": target},
                                 f"name matches {target}, the key of its table (inclusion is proven by the run)",
                                 origin="inferred"))
    return out


def _words(name: str) -> str:
    return re.sub(r"(?<=[a-z0-9])(?=[A-Z])", "_", name).lower()


def _referenced(column: str, own_table: str, tables: dict[str, TableProfile]) -> str | None:
    """``customer_id`` / ``CustomerId`` -> ``customers.id`` / ``Customer.CustomerId`` (a single-column key)."""
    words = _words(column)
    if not words.endswith("_id") or words == "_id":
        return None
    stem = words[:-3]
    for name, other in tables.items():
        if name == own_table or len(other.primary_key) != 1:
            continue
        table_words = _words(name)
        if table_words in (stem, stem + "s", stem + "es") or (stem.endswith("y") and table_words == stem[:-1] + "ies"):
            return f"{name}.{other.primary_key[0]}"
    return None


def _freshness(profile: TableProfile, knobs: Knobs) -> list[Candidate]:
    stamps = [c for c in profile.columns if c.age_s is not None]
    if not stamps:
        return []
    newest = min(stamps, key=lambda c: c.age_s or 0)
    age_days = (newest.age_s or 0) / 86400
    if age_days > knobs.freshness_max_days:
        return []
    limit = max(1, math.ceil(max(age_days, 0) * 2 + 1))
    return [Candidate(profile.name, "freshness", {"column": newest.name, "max_age": f"{limit}d"},
                      f"newest value {newest.max} ({age_days:.1f} days old); "
                                  f"fails after {limit} days without a new row")]
