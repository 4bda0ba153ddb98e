"""The diagnosis facts a prompt carries for each diagnosed check, compactly, and the rule that grounds causes in them.

A check's line in the findings block gets ``"diagnosis"`` with what the program computed: the segments where its
failing rows concentrate (column, value, failing rows there, the rows there, both shares as written percentages),
the onset (``since``/``until``, when the failing rows start later than the table), at most three offending values
that repeat, with their counts, and at most two other checks failing on the same rows. A diagnosis that looked and
found no concentration says so (``"segments": "none"``), so a model is not left to guess. :func:`cause_facts`
gives the same facts as short plain phrases without counts, the easiest correct cause a small model can quote.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

__all__ = ["DIAGNOSIS_RULE", "cause_facts", "diagnosis_brief"]

DIAGNOSIS_RULE = ("Where a check has a \"diagnosis\", its likely causes must come from it: name its segment "
                  "(column = 'value'), its wrong values and since when, exactly as given; never name a segment, value "
                  "or date the diagnosis does not give.")

#: a late onset: the failing rows start this share of the table's time range after its first row
LATE_ONSET = 0.1


def _pct(share: Any) -> str:
    pct = float(share) * 100
    return f"{pct:.0f}%" if pct >= 10 or pct == int(pct) else f"{pct:.1f}%"


def _moment(value: Any) -> str:
    return str(value)[:16].replace("T", " ")


def _late(onset: dict[str, Any]) -> bool:
    try:
        first, lo, hi = (datetime.fromisoformat(str(onset[k])) for k in ("first", "table_first", "table_last"))
    except (KeyError, TypeError, ValueError):
        return False
    span = (hi - lo).total_seconds()
    return span > 0 and (first - lo).total_seconds() >= LATE_ONSET * span


def diagnosis_brief(finding: dict[str, Any]) -> dict[str, Any] | None:
    """The diagnosis of one finding (its findings.json dict) for the prompt, or None when it has none."""
    d = finding.get("diagnosis")
    if not isinstance(d, dict):
        return None
    out: dict[str, Any] = {}
    if isinstance(d.get("segments"), list):
        out["segments"] = [{"column": s.get("column"), "value": s.get("value"), "failing": s.get("failing"),
                            "rows": s.get("rows"), "of_failing": _pct(s.get("share_of_failing", 0)),
                            "of_rows": _pct(s.get("share_of_rows", 0))}
                           for s in d["segments"][:2] if isinstance(s, dict)] or "none"
    onset = d.get("onset")
    if isinstance(onset, dict) and onset.get("first"):
        out["onset"] = ({"column": onset.get("column"), "since": _moment(onset["first"]),
                         "until": _moment(onset.get("last"))} if _late(onset) else "spread over the table's range")
    values = [v for v in d.get("values") or [] if isinstance(v, dict) and (v.get("failing") or 0) >= 2][:3]
    if values:
        out["values"] = [{"value": v.get("value"), "failing": v.get("failing")} for v in values]
    overlap = [o for o in d.get("overlap") or [] if isinstance(o, dict)][:2]
    if overlap:
        out["same_rows_fail"] = [{"check": o.get("check"), "rows": o.get("rows")} for o in overlap]
    run = d.get("first_failed_run")
    if isinstance(run, dict) and run.get("at"):
        out["failing_since_run"] = _moment(run["at"])
    if d.get("error"):
        out["error"] = str(d["error"])[:120]
    return out or None


def cause_facts(finding: dict[str, Any]) -> list[str]:
    """The diagnosis as short phrases a likely cause may quote (names and dates, no counts)."""
    brief = diagnosis_brief(finding) or {}
    facts = []
    segments = brief.get("segments")
    for s in segments if isinstance(segments, list) else []:
        value = "NULL" if s["value"] is None else f"'{s['value']}'"
        facts.append(f"the failing rows concentrate in {s['column']} = {value}")
    onset = brief.get("onset")
    if isinstance(onset, dict):
        facts.append(f"the failing rows start on {onset['since']} ({onset['column']})")
    if brief.get("values"):
        shown = ", ".join(repr(v["value"]) if isinstance(v["value"], str) else str(v["value"])
                          for v in brief["values"])
        distinct = (finding.get("diagnosis") or {}).get("values_distinct")
        every = isinstance(distinct, int) and distinct <= len(brief["values"])
        facts.append(f"the wrong values are {shown}" if every else f"the most common wrong values are {shown}")
    for o in brief.get("same_rows_fail", []):
        facts.append(f"the same rows also fail {o['check']}")
    return facts
