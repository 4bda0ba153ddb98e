"""Run a configured audit: the one code path shared by ``watchdog run``, the scheduler and the Python API.

1. retry the outbox; 2. record the run ``running`` (a scheduled run claims its tick in the same
transaction: a tick already claimed is not run again); 3. compute the run (:func:`compute_run`: scan,
trend marks against the previous run, the LLM report when the audit asks for it), filing findings.json and
report.md as soon as the findings are known; 4. file the rest into ``<reports>/<audit>/<run id>/``
(:meth:`RunFolder.file_run`: report.html, audit.json, ``latest``); 5. record the outcome;
6. deliver, or pause for review. A crash or a signal leaves the run ``interrupted``, never ``running``.

No alert is lost to a local fault: when filing fails (disk full, permissions) the findings are still
recorded in the history and delivered from memory (attached), with the filing error in the message.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from watchdog.delivery.base import RunPackage
from watchdog.delivery.outbox import deliver_package, flush_outbox
from watchdog.exit_codes import ExitCode, exit_code_of, run_status
from watchdog.history import DeliveryRecord, HistoryStore
from watchdog.history.marks import marks_of
from watchdog.history.series import past_findings
from watchdog.reconcile import counterpart
from watchdog.redact import redact
from watchdog.run.compute import RunOutcome, RunRequest, compute_run, new_run_id, resumed_outcome
from watchdog.run.export_failures import EXPORT_FOLDER, ExportRequest
from watchdog.run.filing import RunFolder
from watchdog.run.safe_write import OutputError
from watchdog.run.scan_run import reports_dir
from watchdog.sandbox import cancel as cancelling
from watchdog.scan.scanner import Progress
from watchdog.scan.selection import load_selected
from watchdog.settings import ExportFailures, Settings


@dataclass
class AuditRun:
    run_id: str
    audit: str
    status: str                     # the scan's outcome: passed | warned | failed | error
    run_dir: Path
    scan: RunOutcome | None = None
    trends: dict[str, str] = field(default_factory=dict)
    deliveries: list[dict[str, Any]] = field(default_factory=list)
    awaiting_review: bool = False
    #: why the run could not be filed (it was recorded and delivered from memory)
    filing_error: str | None = None

    @property
    def exit_code(self) -> ExitCode:
        """As ``scan``: the findings decide, whether or not delivery waits for review."""
        return exit_code_of(self.status)


def execute_audit(settings: Settings, name: str, *, store: HistoryStore | None = None, models: Any = None,
                  on_progress: Progress | None = None, run_id: str | None = None, tick: str | None = None,
                  claimed_by: str | None = None, token: int | None = None, full: bool = False) -> AuditRun:
    """Run the audit ``name``. ``tick`` (a scheduled time, UTC ISO) claims that tick first: raises
    :class:`~watchdog.errors.TickTaken` when another run already holds it. Incremental tables judge the rows
    past their marks in the history (``full``: every row, this once)."""
    audit = settings.audit(name)
    own_store = store is None
    store = store or HistoryStore(settings.history_url(), wait_s=settings.history.wait_s)
    try:
        flush_outbox(settings, store)
        run_id = run_id or new_run_id()
        run_dir = reports_dir(settings, audit.deliver) / name / run_id
        store.start_run(run_id, name, out_dir=str(run_dir), tick=tick, claimed_by=claimed_by, token=token)
        try:
            previous = store.previous_run(name, run_id)
            filing = TolerantFiling(RunFolder(run_dir))
            with counterpart.using(settings.database):  # reconcile checks' with: names this configuration's
                request = RunRequest(
                    database=settings.database(audit.database),
                    suites=load_selected([settings.path(p) for p in audit.checks], audit.selection, audit=name,
                                         allow_empty=audit.allow_empty or audit.monitor is not None),
                    run_id=run_id, sample=audit.sample, on_progress=on_progress, diagnose=audit.diagnose,
                    llm=audit.llm, settings=settings, models=models, monitor=audit.monitor,
                    previous_findings=store.findings_of(previous.id) if previous else [],
                    history=past_findings(store, name, run_id), out_dir=run_dir,
                    marks={} if full else marks_of(store, name),
                    export=_export(audit.export_failures, run_dir))
                outcome = compute_run(request, record=filing.findings)
            if cancelling.stopping():  # abandoned (the daemon stops or lost the lead): never delivered
                raise InterruptedError("cancelled: the daemon stopped or lost the lead during the run")
            status = run_status(outcome.exit_code)
            filing.run(outcome, name, audit.review)
            filing_error = filing.error
            errors = "; ".join(e for e in (outcome.doc.error, filing_error) if e) or None
            store.finish_run(run_id, status="awaiting_review" if audit.review and not filing_error else status,
                             summary=outcome.doc.summary.to_json_dict(), out_dir=str(run_dir),
                             findings=[f.to_json_dict() for f in outcome.doc.findings],
                             trends=outcome.trends, verification=_llm_record(outcome.llm), error=errors)
        except BaseException as exc:  # never leave a run `running`
            interrupted = isinstance(exc, (KeyboardInterrupt, SystemExit, InterruptedError))
            store.finish_run(run_id, status="interrupted" if interrupted else "error", error=redact(exc))
            raise
        run = AuditRun(run_id, name, status, run_dir, outcome, outcome.trends or {}, filing_error=filing_error)
        if filing_error:  # nothing on disk to resume from: deliver what is in memory now, saying filing failed
            package = RunPackage(run_id=run_id, audit=name, status=status, run_dir=run_dir,
                                 summary=outcome.doc.summary.to_json_dict(), trends=outcome.trends or {},
                                 findings_json=outcome.doc.to_json(), filing_error=filing_error)
            records = deliver_package(package, audit.deliver, settings, store)
            run.deliveries = [_record_dict(r) for r in records]
            return run
        run.deliveries = start_delivery(settings, store, run_id, name, run_dir, review=audit.review)
        run.awaiting_review = audit.review
        return run
    finally:
        if own_store:
            store.close()


class TolerantFiling:
    """An audit's filing: no alert is lost to a local fault. The first write that fails (disk full,
    permissions) is kept as ``error`` and the rest of the filing is skipped; the run goes on from memory
    (history, deliveries). Every file is still written by :class:`RunFolder`."""

    def __init__(self, folder: RunFolder):
        self.folder = folder
        self.error: str | None = None

    def findings(self, outcome: RunOutcome) -> Path | None:
        return self._attempt(lambda: self.folder.file_findings(outcome))

    def run(self, outcome: RunOutcome, audit: str | None, review: bool) -> Path | None:
        return self._attempt(lambda: self.folder.file_run(outcome, audit=audit, review_required=review))

    def _attempt(self, write: Callable[[], Path]) -> Path | None:
        if self.error is not None:
            return None
        try:
            return write()
        except OSError as exc:
            self.error = f"cannot file the run into {self.folder.path}: {exc.strerror or exc}"
        except OutputError as exc:  # findings.json failed; RunFolder already left a rescue copy
            self.error = f"cannot file the run into {self.folder.path}: {exc}"
        return None


@dataclass
class ResumedRun:
    """What ``watchdog resume`` did: the LLM report finished, and the audit's deliveries started by it."""

    llm: Any
    deliveries: list[dict[str, Any]] = field(default_factory=list)
    awaiting_review: bool = False


def resume_run(settings: Settings, run_id: str, *, sandbox: Any = None) -> ResumedRun:
    """``watchdog resume``: finish the LLM report of a run from its checkpoint and file it through the same
    :meth:`RunFolder.file_run` as a run that was not interrupted. A run of an audit is finished as
    :func:`execute_audit` would have: its history row, report.html, audit.json with the audit's keys, and
    ``latest``; then its deliveries start, through the outbox and the review gate, exactly once (a run whose
    delivery step already ran, or waits for review, is not sent again)."""
    from watchdog.graph.runner import resume_llm_report

    result = resume_llm_report(run_id, settings=settings, sandbox=sandbox)
    outcome = resumed_outcome(result)
    store = HistoryStore(settings.history_url())
    try:
        record = store.get_run(run_id)
        audit = record.audit if record is not None else None
        review = bool(audit in settings.audits and settings.audit(audit).review) if audit else False
        RunFolder(result.out_dir).file_run(outcome, audit=audit, review_required=review)
        if record is None:  # a scan's run: filed, nothing more to record
            return ResumedRun(result)
        doc, status = outcome.doc, run_status(outcome.exit_code)
        if record.status in ("running", "interrupted", "error"):
            store.finish_run(run_id, status="awaiting_review" if review else status, summary=doc.summary.to_json_dict(),
                             out_dir=str(result.out_dir), findings=[f.to_json_dict() for f in doc.findings],
                             trends=result.trends, verification=_llm_record(result), error=doc.error)
        if record.audit in settings.audits:  # deliver as the run would have: once (a delivered run is not re-sent)
            flush_outbox(settings, store)
            sent = start_delivery(settings, store, run_id, record.audit, Path(result.out_dir), review=review)
            now = store.get_run(run_id)
            return ResumedRun(result, sent, awaiting_review=now is not None and now.status == "awaiting_review")
        return ResumedRun(result)
    finally:
        store.close()


def _llm_record(llm: Any) -> dict[str, Any] | None:
    """The LLM outcome as the history keeps it."""
    if llm is None:
        return None
    return {"outcome": llm.outcome, "reason": llm.reason, "fix_rounds": llm.fix_rounds, "replans": llm.replans,
            "tokens": llm.tokens}


# ---- delivery, through the review gate


def _delivery_graph(settings: Settings, store: HistoryStore, saver: Any) -> Any:
    from watchdog.run.review_gate import DeliveryState, build_delivery_graph

    def send_run(state: DeliveryState) -> list[dict[str, Any]]:
        package = RunPackage.load(Path(state["run_dir"]))
        records = deliver_package(package, settings.audit(state["audit"]).deliver, settings, store)
        decision = state.get("decision") or {}
        if state.get("review"):
            store.set_status(state["run_id"], package.status, review={"decision": "approved", "by": decision.get("by")})
        return [_record_dict(r) for r in records]

    def reject(state: DeliveryState) -> None:
        package = RunPackage.load(Path(state["run_dir"]))
        decision = state.get("decision") or {}
        store.set_status(state["run_id"], package.status,
                         review={"decision": "rejected", "reason": decision.get("reason"), "by": decision.get("by")})

    return build_delivery_graph(send_run, reject, saver)


def start_delivery(settings: Settings, store: HistoryStore, run_id: str, audit: str, run_dir: Path, *,
                   review: bool) -> list[dict[str, Any]]:
    from watchdog.graph.checkpoints import checkpointer
    from watchdog.run.review_gate import thread_config

    with checkpointer(settings.state_path()) as saver:
        graph = _delivery_graph(settings, store, saver)
        started = graph.get_state(thread_config(run_id))
        if started.next or "delivered" in (started.values or {}):  # waiting for review, or already delivered:
            return []                                                # never started twice (exactly once)
        state = graph.invoke({"run_id": run_id, "audit": audit, "run_dir": str(run_dir), "review": review},
                             thread_config(run_id), durability="sync")
    return state.get("delivered") or []



def decide_review(settings: Settings, run_id: str, *, approved: bool, reason: str | None = None,
                  store: HistoryStore | None = None) -> list[dict[str, Any]]:
    """Approve (deliver) or reject (record why) a run awaiting review, from any process."""
    from watchdog.errors import WatchdogError
    from watchdog.graph.checkpoints import checkpointer
    from watchdog.run.review_gate import resume_command, thread_config

    own_store = store is None
    store = store or HistoryStore(settings.history_url())
    try:
        run = store.get_run(run_id)
        if run is None or run.status != "awaiting_review":
            state = "unknown" if run is None else run.status
            raise WatchdogError(f"run {run_id!r} is not awaiting review (it is {state})")
        with checkpointer(settings.state_path()) as saver:
            graph = _delivery_graph(settings, store, saver)
            state = graph.invoke(resume_command(approved, reason), thread_config(run_id), durability="sync")
        return state.get("delivered") or []
    finally:
        if own_store:
            store.close()


def _record_dict(record: DeliveryRecord) -> dict[str, Any]:
    done = {"channel": record.channel, "target": record.target, "status": record.status,
            "attempts": record.attempts, "last_error": record.last_error}
    if record.spec.get("group") is not None:  # group_by: owner (the target's text is for people, not parsing)
        done["group"] = record.spec["group"]
    return done


def _export(option: bool | ExportFailures, run_dir: Path) -> ExportRequest | None:
    """An audit's ``export_failures:`` as a request writing into the run folder's ``failures/``."""
    if option is False:
        return None
    chosen = option if isinstance(option, ExportFailures) else ExportFailures()
    return ExportRequest(run_dir / EXPORT_FOLDER, chosen.format, chosen.limit)
