"""Suggesting a table's ``null_values`` (and ``trim_blanks``) from its profile, and reading the profile through them.

Which values found in a text column are missing values written as text, and which are values:

* **Blanks** ('' or only spaces) are always missing values: text with nothing in it says nothing. ``''`` is
  listed; ``trim_blanks: true`` too when some blanks are spaces rather than ''.
* A table whose columns are all text (but its key), numbers too (a column of numbers stored as text), as a CSV
  load leaves it, gets ``''`` even with no blank today: in such a table an empty cell is how a missing value
  arrives.
* A **null marker** (a value of the profile's marker list, e.g. ``?`` or ``N/A``) found in a column is a missing
  value when the rest of the column says so: the other values are numbers stored as text (at least
  ``NUMBERS_SHARE`` of them) and the marker is not a number; or the column has many different values (more than
  the profile lists as top values), so a repeated ``?`` stands where the values vary; or the column holds nothing
  else. In a column of few values, where the marker is one of them (``NA`` among regions), it is a value: the
  column's checks then list their own ``null_values`` without it. A marker that is itself a number (``'-1'``) is
  never taken for a missing value in a column of numbers: it cannot be told from one.

The rules then read each column as the checks will: markers and blanks counted with the NULLs, left out of the
top values, the distinct count and the shape shares (:func:`view`).
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import Any

from watchdog.defaults import PROFILE_TOP_VALUES
from watchdog.profile.stats import ColumnProfile, TableProfile

#: a column whose other values are at least this share numbers stored as text is a column of numbers
NUMBERS_SHARE = 0.9
#: the check kinds that read null markers (a check's own ``null_values`` replaces the table's)
MARKED_KINDS = ("not_null", "pattern", "range", "accepted_values", "metric")


@dataclass
class TableSetting:
    """Table options to write above a table's checks, with the evidence for each."""

    options: dict[str, Any] = field(default_factory=dict)
    evidence: list[str] = field(default_factory=list)
    #: columns whose checks need their own list (a table marker is a value there): column -> its list
    own: dict[str, list[str]] = field(default_factory=dict)

    def markers_of(self, column: str) -> list[str]:
        return self.own.get(column, list(self.options.get("null_values", [])))


def _pct(part: int, whole: int) -> str:
    return f"{part / whole * 100:.1f}%" if whole else "0%"


def _quoted(value: str) -> str:
    return "'" + value.replace("'", "''") + "'"


def _is_text(col: ColumnProfile) -> bool:
    return col.blanks is not None


def _judge(col: ColumnProfile, marker: str) -> str | None:
    """Why ``marker`` (found in ``col``) is a missing value there, or None when it is a value."""
    nonnull = col.nonnull
    found = sum(col.markers.values())
    rest = nonnull - (col.blanks or 0) - found
    if rest <= 0:
        return "the column holds nothing else"
    numbers_rest = (col.numbers or 0) - sum(col.markers[m] for m in col.number_markers)
    if numbers_rest >= NUMBERS_SHARE * rest:  # a column of numbers: a marker that is a number may be one of them
        if marker in col.number_markers:
            return None
        return f"it stands among numbers ({_pct(numbers_rest, rest)} of the other values are numbers)"
    if col.distinct is not None and col.distinct > PROFILE_TOP_VALUES and col.top_values is None:
        return f"it repeats where the values vary ({col.distinct:,} different values)"
    return None


def _sort(texts: list[ColumnProfile]) -> tuple[dict[str, list[str]], dict[str, list[str]], dict[str, str]]:
    """Per value found: the columns where it is a missing value, those where it is a value, and why."""
    listed: dict[str, list[str]] = {}
    values: dict[str, list[str]] = {}
    reasons: dict[str, str] = {}
    for col in texts:
        if col.blanks:
            listed.setdefault("", []).append(col.name)
        for marker in col.markers:
            why = _judge(col, marker)
            if why is None:
                values.setdefault(marker, []).append(col.name)
            else:
                listed.setdefault(marker, []).append(col.name)
                reasons.setdefault(marker, why)
    return listed, values, reasons


def _where(profile: TableProfile, columns: list[str], count: Any) -> str:
    shown = ", ".join(f"{c} {_pct(count(profile.column(c)), profile.rows)}" for c in columns[:6])
    return shown + (", ..." if len(columns) > 6 else "")


def table_setting(profile: TableProfile) -> TableSetting:
    """The ``null_values`` (and ``trim_blanks``) ``profile``'s table calls for: empty when it calls for none."""
    texts = [c for c in profile.columns if _is_text(c)]
    setting = TableSetting()
    if not texts or not profile.rows:
        return setting
    listed, values, reasons = _sort(texts)
    numbers = [c.name for c in texts if (c.numeric_text or 0) >= NUMBERS_SHARE]
    loaded_as_text = bool(numbers) and all(_is_text(c) for c in profile.columns if c.name not in profile.primary_key)
    if not listed and not loaded_as_text:
        return setting
    if "" in listed:
        setting.evidence.append(f"blank values ('' or only spaces) in {len(listed[''])} text column(s) "
                                f"({_where(profile, listed[''], lambda c: c.blanks or 0)} of rows): text with "
                                "nothing in it is a missing value")
    else:
        setting.evidence.append(f"every column is text, numbers too ({', '.join(numbers[:3])}), as a CSV load leaves "
                                "it: an empty value is how a missing one arrives, so '' is listed though none is "
                                "found today")
    setting.evidence += [f"{_quoted(m)} in {_where(profile, columns, lambda c, m=m: c.markers[m])} of rows: a "
                         f"missing value, as {reasons[m]}" for m, columns in listed.items() if m]
    order = ["", *[m for m in profile.null_markers if m in listed and m]]
    setting.options["null_values"] = order
    if any((c.blanks or 0) > (c.empty or 0) for c in texts):
        setting.options["trim_blanks"] = True
    for marker, columns in values.items():
        if marker not in listed:
            continue
        setting.evidence.append(f"{_quoted(marker)} is a value in {', '.join(columns)} (one of few values there): "
                                "those columns' checks list their own null_values without it")
        for column in columns:
            setting.own.setdefault(column, list(order)).remove(marker)
    return setting


def view(col: ColumnProfile, markers: list[str], trim: bool) -> ColumnProfile:
    """``col`` as checks with these ``markers`` (and ``trim_blanks``) read it: its markers and blanks counted as
    NULL, and left out of its top values, distinct count and shape shares."""
    if not _is_text(col) or not markers:
        return col
    blanks = (col.blanks or 0) if trim else (col.empty or 0)
    blank_rows = blanks if "" in markers else 0
    marker_rows = sum(k for m, k in col.markers.items() if m in markers)
    missing = blank_rows + marker_rows
    if not missing:
        return col
    rows = col.nulls + col.nonnull
    nonnull = col.nonnull - missing
    gone = sum(1 for m in col.markers if m in markers) + (int(bool(col.empty)) if "" in markers else 0)
    if "" in markers and trim and (col.blanks or 0) > (col.empty or 0):
        gone += 1  # at least one value of only spaces
    distinct = None if col.distinct is None else max(0, col.distinct - gone)

    def kept(value: Any) -> bool:
        text = str(value)
        return text not in markers and not ("" in markers and (text == "" or (trim and text.strip(" ") == "")))

    top = None if col.top_values is None else [(v, k) for v, k in col.top_values if kept(v)]
    scale = col.nonnull / nonnull if nonnull else 0.0
    shapes = {k: min(1.0, round(v * scale, 6)) for k, v in col.shapes.items()} if nonnull else {}
    return replace(col, nulls=col.nulls + missing, null_rate=round((col.nulls + missing) / rows, 6) if rows else 0.0,
                   nonnull=nonnull, distinct=distinct, top_values=top, shapes=shapes)


def table_view(profile: TableProfile, setting: TableSetting) -> TableProfile:
    """``profile`` with every column read through its markers (see :func:`view`)."""
    if not setting.options:
        return profile
    trim = bool(setting.options.get("trim_blanks"))
    return replace(profile, columns=[view(c, setting.markers_of(c.name), trim) for c in profile.columns])


def present_numbers(original: ColumnProfile, markers: list[str]) -> int:
    """The values that are numbers and not markers (a marker that is a number is skipped as NULL by the checks)."""
    return (original.numbers or 0) - sum(k for m, k in original.markers.items()
                                         if m in markers and m in original.number_markers)
