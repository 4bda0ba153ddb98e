"""Run every candidate check on today's data before it is written; record how each one did."""

from __future__ import annotations

import tempfile
from collections.abc import Callable, Mapping
from pathlib import Path

from watchdog.profile.null_values import TableSetting
from watchdog.profile.rules import Candidate, n, pct
from watchdog.profile.writer import render_suite
from watchdog.sandbox import Sandbox
from watchdog.scan.scanner import scan
from watchdog.scan.suites import SuiteError, load_suite


def run_candidates(box: Sandbox, candidates: list[Candidate],
                   settings: Mapping[str, TableSetting] | None = None) -> list[Candidate]:
    """Run all ``candidates`` in one scan and set each one's ``status`` (pass, fail or error) and ``failure``.

    Returns the candidates to write: inferred foreign keys that fail and checks that cannot run are
    left out (with a note on the returned list's first element's ``notes`` kept by the caller).
    """
    if not candidates:
        return []
    with tempfile.TemporaryDirectory(prefix="wd-suggest-") as folder:
        path = Path(folder) / "candidates.yaml"
        path.write_text(render_suite(candidates, header=[], verified=False, settings=settings), encoding="utf-8")
        try:
            checks = load_suite(path).checks
        except SuiteError as exc:  # a rule produced an invalid check: a bug, said plainly
            raise RuntimeError(f"suggested suite does not validate: {exc}") from None
    ordered = sorted(candidates, key=_table_order(candidates))
    if len(checks) != len(ordered):
        raise RuntimeError(f"{len(ordered)} candidates became {len(checks)} checks")
    doc = scan(box, checks, sample=0)
    for candidate, finding in zip(ordered, doc.findings, strict=True):
        candidate.status = finding.status
        candidate.observed = finding.observed
        if finding.failing is not None and finding.total is not None:
            candidate.measured = (int(finding.failing), int(finding.total))
        if finding.status == "error":
            candidate.failure = finding.error or "could not run"
        elif finding.status in ("fail", "warn"):
            if finding.failing is not None and finding.total:
                rate = pct(finding.failing / finding.total)
                candidate.failure = f"{n(finding.failing)} of {n(finding.total)} rows fail ({rate})"
            else:
                candidate.failure = f"observed {finding.observed}"
    return ordered


def _table_order(candidates: list[Candidate]) -> Callable[[Candidate], tuple[int, int]]:
    tables: dict[str, int] = {}
    for c in candidates:
        tables.setdefault(c.table, len(tables))
    index = {id(c): i for i, c in enumerate(candidates)}
    return lambda c: (tables[c.table], index[id(c)])
