"""Profile, propose, prove: the starter suite for a database, every check run before it is written."""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from datetime import UTC, datetime

from watchdog.defaults import PROFILE_NULL_MARKERS
from watchdog.profile.candidate_trial import run_candidates
from watchdog.profile.fds import KIND as FD
from watchdog.profile.fds import fd_candidates, settle
from watchdog.profile.metric_rules import metric_candidates
from watchdog.profile.null_values import MARKED_KINDS, TableSetting, table_setting, table_view
from watchdog.profile.numeric_rules import numeric_text_ranges
from watchdog.profile.rules import KINDS, KNOBS, Candidate, rules
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
    #: per table: the options written above its checks (``null_values``, ``trim_blanks``) and their evidence
    settings: dict[str, TableSetting] = field(default_factory=dict)

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
                  notes: list[str] | None = None, text_values: bool = True) -> Suggestion:
    """Candidates from ``profiles`` (plus ``extra``, e.g. the LLM's), run on the data, rendered as YAML.
    ``text_values=False`` proposes no ``null_values`` and no ``numeric_text`` range (for benchmarks: the suite as
    it was before those)."""
    wanted = set(kinds or KINDS)
    settings = {p.name: table_setting(p) if text_values else TableSetting() for p in profiles}
    views = {p.name: table_view(p, settings[p.name]) for p in profiles}
    candidates = []
    for p in profiles:  # unique compares values as stored (markers too): judged on the table as it is
        view = views[p.name]
        candidates += [c for c in rules(view, views, strictness) if c.kind in wanted and c.kind != "unique"]
        candidates += [c for c in rules(p, views, strictness) if c.kind in wanted and c.kind == "unique"]
        if ("range" in wanted or "metric" in wanted) and text_values:
            ranges = numeric_text_ranges(view, p, settings[p.name], KNOBS[strictness])
            candidates += ranges if "range" in wanted else []
        else:
            ranges = []
        if "metric" in wanted:
            ranged = {c.column for c in rules(view, views, strictness) + ranges if c.kind == "range" and c.column}
            candidates += metric_candidates(view, p, ranged, KNOBS[strictness])
    if FD in wanted:
        candidates += [c for p in profiles for c in fd_candidates(p)]
    notes = list(notes or [])
    candidates = _dedupe(candidates + list(extra or []), notes)
    _own_markers(candidates, settings)
    _say_markers(candidates, profiles, views)
    ran = run_candidates(box, candidates, settings)
    for c in ran:
        if c.after_run is not None:
            c.after_run(c)
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
    return Suggestion(kept, render_suite(kept, header=header, settings=settings), notes, settings)


def _own_markers(candidates: list[Candidate], settings: dict[str, TableSetting]) -> None:
    """A check on a column where a table marker is a value lists its own ``null_values`` (without it)."""
    for c in candidates:
        setting = settings.get(c.table)
        if setting and c.kind in MARKED_KINDS and c.column in setting.own and "null_values" not in c.options:
            c.options["null_values"] = list(setting.own[c.column])


def _say_markers(candidates: list[Candidate], profiles: list[TableProfile], views: dict[str, TableProfile]) -> None:
    """A not_null whose column's nulls include null values says so in its evidence."""
    for p in profiles:
        changed = {c.name for c, v in zip(p.columns, views[p.name].columns, strict=True) if c.nulls != v.nulls}
        for c in candidates:
            if c.table == p.name and c.kind == "not_null" and c.column in changed:
                c.evidence = c.evidence.replace(" nulls in ", " nulls or null_values in ", 1)


def _dedupe(candidates: list[Candidate], notes: list[str]) -> list[Candidate]:
    seen: set[tuple[str, str, str]] = set()
    out = []
    for c in candidates:
        column = c.options.get("column")
        if c.kind == FD:
            column = [*c.options.get("determinant", []), "->", str(c.options.get("dependent"))]
        kind = f"{c.kind}:{c.options.get('agg')}" if c.kind == "metric" else c.kind  # one metric per agg
        key = (c.table, kind, "+".join(column) if isinstance(column, list) else str(column))
        if key in seen:
            if c.origin == "llm":
                notes.append(f"LLM proposal {'.'.join(key)} is already suggested from the profile")
            continue
        seen.add(key)
        out.append(c)
    return out
