"""The diagnosis stage: for every failing (or warning) check, where its failing rows concentrate, since when,
which values they get wrong and which other checks fail on the same rows.

It runs after the scan, through the same sandbox, one table at a time, with at most three statements per
table (:mod:`watchdog.diagnose.statements`) and a time budget per table. Nothing here can fail a scan: a
statement that errors or times out is recorded in the diagnosis of the table's checks, and what was found
before it is kept.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from watchdog.defaults import DIAGNOSE_MAX_STATEMENTS, DIAGNOSE_TIMEOUT_S
from watchdog.diagnose.table import Budget, Item, diagnose_table
from watchdog.errors import WatchdogError
from watchdog.findings import Finding, FindingsDoc
from watchdog.redact import redact
from watchdog.sandbox import Sandbox
from watchdog.scan.check_types import Check
from watchdog.scan.scanner import with_column_types
from watchdog.scan.table_options import DiagnoseOptions


def wanted(finding: Finding, passing: bool = False) -> bool:
    """Whether the diagnosis looks at this finding: failing or warning, or (``passing``) passing with failing rows."""
    if finding.status in ("fail", "warn"):
        return True
    return passing and finding.status == "pass" and bool(finding.failing)


def diagnose(sandbox: Sandbox, checks: Sequence[Check], findings: Sequence[Finding], *, passing: bool = False,
             max_statements: int = DIAGNOSE_MAX_STATEMENTS, timeout_s: float = DIAGNOSE_TIMEOUT_S,
             ) -> dict[str, dict[str, Any]]:
    """The diagnosis of each finding it looks at (see :func:`wanted`), by finding name.

    ``checks`` are the scan's checks (their ``past`` gives the audit's history); ``max_statements`` and
    ``timeout_s`` bound each table's diagnosis. Never raises for a database's error."""
    by_name = {c.name: c for c in with_column_types(sandbox, list(checks))}
    out: dict[str, dict[str, Any]] = {}
    tables: dict[str, list[Item]] = {}
    budgets: dict[str, Budget] = {}
    for finding in findings:
        check = by_name.get(finding.name)
        if check is None:
            continue
        options = check.table_options.get("diagnose") or DiagnoseOptions()
        if not options.enabled or not wanted(finding, passing or options.passing):
            continue
        diagnosis: dict[str, Any] = {}
        streak = first_failed_run(check.past) if finding.status != "pass" else None
        if streak:
            diagnosis["first_failed_run"] = streak
        out[finding.name] = diagnosis
        if not check.table:
            continue
        try:
            flag = check.row_flag(sandbox.dialect, str(len(out)))
        except (WatchdogError, ValueError):
            flag = None
        if flag is not None:
            tables.setdefault(check.table, []).append(Item(check, finding, flag, diagnosis))
            budgets.setdefault(check.table, Budget(options.statements or max_statements,
                                                    options.timeout_s or timeout_s))
    for table, items in tables.items():
        diagnose_table(sandbox, table, items, budgets[table])
    return out


def diagnose_doc(sandbox: Sandbox, checks: Sequence[Check], doc: FindingsDoc, **options: Any) -> None:
    """Diagnose ``doc``'s findings and put each diagnosis on its finding. Never raises but for Ctrl-C: a
    diagnosis that fails is recorded as its ``error`` (the findings themselves are never touched)."""
    try:
        found = diagnose(sandbox, checks, doc.findings, **options)
    except Exception as exc:  # a bug or an unexpected driver error must not cost the scan its findings
        message = f"the diagnosis failed: {redact(exc)}"
        found = {f.name: {"error": message} for f in doc.findings if wanted(f, options.get("passing", False))}
    for finding in doc.findings:
        if finding.name in found:
            finding.diagnosis = found[finding.name]


def first_failed_run(past: Sequence[Mapping[str, Any]]) -> dict[str, Any] | None:
    """The first run of the current failing streak among earlier runs (oldest first), with the streak's length
    counting this run; None when the previous run did not fail (the streak starts now)."""
    first = None
    runs = 1
    for entry in reversed(past):
        status = (entry.get("finding") or {}).get("status")
        if status not in ("fail", "warn"):
            break
        first, runs = entry, runs + 1
    if first is None:
        return None
    return {"run_id": first.get("run_id"), "at": first.get("started_at"), "runs": runs}
