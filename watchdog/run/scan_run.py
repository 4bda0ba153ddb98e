"""One scan function for every entry point (``scan``, ``run``, ``demo``, the daemon).

Suites are validated before any query; findings.json is filed before anything that can fail later
(report rendering, the LLM, delivery). Files are written only through :mod:`watchdog.run.filing`.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

from watchdog.database import DatabaseConfig
from watchdog.defaults import DEFAULT_SAMPLE
from watchdog.errors import Interrupted
from watchdog.exit_codes import ExitCode
from watchdog.findings import FindingsDoc
from watchdog.report.view import DEFAULT_ORDER, Order
from watchdog.run.filing import RunFolder
from watchdog.run.safe_write import OutputError
from watchdog.sandbox import Sandbox
from watchdog.scan.scanner import Progress, scan
from watchdog.scan.suites import load_suites
from watchdog.trends import compare

if TYPE_CHECKING:  # the LLM stack is imported only when an LLM report is asked for
    from watchdog.graph.models import Models
    from watchdog.graph.runner import LLMReportOutcome
    from watchdog.settings import DeliveryChannel, Settings


@dataclass
class ScanOutcome:
    doc: FindingsDoc
    out_dir: Path
    findings_path: Path
    report_path: Path
    llm: LLMReportOutcome | None = None
    #: finding name -> new | resolved | worse | better | unchanged (None without a previous run to compare)
    trends: dict[str, str] | None = None
    #: why the run could not be filed (disk full, permissions); the findings are still in ``doc``
    filing_error: str | None = None

    @property
    def exit_code(self) -> ExitCode:
        return self.doc.exit_code()


def timestamp_dir(parent: Path) -> Path:
    """A new folder ``parent/<UTC timestamp>`` (suffixed -2, -3... if that second is taken)."""
    stamp = datetime.now(UTC).strftime("%Y%m%dT%H%M%SZ")
    candidate, n = parent / stamp, 1
    while candidate.exists():
        n += 1
        candidate = parent / f"{stamp}-{n}"
    return candidate


def run_id_for(run_dir: Path) -> str:
    """A run's id: its folder's UTC timestamp and a short random suffix."""
    return f"{run_dir.name}-{os.urandom(3).hex()}"


def new_run_id() -> str:
    """A new run id, ``<UTC timestamp>-<random>``: an audit's run folder is named by it, so two runs
    started in the same second (two daemons, a daemon and ``watchdog run``) never share a folder."""
    return f"{datetime.now(UTC).strftime('%Y%m%dT%H%M%SZ')}-{os.urandom(3).hex()}"


class Filing:
    """Writes to a run folder that may fail (disk full, permissions): the first failure is kept as
    ``error`` and later writes are skipped, so the scan's findings still reach the history and the
    deliveries (temporary files are removed by :func:`watchdog.run.filing.write_atomic`)."""

    def __init__(self, folder: RunFolder):
        self.folder = folder
        self.error: str | None = None

    def write(self, write: Callable[..., Path], *args: Any, **kwargs: Any) -> Path | None:
        if self.error is not None:
            return None
        try:
            return write(*args, **kwargs)
        except OSError as exc:
            self.error = f"cannot file the run into {self.folder.path}: {exc.strerror or exc}"
            return None
        except OutputError as exc:  # findings.json failed; RunFolder already left a rescue copy
            self.error = f"cannot file the run into {self.folder.path}: {exc}"
            return None


def run_scan(database: str | DatabaseConfig, suite_paths: Iterable[str | Path], *, out_dir: Path,
             sample: int = DEFAULT_SAMPLE, on_progress: Progress | None = None,
             llm: bool = False, settings: Settings | None = None, models: Models | None = None,
             run_id: str | None = None, previous_findings: list[dict] | None = None,
             audit: str | None = None, tolerate_filing_errors: bool = False,
             history: dict[str, list[dict]] | None = None, allow_empty: bool = False,
             order: Order = DEFAULT_ORDER, diagnose: bool = True) -> ScanOutcome:
    """Validate suites, scan ``database`` (a URL with the default limits, or a configured database) through
    the sandbox, file findings.json (first) and report.md; with ``llm``, run the report graph and file what
    it produced (report.md, report.unverified.md, audit.json). With ``tolerate_filing_errors`` (audits), a
    write that fails is recorded in ``filing_error`` instead of raised. Suites that hold no check are an
    error unless ``allow_empty``. The reports list the checks in ``order``. ``diagnose``: explain each failing check
    (:mod:`watchdog.diagnose`) before anything is filed."""
    suites = load_suites(suite_paths, allow_empty=allow_empty)
    checks = [check for suite in suites for check in suite.checks]
    run_id = run_id or run_id_for(out_dir)
    folder = RunFolder(out_dir, order=order)
    # an audit keeps its findings when filing fails (and says so); a scan has no other place for them
    filing = Filing(folder) if tolerate_filing_errors else None

    def write(method: Callable[..., Path], *args: Any) -> Path | None:
        return filing.write(method, *args) if filing is not None else method(*args)

    target = database if isinstance(database, DatabaseConfig) else DatabaseConfig(url=database)
    with Sandbox.for_database(target) as box:
        if filing is None:
            folder.check()  # before any query: a scan whose findings cannot be written is not started
        try:
            doc = scan(box, checks, sample=sample, suites=[str(s.path) for s in suites], on_progress=on_progress,
                       history=history, parallel=target.parallel)
        except Interrupted as stop:  # Ctrl-C: keep the findings of the checks that finished
            partial: FindingsDoc = stop.doc  # type: ignore[assignment]
            partial.run_id = run_id
            stop.saved_to = write(folder.write_findings, partial)
            raise
        doc.run_id = run_id
        if diagnose and not doc.error:
            from watchdog.diagnose import diagnose_doc

            try:
                diagnose_doc(box, checks, doc)
            except KeyboardInterrupt:  # Ctrl-C while diagnosing: the findings are complete, file them
                write(folder.write_findings, doc)
                raise Interrupted(doc) from None
        write(folder.write_findings, doc)
        findings_path = folder.findings_path
        trends = (compare([f.to_json_dict() for f in doc.findings], previous_findings)
                  if previous_findings is not None else None)
        if not llm:
            write(folder.write_report, doc, trends)
            return ScanOutcome(doc, out_dir, findings_path, folder.report_path, trends=trends,
                               filing_error=filing.error if filing else None)
        write(folder.write_report, doc, trends)  # the deterministic report is there even if the LLM step dies
        from watchdog.graph.models import build_models
        from watchdog.graph.runner import run_llm_report
        from watchdog.settings import Settings

        settings = settings or Settings()
        if models is None:
            build_models(settings.llm)  # no endpoint: a clear error, findings already written
        result = run_llm_report(doc, out_dir, settings=settings, run_id=run_id, models=models, sandbox=box,
                                trends=trends)
    write(folder.write_report, doc, trends, result)
    report_path = folder.report_path
    if audit is None:  # a scan: audit.json records the LLM run (an audit files its own, with the audit's keys)
        folder.write_audit(run_id=run_id, audit=None, status=doc.exit_code().name.lower(), review_required=False,
                           summary=doc.summary.to_json_dict(), trends=trends, llm=result)
    return ScanOutcome(doc, out_dir, findings_path, report_path, llm=result, trends=trends,
                       filing_error=filing.error if filing else None)


def reports_dir(settings: Settings, deliver: list[DeliveryChannel]) -> Path:
    """Where an audit files its runs: its first ``file`` channel's folder, else ``reports``."""
    for item in deliver:
        if item.file is not None:
            return settings.path(item.file.dir)
    return settings.path("reports")


def resume_report(run_id: str, *, settings: Settings, sandbox: Sandbox | None = None) -> LLMReportOutcome:
    """Continue an interrupted LLM report from its checkpoint and file what it produced into its run
    folder (report.md, report.unverified.md, audit.json keeping the audit-level keys already filed)."""
    from watchdog.graph.runner import resume_llm_report

    result = resume_llm_report(run_id, settings=settings, sandbox=sandbox)
    folder = RunFolder(result.out_dir)
    doc = result.findings
    folder.write_report(doc, result.trends, result)
    filed = folder.read_audit() or {}
    folder.write_audit(run_id=run_id, audit=filed.get("audit"), status=filed.get("status") or
                       doc.exit_code().name.lower(), review_required=bool(filed.get("review_required")),
                       summary=doc.summary.to_json_dict(), trends=result.trends, llm=result)
    return result
