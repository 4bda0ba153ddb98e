"""Filing: the one writer of a run folder (every file of a run is written by :class:`RunFolder`).

A run folder holds ``findings.json`` (written first, before anything that can fail later),
``report.md`` (the verified LLM report, or the deterministic one, with a banner when an LLM draft was
not delivered), ``report.unverified.md`` (the last unverified draft, when there is one),
``report.html`` and ``audit.json`` (for audits, and for scans that ran the LLM), and ``latest`` beside
an audit's folders. ``audit.json`` has one schema whatever ran::

    {"run_id", "audit" (null for a scan), "status" (passed | warned | failed | error), "review_required",
     "summary", "trends",
     "llm": null | {"outcome", "fallback_reason", "models", "tokens", "fix_rounds", "replans",
                    "verification", "review", "rounds"}}

(Earlier versions wrote ``"status": "ok"`` for a scan that passed; :meth:`RunFolder.read_audit` reads it
as ``"passed"``.) Two calls file a run: :meth:`RunFolder.file_findings` as soon as the findings are
known, :meth:`RunFolder.file_run` with the whole outcome; ``watchdog resume`` files through the same
:meth:`RunFolder.file_run`.

Every file is written to a temporary name and renamed, so a reader never sees half a file and a
failed write leaves no ``*.tmp`` behind.
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from watchdog.exit_codes import read_status, run_status
from watchdog.findings import FindingsDoc
from watchdog.redact import redact
from watchdog.report.view import DEFAULT_ORDER, Order
from watchdog.run.safe_write import check_out_dir, rescue_findings

if TYPE_CHECKING:
    from watchdog.run.compute import RunOutcome

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

    def file_findings(self, outcome: RunOutcome) -> Path:
        """findings.json, then the report computed so far (the deterministic one: there even if a later stage
        dies). If findings.json cannot be written here, a rescue copy is written and OutputError says where."""
        self._write_findings(outcome.doc)
        write_atomic(self.report_path, outcome.report)
        return self.findings_path

    def file_run(self, outcome: RunOutcome, *, audit: str | None = None, review_required: bool = False) -> Path:
        """The rest of a run once it is computed: report.md (and report.unverified.md) from the LLM outcome;
        for an audit report.html, audit.json and ``latest``; for a scan audit.json when the LLM ran.
        Returns the report's path."""
        if outcome.llm is not None:  # the report the LLM stage led to, and its unverified draft
            if outcome.llm.outcome != "verified" and outcome.llm.draft:
                write_atomic(self.unverified_path, outcome.llm.draft)
            write_atomic(self.report_path, outcome.report)
        if audit is not None:
            from watchdog.report.html import render_html

            write_atomic(self.path / HTML, render_html(outcome.doc, trends=outcome.trends, audit=audit,
                                                      order=self.order))
        if audit is not None or outcome.llm is not None:
            self._write_audit(outcome, audit=audit, review_required=review_required)
        if audit is not None:
            point_latest(self.path.parent, self.path)
        return self.report_path

    def copy_into(self, audit_dir: Path) -> RunFolder:
        """A ``file`` channel's copy: this run folder under ``audit_dir`` (unless it is there already), and
        ``latest`` there pointing at it."""
        destination = RunFolder(audit_dir / self.path.name, self.order)
        if destination.path.resolve() != self.path.resolve():
            import shutil

            shutil.copytree(self.path, destination.path, dirs_exist_ok=True)
        point_latest(audit_dir, destination.path)
        return destination

    def read_audit(self) -> dict[str, Any] | None:
        """audit.json as today's schema says (a status word of an earlier version read as today's)."""
        if not self.audit_path.is_file():
            return None
        meta = json.loads(self.audit_path.read_text(encoding="utf-8"))
        meta["status"] = read_status(meta.get("status"))
        return meta

    def _write_findings(self, doc: FindingsDoc) -> Path:
        try:
            self.path.mkdir(parents=True, exist_ok=True)
            return write_atomic(self.findings_path, doc.to_json())
        except OSError as exc:
            raise rescue_findings(doc, self.findings_path, exc) from None

    def _write_audit(self, outcome: RunOutcome, *, audit: str | None, review_required: bool) -> Path:
        meta = {"run_id": outcome.run_id, "audit": audit, "status": run_status(outcome.exit_code),
                "review_required": review_required, "summary": outcome.doc.summary.to_json_dict(),
                "trends": outcome.trends, "llm": outcome.llm.record() if outcome.llm is not None else None}
        text = redact(json.dumps(meta, indent=2, ensure_ascii=False, default=str)) + "\n"
        return write_atomic(self.audit_path, text)
