"""``watchdog scan``: compute a run (:mod:`watchdog.run.compute`), then file it (:mod:`watchdog.run.filing`).

Suites are validated and the output folder checked before any query; findings.json is filed before
anything that can fail later (the LLM, the rest of the filing).
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING

from watchdog.database import DatabaseConfig
from watchdog.defaults import DEFAULT_SAMPLE
from watchdog.exit_codes import ExitCode
from watchdog.findings import FindingsDoc
from watchdog.report.view import DEFAULT_ORDER, Order
from watchdog.run.compute import RunOutcome, RunRequest, compute_run, new_run_id
from watchdog.run.filing import RunFolder
from watchdog.scan.scanner import Progress
from watchdog.scan.suites import load_suites

if TYPE_CHECKING:
    from watchdog.graph.models import Models
    from watchdog.graph.runner import LLMReportOutcome
    from watchdog.run.export_failures import ExportRequest
    from watchdog.scan.selection import CheckSelection
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

    @property
    def exit_code(self) -> ExitCode:
        return self.doc.exit_code()

    @classmethod
    def filed(cls, outcome: RunOutcome, out_dir: Path) -> ScanOutcome:
        """A computed run as filed into ``out_dir``."""
        folder = RunFolder(out_dir)
        return cls(outcome.doc, out_dir, folder.findings_path, folder.report_path, llm=outcome.llm,
                   trends=outcome.trends)


def timestamp_dir(parent: Path) -> Path:
    """A new folder ``parent/<UTC timestamp>`` (suffixed -2, -3... if that second is taken)."""
    stamp = datetime.now(UTC).strftime("%Y%m%dT%H%M%SZ")
    candidate, n = parent / stamp, 1
    while candidate.exists():
        n += 1
        candidate = parent / f"{stamp}-{n}"
    return candidate


def run_scan(database: str | DatabaseConfig, suite_paths: Iterable[str | Path], *, out_dir: Path,
             sample: int = DEFAULT_SAMPLE, on_progress: Progress | None = None, llm: bool = False,
             settings: Settings | None = None, models: Models | None = None, run_id: str | None = None,
             allow_empty: bool = False, order: Order = DEFAULT_ORDER, diagnose: bool = True,
             export: ExportRequest | None = None, selection: CheckSelection | None = None) -> ScanOutcome:
    """Validate suites (those that hold no check are an error unless ``allow_empty``), check ``out_dir`` can be
    written, compute the run (the diagnosis unless ``diagnose`` is false, the LLM report with ``llm``) and file
    it into ``out_dir``: findings.json first, then report.md (checks in ``order``; audit.json after an LLM
    report). With ``export``, every failing row of each breaching check is written too (see
    :mod:`watchdog.run.export_failures`). With ``selection``, only the checks it keeps run (see
    :mod:`watchdog.scan.selection`)."""
    suites = load_suites(suite_paths, allow_empty=allow_empty)
    if selection:
        from watchdog.scan.selection import select_checks

        suites = select_checks(suites, selection, allow_empty=allow_empty)
    target = database if isinstance(database, DatabaseConfig) else DatabaseConfig(url=database)
    folder = RunFolder(out_dir, order=order)
    folder.check()  # before any query: a scan whose findings cannot be written is not started
    request = RunRequest(database=target, suites=suites, run_id=run_id or new_run_id(), sample=sample,
                         on_progress=on_progress, diagnose=diagnose, llm=llm, settings=settings, models=models,
                         order=order, out_dir=out_dir, export=export)
    outcome = compute_run(request, record=folder.file_findings)
    folder.file_run(outcome)
    return ScanOutcome.filed(outcome, out_dir)


def reports_dir(settings: Settings, deliver: list[DeliveryChannel]) -> Path:
    """Where an audit files its runs: its first ``file`` channel's folder, else ``reports``."""
    for item in deliver:
        if item.file is not None:
            return settings.path(item.file.dir)
    return settings.path("reports")

