"""Compute a run's outcome -- findings, trends, the LLM report -- in stages, writing nothing.

Every entry point (``watchdog scan``, ``watchdog run``, the daemon, ``demo``, the Python API) calls
:func:`compute_run`; what is filed, and where, is the caller's (:class:`watchdog.run.filing.RunFolder`).
The stages run in this order, each a small function of the request and the outcome so far:

1. :func:`scan_stage` -- the checks, through the sandbox (Ctrl-C keeps the findings of the checks that
   finished: the ``record`` callback gets them before the interrupt goes on);
2. :func:`diagnose_stage` -- where, since when and in which values each failing check's rows concentrate
   (:mod:`watchdog.diagnose`), written into the findings;
3. :func:`trends_stage` -- each finding against the previous run's (when there is one);
4. :func:`report_stage` -- the deterministic Markdown report;
5. ``record`` -- the caller's callback, given the outcome before anything that can fail later (the
   model, the disk, SMTP): a run files its findings.json and report.md here;
6. :func:`llm_stage` -- the LLM report graph, when asked for (it returns an outcome, never a file), and the
   report it leads to (the verified text, or the deterministic report with a banner saying why not).

A stage to add is one more function called in :func:`compute_run`, reading and extending :class:`RunOutcome`.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

from watchdog.database import DatabaseConfig
from watchdog.defaults import DEFAULT_SAMPLE
from watchdog.errors import DatabaseUnavailable, Interrupted
from watchdog.exit_codes import ExitCode
from watchdog.findings import FindingsDoc, Summary
from watchdog.report.view import DEFAULT_ORDER, Order
from watchdog.sandbox import Sandbox
from watchdog.scan import incremental
from watchdog.scan.scanner import Progress, not_run, scan
from watchdog.scan.suites import Suite

if TYPE_CHECKING:  # the LLM stack is imported only when an LLM report is asked for
    from watchdog.graph.models import Models
    from watchdog.graph.runner import LLMReportOutcome
    from watchdog.monitor.config import MonitorConfig
    from watchdog.run.export_failures import ExportRequest
    from watchdog.settings import Settings


def new_run_id() -> str:
    """A new run id, ``<UTC timestamp>-<random>``: an audit's run folder is named by it, so two runs started in
    the same second (two daemons, a daemon and ``watchdog run``) never share a folder."""
    return f"{datetime.now(UTC).strftime('%Y%m%dT%H%M%SZ')}-{os.urandom(3).hex()}"


@dataclass
class RunRequest:
    """What to compute: the database, the loaded suites, and the options of the stages."""

    database: DatabaseConfig
    suites: list[Suite]
    run_id: str
    sample: int = DEFAULT_SAMPLE
    on_progress: Progress | None = None
    #: findings of the previous run (trend marks); None: no comparison
    previous_findings: list[dict[str, Any]] | None = None
    #: earlier figures per check (anomaly: against the run history)
    history: dict[str, list[dict[str, Any]]] | None = None
    #: explain each failing check (the diagnosis stage)
    diagnose: bool = True
    #: run the LLM report stage (needs ``settings``; ``models`` given by tests and benchmarks)
    llm: bool = False
    settings: Settings | None = None
    models: Models | None = None
    #: the order of the checks in the report
    order: Order = DEFAULT_ORDER
    #: table monitors (an audit's ``monitor:``): their findings join the suites'
    monitor: MonitorConfig | None = None
    #: write every failing row of each breaching check (None: samples only)
    export: ExportRequest | None = None
    #: the run folder the LLM graph's checkpoint names (for ``watchdog resume``); the graph writes nothing there
    out_dir: Path | None = None
    #: incremental tables' marks ``{table: mark}`` (see watchdog/scan/incremental.py); None: every row is read
    marks: dict[str, Any] | None = None


@dataclass
class RunOutcome:
    """A run's result in memory: the contract every later step (filing, history, delivery, the API) reads."""

    run_id: str
    doc: FindingsDoc
    #: finding name -> new | resolved | worse | better | unchanged (None without a previous run to compare)
    trends: dict[str, str] | None = None
    #: report.md: the deterministic report, or what the LLM stage led to
    report: str = ""
    llm: LLMReportOutcome | None = None

    @property
    def exit_code(self) -> ExitCode:
        return self.doc.exit_code()


#: given the outcome once its findings are known, before anything that can fail later; returns where they went
Record = Callable[[RunOutcome], "Path | None"]


def compute_run(request: RunRequest, *, record: Record | None = None) -> RunOutcome:
    """Run the stages in order (see the module) and return the outcome; nothing is written here. A database
    that cannot even be opened (no driver, not a URL) is a run like any whose database cannot be used: its
    error said once, every check marked not run (:func:`unopened_run`)."""
    try:
        box = Sandbox.for_database(request.database)
    except DatabaseUnavailable as exc:
        return unopened_run(request, exc, record)
    with box:
        outcome = scan_stage(request, box, record)
        monitor_stage(request, box, outcome)
        export_stage(request, box, outcome)
        diagnose_stage(request, box, outcome, record)
        finish_stages(request, box, outcome, record)
    return outcome


def finish_stages(request: RunRequest, box: Sandbox | None, outcome: RunOutcome, record: Record | None) -> None:
    """Trends, the report, the record, then the LLM: what follows the findings, with or without a database."""
    trends_stage(request, outcome)
    report_stage(request, outcome)
    if record is not None:
        record(outcome)
    if request.llm:
        llm_stage(request, box, outcome)


def unopened_run(request: RunRequest, exc: DatabaseUnavailable, record: Record | None) -> RunOutcome:
    """The outcome of a run whose database could not be opened: the stages that need no database."""
    from watchdog.redact import redact_url
    from watchdog.sandbox.policy import sqlglot_dialect
    from watchdog.sandbox.sessions import backend_name
    from watchdog.urls import driver_url

    try:
        dialect: str | None = sqlglot_dialect(backend_name(request.database.url))
    except DatabaseUnavailable:
        dialect = None
    doc = not_run([check for suite in request.suites for check in suite.checks],
                  database=redact_url(driver_url(request.database.url)), error=f"database unavailable: {exc}",
                  dialect=dialect, suites=[str(s.path) for s in request.suites])
    doc.run_id = request.run_id
    outcome = RunOutcome(request.run_id, doc)
    finish_stages(request, None, outcome, record)
    return outcome


def scan_stage(request: RunRequest, box: Sandbox, record: Record | None) -> RunOutcome:
    checks = [check for suite in request.suites for check in suite.checks]
    windows: dict[str, incremental.Window] = {}
    history = request.history
    try:
        if request.marks is not None:
            checks, windows = incremental.narrow(box, checks, request.marks)
            history = incremental.same_scope(history, windows)  # anomalies: windows against windows
        doc = scan(box, checks, sample=request.sample, suites=[str(s.path) for s in request.suites],
                   on_progress=request.on_progress, history=history, parallel=request.database.parallel)
    except Interrupted as stop:  # Ctrl-C: keep the findings of the checks that finished
        partial: FindingsDoc = stop.doc  # type: ignore[assignment]
        partial.run_id = request.run_id
        if record is not None:
            kept = RunOutcome(request.run_id, partial)
            report_stage(request, kept)
            stop.saved_to = record(kept)
        raise
    doc.run_id = request.run_id
    for finding in doc.findings:
        if finding.name in windows:
            finding.window = windows[finding.name].to_json()
    return RunOutcome(request.run_id, doc)


def monitor_stage(request: RunRequest, box: Sandbox, outcome: RunOutcome) -> None:
    if request.monitor is None or outcome.doc.error:
        return
    from watchdog.monitor.run import monitor_findings

    found, _ = monitor_findings(box, request.monitor, request.history)
    outcome.doc.findings += found
    outcome.doc.summary = Summary.of(outcome.doc.findings)


def export_stage(request: RunRequest, box: Sandbox, outcome: RunOutcome) -> None:
    if request.export is None or outcome.doc.error:
        return
    from watchdog.run.export_failures import export_failures, primary_keys

    tables = sorted({f.table for f in outcome.doc.findings if f.table and f.status in ("fail", "warn") and f.sql})
    export_failures(box, outcome.doc, request.export, primary_keys(box, tables) if tables else {})


def diagnose_stage(request: RunRequest, box: Sandbox, outcome: RunOutcome, record: Record | None) -> None:
    if not request.diagnose or outcome.doc.error:
        return
    from watchdog.diagnose import diagnose_doc
    from watchdog.scan import column_globs

    try:
        checks, _ = column_globs.expand_for(box, [check for suite in request.suites for check in suite.checks])
        diagnose_doc(box, checks, outcome.doc)
    except KeyboardInterrupt:  # Ctrl-C while diagnosing: the findings are complete, record them
        stop = Interrupted(outcome.doc)
        if record is not None:
            report_stage(request, outcome)
            stop.saved_to = record(outcome)
        raise stop from None


def trends_stage(request: RunRequest, outcome: RunOutcome) -> None:
    if request.previous_findings is not None:
        from watchdog.trends import compare

        outcome.trends = compare([f.to_json_dict() for f in outcome.doc.findings], request.previous_findings)


def report_stage(request: RunRequest, outcome: RunOutcome) -> None:
    from watchdog.report import render_markdown

    outcome.report = render_markdown(outcome.doc, trends=outcome.trends, order=request.order)


def llm_stage(request: RunRequest, box: Sandbox | None, outcome: RunOutcome) -> None:
    from watchdog.graph.models import build_models
    from watchdog.graph.runner import run_llm_report
    from watchdog.settings import Settings

    settings = request.settings or Settings()
    if request.models is None:
        build_models(settings.llm)  # no endpoint: a clear error (the findings are recorded already)
    outcome.llm = run_llm_report(outcome.doc, request.out_dir or Path.cwd(), settings=settings,
                                 run_id=request.run_id, models=request.models, sandbox=box, trends=outcome.trends)
    outcome.report = llm_report_markdown(outcome.doc, outcome.llm, outcome.trends, request.order)


def resumed_outcome(llm: LLMReportOutcome, order: Order = DEFAULT_ORDER) -> RunOutcome:
    """The outcome of a run whose LLM report was resumed from its checkpoint (``watchdog resume``)."""
    return RunOutcome(llm.run_id, llm.findings, llm.trends, llm_report_markdown(llm.findings, llm, llm.trends, order),
                      llm)


def llm_report_markdown(doc: FindingsDoc, llm: LLMReportOutcome, trends: dict[str, str] | None,
                        order: Order = DEFAULT_ORDER) -> str:
    """report.md after the report graph: its verified text (plus what changed), or the deterministic
    report with a banner saying why the draft was not delivered."""
    from watchdog.redact import redact
    from watchdog.report import render_markdown
    from watchdog.report.render import render_changes_markdown

    if llm.outcome == "verified" and llm.final_report:
        changes = render_changes_markdown(doc, trends) if trends else ""
        return llm.final_report.rstrip() + "\n" + changes
    return render_markdown(doc, banner=redact(llm.banner()), trends=trends, order=order)
