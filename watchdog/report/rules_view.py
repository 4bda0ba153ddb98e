"""What the reports say about anomalies, functional dependencies and schema checks.

Sentences are plain text (the templates escape them for Markdown or HTML); the series chart is a
small inline SVG built from numbers only (no text from the database, no script), so it is safe in
the HTML report and in e-mail.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from watchdog.findings import Finding
from watchdog.report import escape as esc

if TYPE_CHECKING:  # imported where the HTML chart is drawn: report.md (every scan) needs no markupsafe
    from markupsafe import Markup

SVG_W, SVG_H, PAD = 360, 90, 6


def figure(f: Finding, value: Any) -> str:
    """A value of the check's anomaly metric as people read it (a rate in %, an age as a duration)."""
    a = f.details.get("anomaly") or {}
    if value is None:
        return "n/a"
    if a.get("metric") == "rate":
        return esc.percent(float(value))
    if f.check == "freshness":
        return esc.duration(float(value))
    return esc.number(round(float(value), 4))


def anomaly_lines(f: Finding) -> list[str]:
    a = f.details.get("anomaly")
    if not isinstance(a, dict):
        return []
    value = {"row_count": "rows", "volume": "rows", "distribution": "PSI"}.get(
        f.check, str(f.details.get("agg")) if f.check == "metric" else "age")
    what = {"rate": "failing rate", "failing": "failing rows", "value": value}
    name = what.get(a.get("metric", ""), str(a.get("metric")))
    if a.get("source") == "buckets":
        source = f"per {a.get('bucket')} of {a.get('timestamp_column')}, training {a.get('training')}"
        at = f"the last complete {a.get('bucket')}"
    else:
        source = "against this audit's earlier runs"
        at = "this run"
    if a.get("expected") is None:
        return [f"Anomaly ({source}): {name} {figure(f, a.get('value'))} in {at}; not judged: {a.get('reason')}."]
    lines = [f"Anomaly ({source}): {name} {figure(f, a.get('value'))} in {at}; expected "
             f"{figure(f, a.get('low'))} to {figure(f, a.get('high'))} (typical {figure(f, a.get('expected'))}, "
             f"from {a.get('training_points')} training points): {a.get('reason')}."]
    flagged = [j for j in a.get("judged") or [] if j.get("anomalous")]
    if a.get("source") == "buckets" and flagged:
        lines.append("Anomalous buckets: " + ", ".join(
            f"{str(j.get('at'))[:16].replace('T', ' ')} ({figure(f, j.get('value'))}, expected "
            f"{figure(f, j.get('low'))} to {figure(f, j.get('high'))})" for j in flagged) + ".")
    return lines


def rule_lines(f: Finding) -> list[str]:
    """Sentences for the new check types' details (column names included: escape them)."""
    d = f.details
    if f.check == "functional_dependency":
        return [f"Groups of equal {', '.join((f.columns or [])[:-1])} with more than one {f.column}: "
                f"{esc.number(d.get('groups_in_conflict'))} ({esc.number(d.get('rows_in_conflict'))} rows), "
                f"{esc.number(d.get('tied_groups'))} of them tied; each failing row is shown beside its group's "
                "majority value (wd_majority_value, empty when tied)."]
    if f.check == "schema":
        out = []
        if d.get("missing"):
            out.append("Missing columns: " + ", ".join(d["missing"]) + ".")
        for w in d.get("wrong_type") or []:
            out.append(f"Column {w['column']}: expected {w['expected']}, is {w['actual']} ({w['actual_type']}).")
        if d.get("extra"):
            out.append("Columns not declared: " + ", ".join(d["extra"]) + ".")
        return out
    if f.check == "schema_changes" or d.get("dropped"):
        return _schema_change_lines(d)
    if isinstance(d.get("groups"), list) and "groups_checked" in d:
        return _group_lines(d)
    if f.check == "metric":
        out = [f"{d.get('agg')} of {f.column}: {figure(f, f.observed)}."]
        if d.get("not_numeric"):
            out.append(f"Values that are not numbers, left out: {esc.number(d['not_numeric'])}.")
        return out + ([f"{d['note']}."] if d.get("note") else [])
    if f.check == "distribution":
        return _distribution_lines(f)
    return []


#: the buckets a distribution's report lists, the most moved first
BUCKETS_SHOWN = 5


def _distribution_lines(f: Finding) -> list[str]:
    d = f.details
    if d.get("note"):
        return [f"{d['note']}."]
    buckets = sorted(d.get("buckets") or [], key=lambda b: -abs(float(b.get("actual") or 0)
                                                                 - float(b.get("expected") or 0)))
    moved = ", ".join(f"{_bucket_name(b)} {esc.percent(float(b.get('expected') or 0))} to "
                      f"{esc.percent(float(b.get('actual') or 0))}" for b in buckets[:BUCKETS_SHOWN])
    against = "the baseline option" if d.get("baseline") == "option" else d.get("baseline")
    return [f"PSI {figure(f, f.observed)} against {against} ({d.get('mode')}); moved most: {moved}."]


def _bucket_name(b: dict[str, Any]) -> str:
    if "bucket" in b:
        return str(b["bucket"])
    return "NULL" if b.get("value") is None else repr(b.get("value"))


def _group_lines(d: dict[str, Any]) -> list[str]:
    """A check judged per group (``group_by``): how many groups broke, and the first of them."""
    head = (f"Judged per group: {esc.number(d.get('groups_failing'))} failing and "
            f"{esc.number(d.get('groups_warning'))} warning of {esc.number(d.get('groups_checked'))} groups.")
    shown = []
    for g in d["groups"][:10]:
        key = ", ".join(f"{k}={'NULL' if v is None else v}" for k, v in (g.get("group") or {}).items())
        shown.append(f"{key}: {esc.number(g.get('failing'))} of {esc.number(g.get('total'))} "
                     f"({esc.percent(g.get('rate'))}, {g.get('status')})")
    more = len(d["groups"]) - len(shown) + int(d.get("groups_omitted") or 0)
    tail = f"; and {esc.number(more)} more" if more > 0 else ""
    return [head] + ([f"Groups over a threshold: {'; '.join(shown)}{tail}."] if shown else [])


def _schema_change_lines(d: dict[str, Any]) -> list[str]:
    """A table monitor's or a schema_changes check's changes since the previous run."""
    if d.get("dropped"):
        return [f"Table dropped: it was there in run {d.get('previous_run')}, it is gone."]
    if d.get("new_table"):
        return [f"New table since run {d.get('previous_run')}, with columns: {', '.join(d.get('added') or [])}."]
    if d.get("previous_run") is None:
        return ["No previous run to compare with."]
    out = [f"Compared with run {d['previous_run']}."]
    if d.get("added"):
        out.append("Columns added: " + ", ".join(d["added"]) + ".")
    if d.get("removed"):
        out.append("Columns removed: " + ", ".join(d["removed"]) + ".")
    for c in d.get("type_changed") or []:
        out.append(f"Column {c['column']} changed type: {c['old']} ({c['old_type']}) "
                   f"to {c['new']} ({c['new_type']}).")
    return out


def _number(value: Any) -> float | None:
    try:
        return None if value is None else float(value)
    except (TypeError, ValueError):
        return None


def sparkline(f: Finding) -> Markup:
    """The anomaly's series as an inline SVG: the values, the expected band, judged points marked."""
    from markupsafe import Markup

    a = f.details.get("anomaly")
    if not isinstance(a, dict):
        return Markup("")
    values = [_number(p.get("value")) for p in a.get("series") or []]
    points = [v for v in values if v is not None]
    low, high = _number(a.get("low")), _number(a.get("high"))
    if len(points) < 2:
        return Markup("")
    top = max(points + [v for v in (high,) if v is not None])
    bottom = min(points + [v for v in (low,) if v is not None])
    span = (top - bottom) or 1.0

    def x(i: int) -> float:
        return PAD + (SVG_W - 2 * PAD) * i / max(1, len(values) - 1)

    def y(v: float) -> float:
        return SVG_H - PAD - (SVG_H - 2 * PAD) * (v - bottom) / span

    parts = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{SVG_W}" height="{SVG_H}" '
             f'viewBox="0 0 {SVG_W} {SVG_H}" role="img" class="series">']
    if low is not None and high is not None:
        parts.append(f'<rect x="{PAD}" y="{y(high):.1f}" width="{SVG_W - 2 * PAD}" '
                     f'height="{max(1.0, y(low) - y(high)):.1f}" fill="#d9ead3" />')
    line = " ".join(f"{x(i):.1f},{y(v):.1f}" for i, v in enumerate(values) if v is not None)
    parts.append(f'<polyline points="{line}" fill="none" stroke="#3465a4" stroke-width="1.5" />')
    judged = {str(j.get("at")): bool(j.get("anomalous")) for j in a.get("judged") or []}
    for i, p in enumerate(a.get("series") or []):
        v = _number(p.get("value"))
        if v is not None and str(p.get("at")) in judged:
            colour = "#cc0000" if judged[str(p.get("at"))] else "#3465a4"
            parts.append(f'<circle cx="{x(i):.1f}" cy="{y(v):.1f}" r="3" fill="{colour}" />')
    parts.append("</svg>")
    return Markup("".join(parts))
