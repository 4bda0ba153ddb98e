"""Run checks through the sandbox and turn measured values into findings.

The scanner executes the planner's statements (never pulling table rows into Python to
count them), isolates failures so one broken check cannot stop the others, and fetches
a few failing rows for each check that breaches.
"""

from __future__ import annotations

import copy
import re
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

from watchdog import __version__
from watchdog.errors import (
    DatabaseUnavailable,
    Interrupted,
    QueryError,
    QueryTimeout,
    SandboxError,
    WatchdogError,
)
from watchdog.findings import SAMPLE_TEXT_LIMIT, Finding, FindingsDoc, Status, Summary, jsonable
from watchdog.redact import redact
from watchdog.sandbox import Sandbox
from watchdog.scan import anomalies
from watchdog.scan.check_types import Aggregate, Check, Columns, Metric, Standalone
from watchdog.scan.planner import Statement, batch_statements, plan
from watchdog.scan.sqlbuild import split_name
from watchdog.settings import DEFAULT_SAMPLE

Progress = Callable[[int, int, str], None]
NOT_RUN = "not run: the scan was interrupted"


@dataclass
class _Measured:
    values: dict[Metric, Any] = field(default_factory=dict)
    failures: dict[Metric, str] = field(default_factory=dict)
    unavailable: str | None = None


def scan(sandbox: Sandbox, checks: list[Check], *, sample: int = DEFAULT_SAMPLE, suites: list[str] | None = None,
         on_progress: Progress | None = None, history: Mapping[str, list[dict[str, Any]]] | None = None) -> FindingsDoc:
    """Run ``checks`` and return the findings document (never raises for a check's own failure).

    ``history``: each check's findings in earlier runs of the audit (oldest first), for ``anomaly:``
    and ``schema_changes``."""
    for check in checks:
        check.past = list((history or {}).get(check.name, []))
    started = datetime.now(UTC)
    clock = time.monotonic()
    checks = with_column_types(sandbox, checks)
    the_plan = plan(checks, sandbox.dialect)
    measured = _Measured()
    steps = len(the_plan.statements)
    interrupted = False
    try:
        for i, statement in enumerate(the_plan.statements):
            if on_progress:
                on_progress(i, steps, statement.table or "custom query")
            _run_statement(sandbox, statement, measured)
        if on_progress:
            on_progress(steps, steps, "samples")
    except KeyboardInterrupt:  # keep what finished; the rest is marked not run
        interrupted = True
        for statement in the_plan.statements:
            for metric in statement.metrics:
                if metric not in measured.values:
                    measured.failures.setdefault(metric, NOT_RUN)
    findings = []
    for check in checks:
        needs, error = the_plan.needs.get(check.name), the_plan.errors.get(check.name)
        try:
            findings.append(_finding(sandbox, check, needs, error, measured, 0 if interrupted else sample))
        except KeyboardInterrupt:  # while fetching samples: the figures are in, only the sample is lost
            interrupted = True
            findings.append(_finding(sandbox, check, needs, error, measured, 0))
    doc = FindingsDoc(
        database=sandbox.display_url,
        started_at=started.isoformat(timespec="seconds").replace("+00:00", "Z"),
        duration_s=round(time.monotonic() - clock, 3),
        summary=Summary.of(findings),
        findings=findings,
        suites=suites or [],
        watchdog_version=__version__,
        error=measured.unavailable,
    )
    if interrupted:
        not_run = sum(f.error == NOT_RUN for f in findings)
        doc.error = f"interrupted (Ctrl-C): {not_run} of {len(findings)} checks did not run"
        raise Interrupted(doc)
    return doc


def with_column_types(sandbox: Sandbox, checks: list[Check]) -> list[Check]:
    """Checks whose meaning depends on column types get a copy with the table's types (one catalogue
    read per table); the others are returned as they are."""
    out = []
    for check in checks:
        if check.needs_column_types and check.table and hasattr(sandbox, "column_types"):
            try:
                kinds = sandbox.column_types(split_name(check.table))
            except (ValueError, WatchdogError):
                kinds = {}
            check = copy.copy(check)
            check.column_kinds = kinds
        out.append(check)
    return out


def _fail_all(statement: Statement, measured: _Measured, message: str) -> None:
    """Record the same failure for every metric of ``statement``."""
    for metric in statement.metrics:
        measured.failures[metric] = message


def _run_statement(sandbox: Sandbox, statement: Statement, measured: _Measured) -> None:
    if measured.unavailable:
        _fail_all(statement, measured, measured.unavailable)
        return
    first = statement.metrics[0] if statement.metrics else None
    if isinstance(first, Columns):
        _read_columns(sandbox, first, measured)
        return
    many = first.rows if isinstance(first, Standalone) and first.rows > 1 else 0
    try:
        result = sandbox.query(statement.sql, max_rows=max(2, many))
    except DatabaseUnavailable as exc:
        measured.unavailable = f"database unavailable: {redact(exc)}"
        _run_statement(sandbox, statement, measured)
        return
    except QueryTimeout as exc:
        _fail_all(statement, measured, f"timed out: {exc}")
        return
    except SandboxError as exc:
        if statement.is_batch and len(statement.metrics) > 1:
            _run_one_by_one(sandbox, statement, measured)
        else:
            _fail_all(statement, measured, f"{exc.prefix}: {redact(exc)}")
        return
    if many:  # a statement that returns one row per bucket
        measured.values[statement.metrics[0]] = list(result.rows)
        return
    _store_rows(statement, result.rows, measured)


def _read_columns(sandbox: Sandbox, metric: Columns, measured: _Measured) -> None:
    try:
        measured.values[metric] = sandbox.columns(metric.table)
    except SandboxError as exc:
        measured.failures[metric] = f"{exc.prefix}: {redact(exc)}"


def _store_rows(statement: Statement, rows: list[tuple[Any, ...]], measured: _Measured) -> None:
    """Keep the one row a statement returned: a batch's columns by metric, a standalone query's row whole."""
    if not rows:
        _fail_all(statement, measured, "the query returned no row")
        return
    if len(rows) > 1 and not statement.is_batch:
        _fail_all(statement, measured, "the query must return exactly one row")
        return
    row = rows[0]
    if statement.is_batch:
        for metric, value in zip(statement.metrics, row, strict=False):
            measured.values[metric] = value
    else:
        measured.values[statement.metrics[0]] = row


def _run_one_by_one(sandbox: Sandbox, statement: Statement, measured: _Measured) -> None:
    """A batch failed: run its aggregates one at a time so only the broken ones get the error."""
    for metric in [m for m in statement.metrics if isinstance(m, Aggregate)]:  # a batch holds aggregates only
        single = batch_statements(statement.table or "", statement.where, [metric], sandbox.dialect)[0]
        _run_statement(sandbox, single, measured)


def _finding(sandbox: Sandbox, check: Check, needs: list[Metric] | None, plan_error: str | None,
             measured: _Measured, sample: int) -> Finding:
    base = dict(name=check.name, check=check.kind, table=check.table, column=check.column, columns=check.columns,
                severity=check.options.severity, params=jsonable(check.params),
                description=check.options.description)
    try:
        base["sql"] = check.finding_sql(sandbox.dialect)
    except WatchdogError:
        base["sql"] = None
    if plan_error or needs is None:
        return Finding(**base, status="error", error=redact(plan_error or "could not plan this check"))
    failures = [measured.failures[m] for m in needs if m in measured.failures]
    if failures:
        return Finding(**base, status="error", error=_explain(failures[0], check))
    try:
        values = {metric: measured.values[metric] for metric in needs}
        m = anomalies.evaluate(check, check.measure(values, sandbox.dialect), values)
    except (QueryError, ValueError, TypeError) as exc:
        return Finding(**base, status="error", error=redact(exc))
    status: Status = check.options.severity if anomalies.breached(check, m) else "pass"
    finding = Finding(**base, status=status, failing=m.failing, total=m.total, rate=m.rate, observed=m.observed,
                      details=jsonable(m.details))
    if status != "pass" and sample > 0:
        _add_sample(sandbox, check, finding, sample)
    return finding


_MISSING_OBJECT = re.compile(r"no such (table|column)|(relation|column) .* does not exist|doesn't exist|"
                             r"unknown column", re.IGNORECASE)


def _explain(message: str, check: Check) -> str:
    if check.table and _MISSING_OBJECT.search(message):
        return redact(f"{message} (check `{check.table}` and its columns in the suite)")
    return redact(message)


def _add_sample(sandbox: Sandbox, check: Check, finding: Finding, sample: int) -> None:
    try:
        query = check.sample_query(sandbox.dialect, sample)
    except WatchdogError:
        return
    if query is None:
        return
    try:
        result = sandbox.query(query.sql(dialect=sandbox.dialect), max_rows=sample)
    except SandboxError as exc:
        finding.details["sample_error"] = redact(exc)
        return
    finding.sample = [jsonable(row, SAMPLE_TEXT_LIMIT) for row in result.as_dicts()]
