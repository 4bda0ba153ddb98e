"""Compare a run's findings with the previous run of the same audit (a pure function).

Each finding of the current run is marked:

* ``new``       -- a problem now (warn, fail or error) that was not one before (passed, or absent);
* ``resolved``  -- it passes now but was a problem before (findings that disappeared are not listed);
* ``worse``     -- a problem both times, and now more severe (warn -> fail) or more failing rows
                   (for freshness: an older newest value; for a row_count judged by ``anomaly:``, a
                   count further from the expected one);
* ``better``    -- a problem both times, less severe or fewer failing rows;
* ``unchanged`` -- everything else (the same status and figures, or passing both times).

Failing-row counts are exact, so any difference counts. A measurement (``observed``) moves only by a
meaningful margin: more than :data:`MARGIN` (10%) of the previous value. Freshness compares the newest
value itself, so identical data is ``unchanged`` however much the newest row aged between the runs.
Without a previous run there is nothing to compare: :func:`compare` returns no marks at all. On an incremental
table, a finding judged over a window (new rows) and one judged over every row (a first or ``--full`` run) count
different rows: their figures are never compared, only their statuses.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable
from datetime import datetime
from typing import Any

MARKS = ("new", "resolved", "worse", "better", "unchanged")
_RANK = {"pass": 0, "warn": 1, "fail": 2, "error": 2}


def _problem(status: str | None) -> bool:
    return status in ("warn", "fail", "error")


#: how far (relative to the previous value) a measurement must move to count as a change
MARGIN = 0.10


def _figure(finding: dict[str, Any]) -> float | None:
    if finding.get("failing") is not None:
        return float(finding["failing"])
    if finding.get("check") == "freshness" and finding.get("observed") is not None:
        return float(finding["observed"])
    anomaly = (finding.get("details") or {}).get("anomaly")
    if isinstance(anomaly, dict) and anomaly.get("value") is not None and anomaly.get("expected") is not None:
        return abs(float(anomaly["value"]) - float(anomaly["expected"]))  # further from the usual: worse
    return None


def _stamps(now: Any, before: Any) -> tuple[datetime, datetime] | None:
    try:
        return datetime.fromisoformat(str(now)), datetime.fromisoformat(str(before))
    except ValueError:
        return None


def windowed(finding: dict[str, Any]) -> bool:
    """Judged over an incremental window (the rows past a mark), not over every row."""
    window = finding.get("window")
    return isinstance(window, dict) and window.get("from") is not None


def _moved(current: dict[str, Any], previous: dict[str, Any]) -> str | None:
    """``worse`` / ``better`` when the figure moved meaningfully, else None (also when one figure is a window's
    and the other the whole table's)."""
    if windowed(current) != windowed(previous):
        return None
    if current.get("check") == "freshness":
        now, before = (current.get("details") or {}).get("newest"), (previous.get("details") or {}).get("newest")
        stamps = _stamps(now, before) if isinstance(now, str) and isinstance(before, str) else None
        if stamps is not None:
            newest, was = stamps
            if newest == was:
                return None
            return "worse" if newest < was else "better"
    a, b = _figure(current), _figure(previous)
    if a is None or b is None or a == b:
        return None
    if current.get("failing") is None and abs(a - b) <= MARGIN * abs(b):
        return None
    return "worse" if a > b else "better"


def mark(current: dict[str, Any], previous: dict[str, Any] | None) -> str:
    now = current.get("status")
    if previous is None:
        return "new" if _problem(now) else "unchanged"
    before = previous.get("status")
    if _problem(now) and not _problem(before):
        return "new"
    if not _problem(now):
        return "resolved" if _problem(before) else "unchanged"
    rank_now, rank_before = _RANK[str(now)], _RANK[str(before)]  # both problems here: known statuses
    if rank_now != rank_before:
        return "worse" if rank_now > rank_before else "better"
    return _moved(current, previous) or "unchanged"


def compare(current: Iterable[dict[str, Any]], previous: Iterable[dict[str, Any]] | None) -> dict[str, str]:
    """``{finding name: mark}`` for every finding of the current run; empty without a previous run."""
    before = {f["name"]: f for f in previous or []}
    if not before:
        return {}
    return {f["name"]: mark(f, before.get(f["name"])) for f in current}


def counts(marks: dict[str, str]) -> dict[str, int]:
    tally = Counter(marks.values())
    return {m: tally.get(m, 0) for m in MARKS}
