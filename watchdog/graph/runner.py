"""Run the LLM report graph on written findings and deliver what it produced.

``report.md`` is the verified LLM report or, when the loop ends without passing (or the endpoint
is down), the deterministic report with a banner saying why; the last draft is then kept as
``report.unverified.md``. ``audit.json`` holds every round. Runs are durable: the checkpointer
(SQLite, in the state directory) keys them by run id, and :func:`resume_llm_report` continues a
run that was killed from its last checkpoint.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from watchdog.errors import WatchdogError
from watchdog.findings import FindingsDoc
from watchdog.graph.checkpoints import CHECKPOINT_FILE, checkpointer
from watchdog.graph.graph import build_report_graph
from watchdog.graph.models import Models, build_models, placeholder_models
from watchdog.graph.tools import query_tool
from watchdog.redact import redact
from watchdog.report import render_markdown
from watchdog.report.render import render_changes_markdown
from watchdog.sandbox import Sandbox
from watchdog.settings import LLMConfig, Settings
from watchdog.verify import verify_fn


@dataclass
class LLMReportOutcome:
    run_id: str
    outcome: str
    report_path: Path
    audit_path: Path
    unverified_path: Path | None = None
    reason: str | None = None
    tokens: dict[str, dict[str, int]] = field(default_factory=dict)
    fix_rounds: int = 0
    replans: int = 0


def recursion_limit(config: LLMConfig) -> int:
    per_attempt = 2 * config.max_fix_rounds + 4
    return per_attempt * (config.max_replans + 1) + 6


@contextmanager
def endpoint(settings: Settings, models: Models | None) -> Iterator[str | None]:
    """The base URL to use: a llama.cpp server started for the run (``llm.local``, stopped afterwards) or None
    (the configured endpoint). Models given by the caller need none."""
    if models is not None or settings.llm.local is None:
        yield None
        return
    from watchdog.graph.local import local_server

    with local_server(settings.llm.local, settings.root) as base_url:
        yield base_url


def _graph(settings: Settings, models: Models | None, sandbox: Sandbox | None, saver: Any,
           base_url: str | None = None) -> tuple[Any, Models]:
    models = models or build_models(settings.llm, base_url)
    tools = [query_tool(sandbox, settings.llm.tool_max_rows)] if sandbox is not None else []
    return build_report_graph(models, verify_fn, saver, config=settings.llm, tools=tools), models


def run_config(run_id: str, config: LLMConfig) -> dict[str, Any]:
    return {"configurable": {"thread_id": run_id}, "recursion_limit": recursion_limit(config)}


def write_llm_report(doc: FindingsDoc, out_dir: Path, *, settings: Settings, run_id: str,
                     models: Models | None = None, sandbox: Sandbox | None = None,
                     trends: dict[str, str] | None = None) -> LLMReportOutcome:
    """Run the graph on ``doc`` (already on disk in ``out_dir``) and deliver its result there."""
    with endpoint(settings, models) as base_url, checkpointer(settings.state_path()) as saver:
        graph, models = _graph(settings, models, sandbox, saver, base_url)
        initial = {"run_id": run_id, "findings": doc.model_dump(mode="json"), "out_dir": str(out_dir),
                   "trends": trends}
        state = graph.invoke(initial, run_config(run_id, settings.llm), durability="sync")
    return deliver(state, models.names())


def resume_llm_report(run_id: str, *, settings: Settings, models: Models | None = None,
                      sandbox: Sandbox | None = None) -> LLMReportOutcome:
    """Continue the run ``run_id`` from its last checkpoint (no re-scan, no repeated finished steps)."""
    with checkpointer(settings.state_path()) as saver:
        # look the run up first: an unknown run is said so, whatever the endpoint configuration
        probe = build_report_graph(placeholder_models(), verify_fn, saver, config=settings.llm)
        config = run_config(run_id, settings.llm)
        snapshot = probe.get_state(config)
        if not snapshot.values:
            raise WatchdogError(f"no run {run_id!r} in {settings.state_path() / CHECKPOINT_FILE}")
        if not snapshot.next:
            return deliver(snapshot.values, models.names() if models else settings.llm.models.model_dump())
        with endpoint(settings, models) as base_url:
            graph, models = _graph(settings, models, sandbox, saver, base_url)
            state = graph.invoke(None, config, durability="sync")
    return deliver(state, models.names())


def trail_of(run_id: str, settings: Settings) -> list[dict[str, Any]]:
    """Every checkpoint of a run, oldest first: the step, the node that ran, and which keys changed."""
    with checkpointer(settings.state_path()) as saver:
        graph = build_report_graph(placeholder_models(), verify_fn, saver, config=settings.llm)
        history = list(graph.get_state_history(run_config(run_id, settings.llm)))
    if not history:
        raise WatchdogError(f"no run {run_id!r} in {settings.state_path() / CHECKPOINT_FILE}")
    out: list[dict[str, Any]] = []
    previous: dict[str, Any] = {}
    for snap in reversed(history):
        values = snap.values or {}
        changed = {k: _brief(v) for k, v in values.items() if k not in ("trail", "findings") and previous.get(k) != v}
        new_trail = values.get("trail", [])[len(previous.get("trail", [])):]
        out.append({"step": snap.metadata.get("step") if snap.metadata else None,
                    "ran": [entry.get("step") for entry in new_trail], "next": list(snap.next),
                    "created_at": snap.created_at, "changed": changed})
        previous = values
    return out


def _brief(value: Any) -> Any:
    if isinstance(value, str) and len(value) > 80:
        return value[:77] + "..."
    if isinstance(value, (dict, list)):
        text = json.dumps(value, default=str)
        return text if len(text) <= 120 else text[:117] + "..."
    return value


def deliver(state: dict[str, Any], model_names: dict[str, str]) -> LLMReportOutcome:
    """Write report.md (the verified LLM report, or the deterministic one with a banner), report.unverified.md
    and audit.json."""
    out_dir = Path(state["out_dir"])
    doc = FindingsDoc.model_validate(state["findings"])
    report_path = out_dir / "report.md"
    unverified_path: Path | None = None
    outcome = state.get("outcome") or "fallback"
    reason = state.get("fallback_reason")
    trends = state.get("trends")
    if outcome == "verified" and state.get("draft_finish") == "length":  # never deliver a cut draft as verified
        outcome, reason = "fallback", "the draft was cut off by the output token cap (llm.max_output_tokens.specialist)"
    if outcome == "verified" and state.get("final_report"):
        changes = render_changes_markdown(doc, trends) if trends else ""
        report_path.write_text(state["final_report"].rstrip() + "\n" + changes, encoding="utf-8")
    else:
        reason = reason or "the report graph did not finish"
        banner = (f"Unverified LLM draft not delivered: {redact(reason)[:600]} This is the deterministic report, "
                  "complete and correct by construction.")
        report_path.write_text(render_markdown(doc, banner=banner, trends=trends), encoding="utf-8")
        if state.get("draft"):
            unverified_path = out_dir / "report.unverified.md"
            unverified_path.write_text(state["draft"], encoding="utf-8")
    audit = {
        "run_id": state.get("run_id"),
        "outcome": outcome,
        "fallback_reason": reason,
        "models": model_names,
        "tokens": state.get("tokens", {}),
        "fix_rounds": state.get("fix_round", 0),
        "replans": state.get("replans", 0),
        "verification": state.get("verification"),
        "review": state.get("review"),
        "rounds": state.get("trail", []),
    }
    audit_path = out_dir / "audit.json"
    audit_path.write_text(redact(json.dumps(audit, indent=2, ensure_ascii=False, default=str)) + "\n", encoding="utf-8")
    return LLMReportOutcome(run_id=str(state.get("run_id")), outcome=outcome, report_path=report_path,
                            audit_path=audit_path, unverified_path=unverified_path, reason=reason,
                            tokens=state.get("tokens", {}), fix_rounds=state.get("fix_round", 0),
                            replans=state.get("replans", 0))
