"""A failing check's diagnosis in one or two plain sentences, the same in every rendering (Markdown, HTML, e-mail).

Plain text: each rendering escapes it its own way. Every number comes from the finding's ``diagnosis``
as filed, written as the reports write numbers (:mod:`watchdog.report.escape`).
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

from watchdog.findings import Finding
from watchdog.report.escape import number, percent

#: offending values named in a sentence, at most
VALUES_SHOWN = 5


def _value(value: Any) -> str:
    if value is None:
        return "NULL"
    if isinstance(value, list):
        return "(" + ", ".join(_value(v) for v in value) + ")"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (int, float)):
        return str(value)  # a key or code: 1017, not 1,017
    text = str(value)
    return "'" + (text if len(text) <= 60 else text[:60] + "…") + "'"


def _moment(text: Any) -> str:
    """``2026-11-14T06:02:11`` -> ``2026-11-14 06:02`` (a date stays a date)."""
    value = str(text)
    return value[:16].replace("T", " ") if "T" in value else value


def _share(rate: float) -> str:
    pct = rate * 100
    return f"{pct:.0f}%" if pct >= 1 or pct == 0 else percent(rate)


def _segment(seg: dict[str, Any], failing: int | None, table: str) -> str:
    value = "is NULL" if seg["value"] is None else f"= {_value(seg['value'])}"
    of = f"{number(seg['failing'])} of the {number(failing)}" if failing else number(seg["failing"])
    return (f"{of} ({_share(seg['share_of_failing'])}) come from {seg['column']} {value}, which holds "
            f"{_share(seg['share_of_rows'])} of all rows of {table}")


def _onset(onset: dict[str, Any], failing: int | None) -> str | None:
    first, last = onset.get("first"), onset.get("last")
    if first is None:
        return None
    if _late_start(onset):
        every = f"all {number(failing)}" if failing else "all of them"
        since = _moment(onset["table_first"])
        return f"{every} since {_moment(first)} ({onset['column']}; the table's rows go back to {since})"
    if "table_first" in onset:
        return (f"they date from {_moment(first)} to {_moment(last)} ({onset['column']}; the table's rows: "
                f"{_moment(onset['table_first'])} to {_moment(onset['table_last'])})")
    return f"they date from {_moment(first)} to {_moment(last)} ({onset['column']})"


#: an onset is said ("all since …") when the failing rows start this share of the table's time range after its first row
LATE_START = 0.1


def _late_start(onset: dict[str, Any]) -> bool:
    try:
        first, table_first, table_last = (datetime.fromisoformat(str(onset[k]))
                                          for k in ("first", "table_first", "table_last"))
        span = (table_last - table_first).total_seconds()
        return span > 0 and (first - table_first).total_seconds() >= LATE_START * span
    except (KeyError, ValueError, TypeError):
        return False


def _values(f: Finding, d: dict[str, Any]) -> str | None:
    values = d.get("values") or []
    if not values:
        return None
    distinct = d.get("values_distinct", len(values))
    listed = ", ".join(f"{_value(v['value'])} ×{number(v['failing'])}" for v in values[:VALUES_SHOWN])
    more = ", …" if distinct > min(len(values), VALUES_SHOWN) else ""
    if f.check == "foreign_key":
        target = str(f.params.get("references", "the parent table"))
        return (f"The {number(f.failing)} orphan rows point to {number(distinct)} missing {target} "
                f"value{'s' if distinct != 1 else ''}: {listed}{more}.")
    if f.check == "unique":
        return f"{number(distinct)} duplicated value{'s' if distinct != 1 else ''}, most repeated: {listed}{more}."
    return f"{number(distinct)} distinct wrong value{'s' if distinct != 1 else ''}, most common: {listed}{more}."


def sentences(f: Finding) -> list[str]:
    """The diagnosis of ``f`` as plain sentences (none when it was not diagnosed or found nothing to say)."""
    d = f.diagnosis
    if not d:
        return []
    table = (f.table or "the table").split(".")[-1]
    out: list[str] = []
    where = [_segment(s, f.failing, table) for s in (d.get("segments") or [])[:2]]
    when = _onset(d["onset"], f.failing) if d.get("onset") else None
    if where:
        first = "; ".join(where)
        out.append(f"{first[0].upper()}{first[1:]}" + (f"; {when}." if when else "."))
    elif when:
        out.append(f"{when[0].upper()}{when[1:]}.")
    if "segments" in d and not d["segments"]:
        out.append("No column value concentrates the failing rows beyond chance.")
    values = _values(f, d)
    if values:
        out.append(values)
    overlap = d.get("overlap") or []
    if overlap:
        shared = "; ".join(f"{number(o['rows'])} also fail{'s' if o['rows'] == 1 else ''} {o['check']}"
                           for o in overlap[:3])
        out.append(f"Of these rows, {shared}.")
    streak = d.get("first_failed_run")
    if streak and streak.get("at"):
        out.append(f"Failing for {number(streak.get('runs'))} runs in a row, since {_moment(streak['at'])}.")
    if d.get("error"):
        out.append(f"The diagnosis did not finish: {d['error']}")
    return out
