"""``suggest --llm``: the specialist model proposes semantic checks from names, types and the profile.

The model sees aggregates (the profile: counts, min/max, shapes, top values of low-cardinality
columns), never whole tables; it may ask for a few sample values of a column through the
``sample_values`` tool, answered through the same read-only sandbox (at most ``SAMPLE_LIMIT`` values
per call, ``SAMPLE_BUDGET`` calls). Its answer is structured output; each proposal becomes a candidate that
``suggest_suite`` runs like any other: failing ones are written commented out with their measured
failure, ones that do not validate or cannot run are dropped with a note.
"""

from __future__ import annotations

import json
import tempfile
from pathlib import Path
from typing import Any

from pydantic import BaseModel, Field, ValidationError
from sqlglot import exp

from watchdog.errors import SandboxError
from watchdog.findings import jsonable
from watchdog.profile.rules import Candidate
from watchdog.profile.stats import TableProfile
from watchdog.profile.writer import render_suite
from watchdog.redact import redact
from watchdog.report.escape import plain_text
from watchdog.sandbox import Sandbox
from watchdog.scan import sqlbuild
from watchdog.scan.suites import SuiteError, load_suite
from watchdog.settings import LLMConfig

MAX_PROPOSALS = 40
#: most values one sample_values call returns, and most calls per proposal request
SAMPLE_LIMIT = 10
SAMPLE_BUDGET = 8

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

TOOL_HINT = """
Before answering you may call sample_values(table, column, n) to see up to 10 non-null values of a column
(a few calls at most). Answer by calling Proposals."""


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


def sample_tool(box: Sandbox, profiles: list[TableProfile]) -> Any:
    """``sample_values(table, column, n<=10)``: a few non-null values of one profiled column, via the sandbox."""
    from langchain_core.tools import StructuredTool

    known = {p.name: {c.name for c in p.columns} for p in profiles}

    def sample_values(table: str, column: str, n: int = 5) -> str:
        """Up to n (at most 10) non-null values of one column of a profiled table, read through the read-only
        sandbox. Use it to see what a column's values look like before proposing a format or range."""
        if table not in known:
            return f"error: no profiled table {table!r}"
        if column not in known[table]:
            return f"error: table {table!r} has no column {column!r}"
        limit = max(1, min(int(n), SAMPLE_LIMIT))
        ref = sqlbuild.column(column)
        query = (exp.select(ref.copy()).from_(sqlbuild.table(table))
                 .where(exp.Not(this=exp.Is(this=ref.copy(), expression=exp.Null()))).limit(limit))
        try:
            result = box.query(query.sql(dialect=box.dialect), max_rows=limit)
        except SandboxError as exc:
            return f"{exc.prefix}: {redact(exc)}"
        values = [plain_text(str(jsonable(row[0])), 100) for row in result.rows[:limit]]
        return json.dumps({"table": table, "column": column, "values": values}, ensure_ascii=False)

    return StructuredTool.from_function(sample_values, name="sample_values")


def propose(config: LLMConfig, profiles: list[TableProfile],
            box: Sandbox | None = None) -> tuple[list[Candidate], list[str]]:
    """Ask the configured specialist model; raises LLMNotConfigured / LLMUnavailable like the report does.

    With ``box``, the model may first call ``sample_values`` (answered through ``box``, up to
    ``SAMPLE_BUDGET`` calls) and answers by calling the ``Proposals`` tool; a model that answers in
    plain text, or is out of calls, is then asked once more for structured output.
    """
    from langchain_core.messages import BaseMessage, HumanMessage, SystemMessage, ToolMessage

    from watchdog.graph.models import build_models, invoke

    specialist = build_models(config).specialist

    def call(runnable: Any, messages: list[BaseMessage]) -> Any:
        return invoke(runnable, messages, attempts=config.max_attempts, max_wait_s=config.retry_wait_max_s).message

    messages: list[BaseMessage] = [SystemMessage(SYSTEM + (TOOL_HINT if box is not None else "")),
                                   HumanMessage(profile_prompt(profiles))]
    notes: list[str] = []
    if box is not None:
        tool = sample_tool(box, profiles)
        bound = specialist.bind_tools([tool, Proposals])
        used = 0
        while used < SAMPLE_BUDGET:
            reply = call(bound, messages)
            calls = list(getattr(reply, "tool_calls", None) or [])
            final = next((c for c in calls if c["name"] == "Proposals"), None)
            if final is not None:
                looked = [f"the model looked at sample values {used} time(s)"] if used else []
                try:
                    return _with_notes(to_candidates(Proposals.model_validate(final["args"]).proposals, profiles),
                                       looked)
                except ValidationError as exc:
                    return [], [f"dropped the model's proposals: they do not fit the schema "
                                f"({exc.error_count()} errors)"]
            messages.append(reply)
            if not calls:
                break
            for c in calls:
                answer = (str(tool.invoke(c["args"])) if c["name"] == "sample_values" and used < SAMPLE_BUDGET
                          else f"error: no tool call left for {c['name']!r}; answer with Proposals")
                used += 1
                messages.append(ToolMessage(content=answer, tool_call_id=c["id"], name=c["name"]))
        notes.append(f"the model looked at sample values {used} time(s)")
    result = call(specialist.with_structured_output(Proposals), messages)
    parsed = result if isinstance(result, Proposals) else Proposals.model_validate(result)
    return _with_notes(to_candidates(parsed.proposals, profiles), notes)


def _with_notes(found: tuple[list[Candidate], list[str]], notes: list[str]) -> tuple[list[Candidate], list[str]]:
    return found[0], notes + found[1]
