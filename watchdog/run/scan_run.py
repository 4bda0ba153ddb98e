"""One run function for every entry point (``scan``, ``demo``, later ``run`` and the scheduler).

Suites are validated before any query; findings.json is written before anything that can fail
later (report rendering now; the LLM and delivery later).
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from datetime import datetime, timezone
from pathlib import Path
from secrets import token_hex
from typing import TYPE_CHECKING

from watchdog.errors import Interrupted
from watchdog.exit_codes import ExitCode
from watchdog.findings import FindingsDoc
from watchdog.report import render_markdown
from watchdog.run.safe_write import OutputError, check_out_dir, write_findings
from watchdog.sandbox import Sandbox
from watchdog.sandbox.sandbox import DEFAULT_MAX_ROWS, DEFAULT_TIMEOUT_S
from watchdog.scan.scanner import DEFAULT_SAMPLE, Progress, scan
from watchdog.scan.suites import load_suites
from watchdog.settings import Deliver, Settings
from watchdog.trends import compare

if TYPE_CHECKING:  # the LLM stack is imported only when an LLM report is asked for
    from watchdog.graph.models import Models
    from watchdog.graph.runner import LLMReportOutcome


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
    stamp = datetime.now(timezone.utc).strftime("%Y%m%dT%H%M%SZ")
    candidate, n = parent / stamp, 1
    while candidate.exists():
        n += 1
        candidate = parent / f"{stamp}-{n}"
    return candidate


def run_id_for(run_dir: Path) -> str:
    """A run's id: its folder's UTC timestamp and a short random suffix."""
    return f"{run_dir.name}-{token_hex(3)}"


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


def run_scan(url: str, suite_paths: Iterable[str | Path], *, out_dir: Path, timeout_s: float | None = None,
             max_rows: int | None = None, sample: int = DEFAULT_SAMPLE, on_progress: Progress | None = None,
             llm: bool = False, settings: Settings | None = None, models: Models | None = None,
             run_id: str | None = None, previous_findings: list[dict] | None = None) -> ScanOutcome:
    """Validate suites, scan through the sandbox, write findings.json and the deterministic report.md;
    then, with ``llm``, run the report graph (which may replace report.md with a verified LLM report)."""
    suites = load_suites(expand_suite_paths(suite_paths))
    checks = [check for suite in suites for check in suite.checks]
    run_id = run_id or run_id_for(out_dir)
    with Sandbox(url, timeout_s=timeout_s or DEFAULT_TIMEOUT_S, max_rows=max_rows or DEFAULT_MAX_ROWS) as box:
        check_out_dir(out_dir)  # before any query: a scan whose findings cannot be written is not started
        try:
            doc = scan(box, checks, sample=sample, suites=[str(s.path) for s in suites], on_progress=on_progress)
        except Interrupted as stop:  # Ctrl-C: keep the findings of the checks that finished
            partial: FindingsDoc = stop.doc  # type: ignore[assignment]
            partial.run_id = run_id
            stop.saved_to = write_findings(partial, out_dir)
            raise
        doc.run_id = run_id
        findings_path = write_findings(doc, out_dir)
        trends = (compare([f.model_dump(mode="json") for f in doc.findings], previous_findings)
                  if previous_findings is not None else None)
        report_path = out_dir / "report.md"
        try:
            report_path.write_text(render_markdown(doc, trends=trends), encoding="utf-8")
        except OSError as exc:
            raise OutputError(f"cannot write {report_path} ({exc.strerror or exc}); the findings are in "
                              f"{findings_path}", findings_path) from None
        outcome = ScanOutcome(doc, out_dir, findings_path, report_path, trends=trends)
        if llm:
            from watchdog.graph.models import build_models
            from watchdog.graph.runner import write_llm_report

            if models is None:
                build_models((settings or Settings()).llm)  # no endpoint: a clear error, findings already written
            outcome.llm = write_llm_report(doc, out_dir, settings=settings or Settings(), run_id=run_id,
                                           models=models, sandbox=box, trends=trends)
    return outcome


def reports_dir(settings: Settings, deliver: list[Deliver]) -> Path:
    """Where an audit files its runs: its first ``file`` channel's folder, else ``reports``."""
    for item in deliver:
        if item.file is not None:
            return settings.path(item.file.dir)
    return settings.path("reports")
