"""``suggest --llm``: the specialist model proposes semantic checks from names, types and the profile.

The model sees aggregates only (the profile: counts, min/max, shapes, top values of low-cardinality
columns), never table rows. Its answer is structured output; each proposal becomes a candidate that
``suggest_suite`` runs like any other: failing ones are written commented out with their measured
failure, ones that do not validate or cannot run are dropped with a note.
"""

from __future__ import annotations

import json
import tempfile
from pathlib import Path
from typing import Any

from pydantic import BaseModel, Field

from watchdog.profile.rules import Candidate
from watchdog.profile.stats import TableProfile
from watchdog.profile.writer import render_suite
from watchdog.scan.suites import SuiteError, load_suite
from watchdog.settings import LLMConfig

MAX_PROPOSALS = 40

SYSTEM = """You are a data-quality engineer. From a database profile (aggregates only), propose checks that
encode the meaning of the columns: plausible ranges (ages, prices, percentages), allowed values, formats.
Check kinds and the fields they use (leave the other fields null):
- not_null: column
- unique: column
- accepted_values: column, values (strings)
- range: column, min and/or max (numbers)
- pattern: column, regex (found in the value; use [0-9] not \\d, anchor with ^ and $)
- foreign_key: column, references ("table.column")
- freshness: column, max_age (like "30d", "6h")
Propose at most 20 checks, only on the tables and columns given. Give a one-sentence reason for each."""


class Proposal(BaseModel):
    table: str
    kind: str
    column: str
    values: list[str] | None = Field(description="accepted_values only")
    min: float | None
    max: float | None
    regex: str | None
    references: str | None
    max_age: str | None
    reason: str


class Proposals(BaseModel):
    proposals: list[Proposal]


def profile_prompt(profiles: list[TableProfile]) -> str:
    tables = []
    for p in profiles:
        columns = []
        for c in p.columns:
            columns.append({"name": c.name, "type": c.type, "null_rate": c.null_rate, "distinct": c.distinct,
                            "min": _short(c.min), "max": _short(c.max), "shapes": c.shapes,
                            "top_values": [[_short(v), k] for v, k in (c.top_values or [])[:10]]})
        tables.append({"table": p.name, "rows": p.rows, "primary_key": p.primary_key, "columns": columns})
    return json.dumps({"tables": tables}, default=str)


def _short(value: Any) -> Any:
    return value[:40] if isinstance(value, str) else (value if isinstance(value, (int, float)) else
                                                      None if value is None else str(value)[:40])


def to_candidates(proposals: list[Proposal], profiles: list[TableProfile]) -> tuple[list[Candidate], list[str]]:
    """Proposals that form a valid check on a known table; notes for the ones dropped."""
    tables = {p.name for p in profiles}
    out: list[Candidate] = []
    notes: list[str] = []
    for prop in proposals[:MAX_PROPOSALS]:
        label = f"LLM proposal {prop.table}.{prop.column}.{prop.kind}"
        if prop.table not in tables:
            notes.append(f"dropped {label}: no table {prop.table!r} was profiled")
            continue
        options: dict[str, Any] = {"column": prop.column}
        for key in ("values", "min", "max", "regex", "references", "max_age"):
            value = getattr(prop, key)
            if value is not None:
                options[key] = int(value) if isinstance(value, float) and value.is_integer() else value
        candidate = Candidate(prop.table, prop.kind, options, f"LLM: {' '.join(prop.reason.split())[:200]}",
                              origin="llm")
        problem = _invalid(candidate)
        if problem:
            notes.append(f"dropped {label}: {problem}")
            continue
        out.append(candidate)
    return out, notes


def _invalid(candidate: Candidate) -> str | None:
    with tempfile.TemporaryDirectory(prefix="wd-llm-") as folder:
        path = Path(folder) / "proposal.yaml"
        path.write_text(render_suite([candidate], header=[], verified=False), encoding="utf-8")
        try:
            load_suite(path)
        except SuiteError as exc:
            return "; ".join(p.message for p in exc.problems)[:300]
    return None


def propose(config: LLMConfig, profiles: list[TableProfile]) -> tuple[list[Candidate], list[str]]:
    """Ask the configured specialist model; raises LLMNotConfigured / LLMUnavailable like the report does."""
    from langchain_core.messages import HumanMessage, SystemMessage

    from watchdog.graph.models import build_models, invoke

    model = build_models(config).specialist.with_structured_output(Proposals)
    call = invoke(model, [SystemMessage(SYSTEM), HumanMessage(profile_prompt(profiles))],
                  attempts=config.max_attempts, max_wait_s=config.retry_wait_max_s)
    result = call.message
    parsed = result if isinstance(result, Proposals) else Proposals.model_validate(result)
    return to_candidates(parsed.proposals, profiles)
