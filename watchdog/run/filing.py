"""Filing: the one writer of a run folder.

A run folder holds ``findings.json`` (written first, before anything that can fail later),
``report.md`` (the verified LLM report, or the deterministic one, with a banner when an LLM draft was
not delivered), ``report.unverified.md`` (the last unverified draft, when there is one),
``report.html`` and ``audit.json`` (for audits, and for scans that ran the LLM), and ``latest`` beside
the folder. ``audit.json`` has one schema whatever ran::

    {"run_id", "audit" (null for a scan), "status", "review_required", "summary", "trends",
     "llm": null | {"outcome", "fallback_reason", "models", "tokens", "fix_rounds", "replans",
                    "verification", "review", "rounds"}}

Every file is written to a temporary name and renamed, so a reader never sees half a file and a
failed write leaves no ``*.tmp`` behind.
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from watchdog.findings import FindingsDoc
from watchdog.redact import redact
from watchdog.report import render_markdown
from watchdog.report.render import render_changes_markdown
from watchdog.report.view import DEFAULT_ORDER, Order
from watchdog.run.safe_write import check_out_dir, rescue_findings

if TYPE_CHECKING:
    from watchdog.graph.runner import LLMReportOutcome

FINDINGS = "findings.json"
REPORT = "report.md"
UNVERIFIED = "report.unverified.md"
HTML = "report.html"
AUDIT = "audit.json"
LATEST = "latest"


def write_atomic(path: Path, text: str) -> Path:
    """Write ``text`` to ``path`` through a temporary file in the same folder (removed on failure)."""
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    try:
        tmp.write_text(text, encoding="utf-8")
        os.replace(tmp, path)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise
    return path


def point_latest(audit_dir: Path, run_dir: Path) -> Path:
    """``<audit_dir>/latest`` -> the run folder (a relative symlink, replaced atomically)."""
    link = audit_dir / LATEST
    tmp = audit_dir / f".latest-{os.getpid()}"
    if tmp.is_symlink() or tmp.exists():
        tmp.unlink()
    tmp.symlink_to(run_dir.name, target_is_directory=True)
    os.replace(tmp, link)
    return link


def llm_report_markdown(doc: FindingsDoc, llm: LLMReportOutcome, trends: dict[str, str] | None,
                        order: Order = DEFAULT_ORDER) -> str:
    """report.md after the report graph: its verified text (plus what changed), or the deterministic
    report with a banner saying why the draft was not delivered."""
    if llm.outcome == "verified" and llm.final_report:
        changes = render_changes_markdown(doc, trends) if trends else ""
        return llm.final_report.rstrip() + "\n" + changes
    reason = llm.reason or "the report graph did not finish"
    banner = (f"Unverified LLM draft not delivered: {redact(reason)[:600]} This is the deterministic report, "
              "complete and correct by construction.")
    return render_markdown(doc, banner=banner, trends=trends, order=order)


@dataclass
class RunFolder:
    """One run's folder; every file in it is written through this class (its reports in ``order``)."""

    path: Path
    order: Order = DEFAULT_ORDER

    @property
    def findings_path(self) -> Path:
        return self.path / FINDINGS

    @property
    def report_path(self) -> Path:
        return self.path / REPORT

    @property
    def unverified_path(self) -> Path:
        return self.path / UNVERIFIED

    @property
    def audit_path(self) -> Path:
        return self.path / AUDIT

    def check(self) -> None:
        """Before a scan: the folder can be created and written (ConfigError saying why not)."""
        check_out_dir(self.path)

    def write_findings(self, doc: FindingsDoc) -> Path:
        """findings.json; if it cannot be written here, a rescue copy is written and OutputError says where."""
        try:
            self.path.mkdir(parents=True, exist_ok=True)
            return write_atomic(self.findings_path, doc.to_json())
        except OSError as exc:
            raise rescue_findings(doc, self.findings_path, exc) from None

    def write_report(self, doc: FindingsDoc, trends: dict[str, str] | None,
                     llm: LLMReportOutcome | None = None) -> Path:
        """report.md: deterministic, or what the report graph produced (and its unverified draft)."""
        if llm is None:
            return write_atomic(self.report_path, render_markdown(doc, trends=trends, order=self.order))
        if llm.outcome != "verified" and llm.draft:
            write_atomic(self.unverified_path, llm.draft)
        return write_atomic(self.report_path, llm_report_markdown(doc, llm, trends, self.order))

    def write_html(self, doc: FindingsDoc, trends: dict[str, str] | None, audit: str | None) -> Path:
        from watchdog.report.html import render_html

        return write_atomic(self.path / HTML, render_html(doc, trends=trends, audit=audit, order=self.order))

    def write_audit(self, *, run_id: str | None, audit: str | None, status: str, review_required: bool,
                    summary: dict[str, Any], trends: dict[str, str] | None,
                    llm: LLMReportOutcome | None) -> Path:
        meta = {"run_id": run_id, "audit": audit, "status": status, "review_required": review_required,
                "summary": summary, "trends": trends, "llm": llm.record() if llm is not None else None}
        text = redact(json.dumps(meta, indent=2, ensure_ascii=False, default=str)) + "\n"
        return write_atomic(self.audit_path, text)

    def read_audit(self) -> dict[str, Any] | None:
        return json.loads(self.audit_path.read_text(encoding="utf-8")) if self.audit_path.is_file() else None

    def point_latest(self) -> Path:
        return point_latest(self.path.parent, self.path)
