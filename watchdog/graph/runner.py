"""Run the LLM report graph on findings and return what it produced: an outcome, never a file.

The outcome carries the verified report text (or, when the loop ended without passing or the
endpoint was down, the reason and the last draft) and every round, token count and verdict; the
run's filing (:mod:`watchdog.run.filing`) turns it into report.md, report.unverified.md and
audit.json. Runs are durable: the checkpointer (SQLite, in the state directory) keys them by run id,
and :func:`resume_llm_report` continues a run that was killed from its last checkpoint.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from watchdog.errors import ReportInterrupted, WatchdogError
from watchdog.findings import FindingsDoc
from watchdog.graph.checkpoints import CHECKPOINT_FILE, checkpointer
from watchdog.graph.graph import build_report_graph
from watchdog.graph.models import Models, build_models, placeholder_models
from watchdog.graph.tools import query_tool
from watchdog.redact import redact
from watchdog.sandbox import Sandbox
from watchdog.settings import LLMConfig, Settings
from watchdog.verify import verify_fn


@dataclass
class LLMReportOutcome:
    run_id: str
    outcome: str                                  # verified | fallback
    out_dir: Path                                 # the run folder the graph was started for
    findings: FindingsDoc
    trends: dict[str, str] | None = None
    final_report: str | None = None               # the verified Markdown (outcome "verified")
    draft: str | None = None                      # the last draft (kept as report.unverified.md on fallback)
    reason: str | None = None
    models: dict[str, str] = field(default_factory=dict)
    tokens: dict[str, dict[str, int]] = field(default_factory=dict)
    fix_rounds: int = 0
    replans: int = 0
    verification: Any = None
    review: Any = None
    rounds: list[Any] = field(default_factory=list)
    issues: list[str] = field(default_factory=list)   # what the last draft still got wrong (all of them)

    @property
    def report_path(self) -> Path:
        return self.out_dir / "report.md"

    @property
    def unverified_path(self) -> Path | None:
        return self.out_dir / "report.unverified.md" if self.outcome != "verified" and self.draft else None

    @property
    def audit_path(self) -> Path:
        return self.out_dir / "audit.json"

    def record(self) -> dict[str, Any]:
        """The ``llm`` section of audit.json."""
        return {"outcome": self.outcome, "fallback_reason": self.reason, "issues": self.issues, "models": self.models,
                "tokens": self.tokens, "fix_rounds": self.fix_rounds, "replans": self.replans,
                "verification": self.verification, "review": self.review, "rounds": self.rounds}


    def banner(self, most_chars: int = 600) -> str:
        """Why the draft was not delivered, for the top of the deterministic report: the reason in one sentence,
        how many issues the last draft had, and the first few whole (the full list is in audit.json)."""
        reason = (self.reason or "the report graph did not finish").rstrip(". ")
        text = f"Unverified LLM draft not delivered: {reason}."
        shown = [statement(i) for i in self.issues]
        if shown:
            first: list[str] = []
            for issue in shown:
                if first and len(text) + sum(len(x) + 1 for x in [*first, issue]) > most_chars:
                    break
                first.append(issue)
            more = f"; the first {len(first)}:" if len(first) < len(shown) else ":"
            text += f" The last draft had {len(shown)} issue(s){more} " + " ".join(first)
            if len(first) < len(shown):
                text += " (all of them are in audit.json)"
        return text + " This is the deterministic report, complete and correct by construction."


_TOLD = re.compile(r"(?:[:;,]\s*|\.\s+|\s+[-–—]\s+)(?:please\s+)?(?:write|give|use|remove|say|leave|keep|make|"
                   r"correct|rewrite|answer|copy|mention)\s.*$", re.I | re.S)


def statement(issue: str) -> str:
    """An issue as a statement of what is wrong, without what the model was told to do about it."""
    text = _TOLD.sub("", issue.strip()).rstrip(" .") + "."
    return text if len(text) > 1 else issue


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


def model_names(settings: Settings, models: Models, base_url: str | None) -> dict[str, str]:
    """What ran, per role: for ``llm.local`` the GGUF file's name and size (the model name sent to a local server
    means nothing), else the model name each role was called with."""
    local = settings.llm.local
    if local is None or base_url is None:
        return models.names()
    from watchdog.graph.local import model_path

    path = model_path(local, settings.root)
    size = path.stat().st_size if path.is_file() else 0
    return {role: f"{path.name} ({size:,} bytes, llm.local)" for role in models.names()}


def run_config(run_id: str, config: LLMConfig) -> dict[str, Any]:
    return {"configurable": {"thread_id": run_id}, "recursion_limit": recursion_limit(config)}


def run_llm_report(doc: FindingsDoc, out_dir: Path, *, settings: Settings, run_id: str,
                     models: Models | None = None, sandbox: Sandbox | None = None,
                     trends: dict[str, str] | None = None) -> LLMReportOutcome:
    """Run the graph on ``doc`` (whose findings.json is already filed in ``out_dir``); write nothing."""
    with endpoint(settings, models) as base_url, checkpointer(settings.state_path()) as saver:
        graph, models = _graph(settings, models, sandbox, saver, base_url)
        initial = {"run_id": run_id, "findings": doc.to_json_dict(), "out_dir": str(out_dir),
                   "trends": trends}
        try:
            state = graph.invoke(initial, run_config(run_id, settings.llm), durability="sync")
        except ReportInterrupted:
            raise
        except KeyboardInterrupt as exc:  # Ctrl-C or SIGTERM: the checkpoint is there to resume from
            raise ReportInterrupted(run_id, *exc.args[:1]) from exc
    return outcome_of(state, model_names(settings, models, base_url))


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
            return outcome_of(snapshot.values, models.names() if models else settings.llm.models.model_dump())
        with endpoint(settings, models) as base_url:
            graph, models = _graph(settings, models, sandbox, saver, base_url)
            try:
                state = graph.invoke(None, config, durability="sync")
            except ReportInterrupted:
                raise
            except KeyboardInterrupt as exc:
                raise ReportInterrupted(run_id, *exc.args[:1]) from exc
            names = model_names(settings, models, base_url)
    return outcome_of(state, names)


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


def outcome_of(state: dict[str, Any], model_names: dict[str, str]) -> LLMReportOutcome:
    """The graph's final state as an outcome (nothing is written here)."""
    outcome = state.get("outcome") or "fallback"
    reason = state.get("fallback_reason")
    if outcome == "verified" and state.get("draft_finish") == "length":  # never deliver a cut draft as verified
        outcome, reason = "fallback", "the draft was cut off by the output token cap (llm.max_output_tokens.specialist)"
    if outcome != "verified" or not state.get("final_report"):
        outcome, reason = "fallback", reason or "the report graph did not finish"
    return LLMReportOutcome(
        run_id=str(state.get("run_id")), outcome=outcome, out_dir=Path(state["out_dir"]),
        findings=FindingsDoc.validate(state["findings"]), trends=state.get("trends"),
        final_report=state.get("final_report") if outcome == "verified" else None, draft=state.get("draft"),
        reason=redact(reason) if reason else None, models=model_names, tokens=state.get("tokens", {}),
        fix_rounds=state.get("fix_round", 0), replans=state.get("replans", 0),
        verification=state.get("verification"), review=state.get("review"), rounds=state.get("trail", []),
        issues=[redact(i) for i in state.get("issues") or []] if outcome != "verified" else [])
