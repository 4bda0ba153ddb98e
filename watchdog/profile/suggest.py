"""Profile, propose, prove: the starter suite for a database, every check run before it is written."""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from datetime import UTC, datetime

from watchdog.defaults import PROFILE_NULL_MARKERS
from watchdog.profile.candidate_trial import run_candidates
from watchdog.profile.fds import KIND as FD
from watchdog.profile.fds import fd_candidates, settle
from watchdog.profile.rules import KINDS, Candidate, rules
from watchdog.profile.schema import read_schema
from watchdog.profile.stats import TableProfile, profile_table
from watchdog.profile.writer import render_suite
from watchdog.sandbox import Sandbox

Progress = Callable[[int, int, str], None]


@dataclass
class Suggestion:
    candidates: list[Candidate]
    text: str
    notes: list[str] = field(default_factory=list)

    @property
    def active(self) -> list[Candidate]:
        return [c for c in self.candidates if c.status == "pass"]

    @property
    def commented(self) -> list[Candidate]:
        return [c for c in self.candidates if c.status in ("fail", "warn")]


def profile_database(box: Sandbox, tables: list[str] | None = None,
                     on_progress: Progress | None = None, *, gate_shapes: bool = True,
                     null_markers: Iterable[str] | None = None) -> list[TableProfile]:
    """Profile ``tables`` (default: every base table); text columns are searched for ``null_markers`` (default:
    ``PROFILE_NULL_MARKERS``), compared exactly."""
    markers = PROFILE_NULL_MARKERS if null_markers is None else tuple(null_markers)
    infos = read_schema(box, tables)
    out = []
    for i, info in enumerate(infos):
        if on_progress:
            on_progress(i, len(infos), info.name)
        out.append(profile_table(box, info, gate_shapes=gate_shapes, markers=markers))
    if on_progress:
        on_progress(len(infos), len(infos), "done")
    return out


def suggest_suite(box: Sandbox, profiles: list[TableProfile], *, strictness: str = "normal",
                  kinds: list[str] | None = None, extra: list[Candidate] | None = None,
                  notes: list[str] | None = None) -> Suggestion:
    """Candidates from ``profiles`` (plus ``extra``, e.g. the LLM's), run on the data, rendered as YAML."""
    wanted = set(kinds or KINDS)
    by_name = {p.name: p for p in profiles}
    candidates = [c for p in profiles for c in rules(p, by_name, strictness) if c.kind in wanted]
    if FD in wanted:
        candidates += [c for p in profiles for c in fd_candidates(p)]
    notes = list(notes or [])
    candidates = _dedupe(candidates + list(extra or []), notes)
    ran = run_candidates(box, candidates)
    kept = []
    tried = [c for c in ran if c.origin == "fd"]
    settled = {id(c) for c in tried if settle(c) is not None}
    if tried:
        near = sum(c.status == "fail" for c in tried if id(c) in settled)
        notes.append(f"functional dependencies: {len(tried)} column pairs tried, {len(settled) - near} hold on "
                     f"enough rows to suggest, {near} nearly hold (written commented out)")
    for c in ran:
        if c.origin == "fd" and id(c) not in settled:
            continue
        name = f"{c.table}.{c.column or ''}.{c.kind}".replace("..", ".")
        if c.status == "error":
            notes.append(f"dropped {'LLM proposal ' if c.origin == 'llm' else ''}{name}: it could not run "
                         f"({c.failure})")
        else:
            kept.append(c)
    header = [f"Suggested by `watchdog suggest` on {box.display_url} at "
              f"{datetime.now(UTC).isoformat(timespec='seconds').replace('+00:00', 'Z')} (strictness {strictness}).",
              f"Every check below was run on the data first: {sum(c.status == 'pass' for c in kept)} pass; "
              f"{sum(c.status != 'pass' for c in kept)} fail today and are commented out with their failure.",
              "Review, edit, then: watchdog scan --db URL --checks THIS_FILE"]
    return Suggestion(kept, render_suite(kept, header=header), notes)


def _dedupe(candidates: list[Candidate], notes: list[str]) -> list[Candidate]:
    seen: set[tuple[str, str, str]] = set()
    out = []
    for c in candidates:
        column = c.options.get("column")
        if c.kind == FD:
            column = [*c.options.get("determinant", []), "->", str(c.options.get("dependent"))]
        key = (c.table, c.kind, "+".join(column) if isinstance(column, list) else str(column))
        if key in seen:
            if c.origin == "llm":
                notes.append(f"LLM proposal {'.'.join(key)} is already suggested from the profile")
            continue
        seen.add(key)
        out.append(c)
    return out
