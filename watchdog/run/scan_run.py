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
from watchdog.run.compute import RunOutcome, RunRequest, compute_run, new_run_id
from watchdog.run.filing import RunFolder
from watchdog.scan.scanner import Progress
from watchdog.scan.suites import load_suites

if TYPE_CHECKING:
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


def expand_suite_paths(paths: Iterable[str | Path]) -> list[Path]:
    """Files as given; a folder stands for the ``*.yaml`` / ``*.yml`` files in it."""
    out: list[Path] = []
    for item in paths:
        path = Path(item)
        if path.is_dir():
            out.extend(sorted([*path.glob("*.yaml"), *path.glob("*.yml")]))
        else:
            out.append(path)
    return out


def run_scan(database: str | DatabaseConfig, suite_paths: Iterable[str | Path], *, out_dir: Path,
             sample: int = DEFAULT_SAMPLE, on_progress: Progress | None = None, llm: bool = False,
             settings: Settings | None = None, models: Models | None = None,
             run_id: str | None = None) -> ScanOutcome:
    """Validate suites, check ``out_dir`` can be written, compute the run (the LLM report too with ``llm``) and
    file it into ``out_dir``: findings.json first, then report.md (and audit.json after an LLM report)."""
    suites = load_suites(expand_suite_paths(suite_paths))
    target = database if isinstance(database, DatabaseConfig) else DatabaseConfig(url=database)
    folder = RunFolder(out_dir)
    folder.check()  # before any query: a scan whose findings cannot be written is not started
    request = RunRequest(database=target, suites=suites, run_id=run_id or new_run_id(), sample=sample,
                         on_progress=on_progress, llm=llm, settings=settings, models=models, out_dir=out_dir)
    outcome: RunOutcome = compute_run(request, record=folder.file_findings)
    report_path = folder.file_run(outcome)
    return ScanOutcome(outcome.doc, out_dir, folder.findings_path, report_path, llm=outcome.llm,
                       trends=outcome.trends)


def reports_dir(settings: Settings, deliver: list[DeliveryChannel]) -> Path:
    """Where an audit files its runs: its first ``file`` channel's folder, else ``reports``."""
    for item in deliver:
        if item.file is not None:
            return settings.path(item.file.dir)
    return settings.path("reports")

