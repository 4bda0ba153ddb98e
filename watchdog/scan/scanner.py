"""Run checks through the sandbox and turn measured values into findings.

The scanner executes the planner's statements (never pulling table rows into Python to
count them), isolates failures so one broken check cannot stop the others, and fetches
a few failing rows for each check that breaches: from the check's own statement where it can
(unique, foreign_key), else in one statement per table (:mod:`watchdog.scan.samples`).
"""

from __future__ import annotations

import copy
import threading
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

from watchdog import __version__
from watchdog.defaults import DEFAULT_PARALLEL, DEFAULT_SAMPLE
from watchdog.errors import (
    DatabaseUnavailable,
    Interrupted,
    QueryError,
    QueryTimeout,
    SandboxError,
    WatchdogError,
)
from watchdog.findings import NOT_RUN as NOT_RUN_PREFIX
from watchdog.findings import SAMPLE_TEXT_LIMIT, Finding, FindingsDoc, Status, Summary, jsonable
from watchdog.redact import redact
from watchdog.sandbox import Sandbox
from watchdog.scan import anomaly_series, column_globs, grouped, missing
from watchdog.scan.check_types import Aggregate, Check, Columns, Measurement, Metric, Procedure, Standalone
from watchdog.scan.check_types.base import SampleSpec
from watchdog.scan.parallel import run_statements, split_for
from watchdog.scan.planner import Statement, batch_statements, plan
from watchdog.scan.samples import KeyAggregate, by_key, parse_keys, table_sample
from watchdog.scan.sqlbuild import BINARY_COLLATION, split_name

Progress = Callable[[int, int, str], None]
NOT_RUN = f"{NOT_RUN_PREFIX}the scan was interrupted"
#: the error of the checks left when the database could not be used (said once, in the document's ``error``)
NOT_RUN_UNAVAILABLE = f"{NOT_RUN_PREFIX}the database could not be used (see the scan's error)"


@dataclass
class _Measured:
    values: dict[Metric, Any] = field(default_factory=dict)
    failures: dict[Metric, str] = field(default_factory=dict)
    #: sample columns and rows that came with a metric's own statement (its ``sampled`` form)
    extras: dict[Metric, tuple[list[str], list[tuple[Any, ...]]]] = field(default_factory=dict)
    unavailable: str | None = None

    def merge(self, other: _Measured) -> None:
        """Add what one statement measured (statements may run on several sandboxes at once)."""
        self.values.update(other.values)
        self.failures.update(other.failures)
        self.extras.update(other.extras)
        if other.unavailable and not self.unavailable:
            self.unavailable = other.unavailable


def scan(sandbox: Sandbox, checks: list[Check], *, sample: int = DEFAULT_SAMPLE, suites: list[str] | None = None,
         on_progress: Progress | None = None, history: Mapping[str, list[dict[str, Any]]] | None = None,
         parallel: int = DEFAULT_PARALLEL) -> FindingsDoc:
    """Run ``checks`` and return the findings document (never raises for a check's own failure).

    ``history``: each check's findings in earlier runs of the audit (oldest first), for ``anomaly:``
    and ``schema_changes``. ``parallel``: sandboxes the statements may use at once when they are slow
    (:mod:`watchdog.scan.parallel`). Ctrl-C keeps what finished: :class:`Interrupted` carries the findings, the
    checks that did not run marked so."""
    checks, unexpanded = column_globs.expand_for(sandbox, checks)
    for check in checks:
        check.past = list((history or {}).get(check.name, []))
    started = datetime.now(UTC)
    clock = time.monotonic()
    checks = with_column_types(sandbox, checks)
    the_plan = plan([c for c in checks if not c.column_glob], sandbox.dialect, sample=sample,
                    split=split_for(sandbox, parallel))
    the_plan.errors.update(unexpanded)
    measured = _Measured()
    interrupted = _run_plan(sandbox, the_plan.statements, measured, on_progress, parallel)
    measured_findings = [_finding(sandbox, check, the_plan.needs.get(check.name), the_plan.errors.get(check.name),
                                  measured) for check in checks]
    findings = [finding for finding, _ in measured_findings]
    if sample > 0 and not measured.unavailable and not interrupted:
        try:
            _add_samples(sandbox, checks, measured_findings, the_plan.needs, measured, sample, the_plan.keys)
        except KeyboardInterrupt:  # while fetching samples: the figures are in, only samples are lost
            interrupted = True
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


def _run_plan(sandbox: Sandbox, statements: list[Statement], measured: _Measured, on_progress: Progress | None,
              parallel: int) -> bool:
    """Run the plan's statements into ``measured``; True when Ctrl-C stopped them (what did not finish is
    then marked not run)."""
    steps = len(statements)
    stopping = threading.Event()

    def run_one(box: Sandbox, statement: Statement) -> None:
        own = _Measured(unavailable=measured.unavailable)
        _run_statement(box, statement, own)
        if stopping.is_set():  # a helper's statement stopped by Ctrl-C: marked not run below
            own.failures = {}
        measured.merge(own)

    def started(i: int, statement: Statement) -> None:
        if on_progress:
            on_progress(i, steps, statement.table or "custom query")

    try:
        run_statements(sandbox, statements, run_one, parallel=parallel, on_start=started, stop=stopping,
                       heavy=lambda statement: not statement.is_batch)
        if on_progress:
            on_progress(steps, steps, "samples")
    except KeyboardInterrupt:  # keep what finished; the rest is marked not run
        for statement in statements:
            for metric in statement.metrics:
                if metric not in measured.values:
                    measured.failures.setdefault(metric, NOT_RUN)
        return True
    return False


def with_column_types(sandbox: Sandbox, checks: list[Check]) -> list[Check]:
    """Checks whose meaning depends on column types get a copy with the table's types (one catalogue
    read per table); the others are returned as they are."""
    out = []
    collations = getattr(sandbox, "dialect", "") in BINARY_COLLATION  # text keys are collated explicitly there
    for check in checks:
        needs = check.needs_column_types or (check.compares_text_keys and collations)
        if needs and check.table and hasattr(sandbox, "column_types"):
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
    if isinstance(first, (Columns, Procedure, grouped.GroupedCount)):
        _run_special(sandbox, statement, first, measured)
        return
    many = first.rows if isinstance(first, Standalone) and first.rows > 1 else 0
    try:
        jit = not isinstance(first, Standalone) or first.jit
        result = sandbox.query(statement.sql, max_rows=statement.sample_rows or max(2, many), parallel=True,
                               **({} if jit else {"jit": False}))
    except DatabaseUnavailable as exc:
        measured.unavailable = f"database unavailable: {redact(exc)}"
        _fail_all(statement, measured, measured.unavailable)
        return
    except QueryTimeout as exc:
        _fail_all(statement, measured, f"timed out: {exc}")
        return
    except SandboxError as exc:
        if statement.plain is not None:  # the pass with the failing rows' keys failed (a view, no rowid): without
            for plain in batch_statements(statement.table or "", statement.where, statement.plain, sandbox.dialect):
                _run_statement(sandbox, plain, measured)
        elif statement.sample_rows:  # the form with sample rows failed: the plain count still may not
            _run_statement(sandbox, Statement(statement.metrics[0].sql, statement.metrics), measured)  # type: ignore[union-attr]
        elif statement.is_batch and len(statement.metrics) > 1:
            _run_one_by_one(sandbox, statement, measured)
        else:
            _fail_all(statement, measured, f"{exc.prefix}: {redact(exc)}")
        return
    if many:  # a statement that returns one row per bucket
        measured.values[statement.metrics[0]] = list(result.rows)
        return
    _record(statement, result.columns, result.rows, measured)


def _run_special(sandbox: Sandbox, statement: Statement, first: Columns | Procedure | grouped.GroupedCount,
                 measured: _Measured) -> None:
    """A catalogue read, a procedure, or a grouped statement."""
    if isinstance(first, Columns):
        _read_columns(sandbox, first, measured)
    elif isinstance(first, Procedure):
        _run_procedure(sandbox, first, measured)
    else:
        _run_grouped(sandbox, statement, measured)


def _run_grouped(sandbox: Sandbox, statement: Statement, measured: _Measured) -> None:
    """A table's grouped statement (:mod:`watchdog.scan.grouped`); when it fails, each check's part alone."""
    counts: list[grouped.GroupedCount] = statement.metrics  # type: ignore[assignment]
    try:
        result = sandbox.query(statement.sql, max_rows=grouped.max_rows(len(counts)), parallel=True)
    except DatabaseUnavailable as exc:
        measured.unavailable = f"database unavailable: {redact(exc)}"
        _fail_all(statement, measured, measured.unavailable)
    except QueryTimeout as exc:
        _fail_all(statement, measured, f"timed out: {exc}")
    except SandboxError as exc:
        if len(counts) == 1:
            _fail_all(statement, measured, f"{exc.prefix}: {redact(exc)}")
            return
        for one in counts:
            _run_grouped(sandbox, Statement(grouped.statement(statement.table or "", [one], sandbox.dialect), [one],
                                            statement.table), measured)
    else:
        for metric, value in grouped.read(counts, result.columns, result.rows).items():
            measured.values[metric] = value


def _read_columns(sandbox: Sandbox, metric: Columns, measured: _Measured) -> None:
    try:
        measured.values[metric] = sandbox.columns(metric.table)
    except SandboxError as exc:
        measured.failures[metric] = f"{exc.prefix}: {redact(exc)}"


def _run_procedure(sandbox: Sandbox, metric: Procedure, measured: _Measured) -> None:
    try:
        measured.values[metric] = metric.run(sandbox)
    except WatchdogError as exc:
        measured.failures[metric] = f"{exc.prefix}: {redact(exc)}"


def _record(statement: Statement, columns: list[str], rows: list[tuple[Any, ...]], measured: _Measured) -> None:
    """Store what a statement measured (or why its rows cannot be read)."""
    if statement.sample_rows:  # the figures ride on every row; no row at all means they are all 0
        metric = statement.metrics[0]
        width = getattr(metric, "width", 1)
        measured.values[metric] = rows[0][:width] if rows else (0,) * width
        measured.extras[metric] = (columns[width:], [row[width:] for row in rows])
    elif not rows:
        _fail_all(statement, measured, "the query returned no row")
    elif len(rows) > 1 and not statement.is_batch:
        _fail_all(statement, measured, "the query must return exactly one row")
    elif statement.is_batch:
        for metric, value in zip(statement.metrics, rows[0], strict=False):
            measured.values[metric] = value
    else:
        measured.values[statement.metrics[0]] = rows[0]


def _run_one_by_one(sandbox: Sandbox, statement: Statement, measured: _Measured) -> None:
    """A batch failed: run its aggregates one at a time so only the broken ones get the error."""
    for metric in [m for m in statement.metrics if isinstance(m, Aggregate) and not isinstance(m, KeyAggregate)]:
        single = batch_statements(statement.table or "", statement.where, [metric], sandbox.dialect)[0]
        _run_statement(sandbox, single, measured)


def not_run(checks: list[Check], *, database: str, error: str, dialect: str | None,
            suites: list[str] | None = None) -> FindingsDoc:
    """The findings of a scan whose database could not even be opened (no driver, not a URL): ``error`` is said
    once, as the document's, every check marked not run (``dialect``: how their SQL reads, None if unknown)."""
    started = datetime.now(UTC).isoformat(timespec="seconds").replace("+00:00", "Z")
    findings = [Finding(**_base(check, dialect), status="error", error=NOT_RUN_UNAVAILABLE) for check in checks]
    return FindingsDoc(database=database, started_at=started, duration_s=0.0, summary=Summary.of(findings),
                       findings=findings, suites=suites or [], watchdog_version=__version__, error=redact(error))


def _base(check: Check, dialect: str | None) -> dict[str, Any]:
    """What every finding of ``check`` says, whatever it measured."""
    base = dict(name=check.name, check=check.kind, table=check.table, column=check.column, columns=check.columns,
                severity=check.options.severity, params=jsonable(check.params),
                description=check.options.description, owners=list(check.owners) or None,
                tags=list(check.tags) or None)
    try:
        base["sql"] = check.finding_sql(dialect) if dialect else None
    except (WatchdogError, ValueError):  # (ValueError: a dialect sqlglot does not know)
        base["sql"] = None
    return base


def _finding(sandbox: Sandbox, check: Check, needs: list[Metric] | None, plan_error: str | None,
             measured: _Measured) -> tuple[Finding, Measurement | None]:
    base = _base(check, sandbox.dialect)
    if plan_error or needs is None:
        return Finding(**base, status="error", error=redact(plan_error or "could not plan this check")), None
    failures = [measured.failures[m] for m in needs if m in measured.failures]
    if failures and measured.unavailable and measured.unavailable in failures:
        return Finding(**base, status="error", error=NOT_RUN_UNAVAILABLE), None
    if failures:
        return Finding(**base, status="error", error=missing.explain(failures[0], check, sandbox)), None
    try:
        values = {metric: measured.values[metric] for metric in needs}
        m = anomaly_series.evaluate(check, check.measure(values, sandbox.dialect), values)
    except (QueryError, ValueError, TypeError) as exc:
        return Finding(**base, status="error", error=redact(exc)), None
    status: Status = (check.options.severity if anomaly_series.breached(check, m)
                      else "warn" if check.warned(m) else "pass")
    finding = Finding(**base, status=status, failing=m.failing, total=m.total, rate=m.rate, observed=m.observed,
                      details=jsonable(m.details))
    return finding, m


def _add_samples(sandbox: Sandbox, checks: list[Check], measured_findings: list[tuple[Finding, Measurement | None]],
                 needs: dict[str, list[Metric]], measured: _Measured, sample: int,
                 keys: dict[str, KeyAggregate] | None = None) -> None:
    """Sample rows for every breaching check: from its own statement, by the keys its counting pass returned, else
    one statement per table."""
    by_table: dict[str, list[tuple[Check, Finding, SampleSpec]]] = {}
    keyed: dict[str, list[tuple[Check, Finding, SampleSpec, list[int]]]] = {}
    for check, (finding, m) in zip(checks, measured_findings, strict=True):
        if m is None or finding.status in ("pass", "error"):
            continue
        spec = _shared_spec(sandbox, check, finding, m, needs, measured, sample)
        if spec is None or not check.table:
            continue
        found = _failing_keys(check, spec, keys, measured)
        if found is not None:  # every failing row's key came with the count: fetched by key
            keyed.setdefault(check.table, []).append((check, finding, spec, found[:sample]))
        else:
            by_table.setdefault(check.table, []).append((check, finding, spec))
    for table, sparse in keyed.items():
        if not _sample_by_key(sandbox, table, sparse, sample):  # read them with the table's sample pass instead
            by_table.setdefault(table, []).extend((c, f, s) for c, f, s, _ in sparse)
    for table, items in by_table.items():
        conditions = [(spec.condition, spec.expected) for _, _, spec in items]
        samples = _table_sample(sandbox, table, conditions, sample)
        if samples is None:  # e.g. a database without UNION ALL of LIMITs: one query per check instead
            for check, finding, _ in items:
                _add_sample(sandbox, check, finding, sample)
            continue
        for (_, finding, _), rows in zip(items, samples, strict=True):
            finding.sample = [jsonable(row, SAMPLE_TEXT_LIMIT) for row in rows]


def _table_sample(sandbox: Sandbox, table: str, conditions: list[tuple[Any, int | None]],
                  sample: int) -> list[list[dict[str, Any]]] | None:
    """The sample rows of each condition from one statement (see :mod:`watchdog.scan.samples`); its sparse branch
    ordered by the row address, else (a view has none) unordered; None when neither runs."""
    for ordered in (True, False):
        query = table_sample(table, conditions, sample, sandbox.dialect, ordered=ordered)
        try:
            # ``parallel``: the shared branch of sparse conditions usually has to read to the table's end
            # (its last failing row is anywhere), which PostgreSQL's parallel workers do faster; its dense
            # branches stop after a few pages either way.
            result = sandbox.query(query.sql, max_rows=query.max_rows, parallel=True)
        except SandboxError:
            if query.ordered:
                continue
            return None
        return query.split(result.columns, result.rows, sample)
    return None


def _shared_spec(sandbox: Sandbox, check: Check, finding: Finding, m: Measurement, needs: dict[str, list[Metric]],
                 measured: _Measured, sample: int) -> SampleSpec | None:
    """The check's sample condition, to be read with the table's other ones; None when its sample is settled here
    (it came with its own statement, it needs a query of its own, or it cannot be had)."""
    extra = next((measured.extras[x] for x in needs.get(check.name, []) if x in measured.extras), None)
    try:
        spec = check.sample_spec(sandbox.dialect, m, extra, sample)
    except (WatchdogError, ValueError) as exc:
        finding.details["sample_error"] = redact(exc)
        return None
    if spec is not None and spec.rows is not None:
        finding.sample = [jsonable(row, SAMPLE_TEXT_LIMIT) for row in spec.rows]
        return None
    if spec is not None and spec.condition is not None and check.table:
        return spec
    _add_sample(sandbox, check, finding, sample)
    return None


def _failing_keys(check: Check, spec: SampleSpec, keys: dict[str, KeyAggregate] | None,
                  measured: _Measured) -> list[int] | None:
    """The keys of all of the check's failing rows, when its counting pass returned them."""
    metric = (keys or {}).get(check.name)
    found = parse_keys(measured.values.get(metric)) if metric is not None else None
    return found if found is not None and len(found) == spec.expected else None


def _sample_by_key(sandbox: Sandbox, table: str, found: list[tuple[Check, Finding, SampleSpec, list[int]]],
                   sample: int) -> bool:
    """The sample rows of sparse checks, by the keys their counting pass returned: one statement reading only those
    rows. False when it fails."""
    try:
        result = sandbox.query(by_key(table, [k for *_, ks in found for k in ks], sandbox.dialect),
                               max_rows=sample * len(found))
    except SandboxError:
        return False
    rows = {row[-1]: dict(zip(result.columns[:-1], row[:-1], strict=True)) for row in result.rows}
    for _, finding, _, ks in found:
        finding.sample = [jsonable(rows[k], SAMPLE_TEXT_LIMIT) for k in ks if k in rows]
    return True


def _add_sample(sandbox: Sandbox, check: Check, finding: Finding, sample: int) -> None:
    try:
        query = check.sample_query(sandbox.dialect, sample)
    except WatchdogError:
        return
    if query is None:
        return
    try:
        result = sandbox.query(query.sql(dialect=sandbox.dialect, copy=False), max_rows=sample)  # a fresh tree
    except SandboxError as exc:
        finding.details["sample_error"] = redact(exc)
        return
    finding.sample = [jsonable(row, SAMPLE_TEXT_LIMIT) for row in result.as_dicts()]
