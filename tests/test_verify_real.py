"""verify_fn on real drafts of small local models (tests/verify_corpus/real.yaml, raw outputs in real/).

Every draft is a model's raw answer, saved byte for byte: Qwen2.5-Coder 0.5B and 1.5B instruct (GGUF,
served on loopback by xllamacpp) given watchdog's own specialist prompt for the library findings and for a
Chinook audit (tests/verify_corpus/chinook_audit.json). Each is labelled by hand: every bad item verify
must report (finding, the true value) and why. The tests assert no false alarm, every labelled item
detected and attributed, nothing else reported, and that every message states true facts.
"""

from __future__ import annotations

import re
from functools import cache, lru_cache
from pathlib import Path
from typing import Any

import pytest
import yaml

from watchdog.findings import FindingsDoc
from watchdog.report.escape import duration, percent
from watchdog.verify import BadItem, verify_fn
from watchdog.verify.numbers import format_count

CORPUS = Path(__file__).parent / "verify_corpus"


@cache
def findings(name: str) -> FindingsDoc:
    return FindingsDoc.load(CORPUS / name)


@lru_cache(maxsize=1)
def drafts() -> tuple[dict[str, Any], ...]:
    return tuple(yaml.safe_load((CORPUS / "real.yaml").read_text(encoding="utf-8"))["drafts"])


def text_of(draft: dict[str, Any]) -> str:
    return (CORPUS / "real" / f"{draft['id']}.md").read_text(encoding="utf-8")


def by_id(draft_id: str) -> dict[str, Any]:
    return next(d for d in drafts() if d["id"] == draft_id)


def bad_of(draft: dict[str, Any]) -> list[BadItem]:
    return verify_fn(text_of(draft), findings(draft["findings"])).bad


def show(bad: list[BadItem]) -> str:
    return "\n".join(f"  {b.finding} | {b.says} | {b.actual}" for b in bad)


# ---- the corpus as a whole ---------------------------------------------------------------------------

def test_real_corpus_size_and_shapes() -> None:
    all_drafts = drafts()
    assert len(all_drafts) >= 40
    assert len({d["id"] for d in all_drafts}) == len(all_drafts)
    models = {d["model"] for d in all_drafts}
    assert len(models) >= 2, models
    shapes = {s for d in all_drafts for s in d["shapes"]}
    assert {"fence", "think", "report-tag", "status-lines", "bullets", "truncated", "table"} <= shapes, shapes
    for d in all_drafts:
        assert (CORPUS / "real" / f"{d['id']}.md").is_file(), d["id"]


@pytest.mark.parametrize("draft", drafts(), ids=lambda d: d["id"])
def test_real_draft(draft: dict[str, Any]) -> None:
    """0 false alarms, every labelled item detected and attributed to its finding, nothing else."""
    bad = bad_of(draft)
    expect = [] if draft["expect"] == "pass" else draft["expect"]
    unmatched = list(bad)
    for exp in expect:
        hit = next((b for b in unmatched if b.finding == exp["finding"] and str(exp["actual"]) in b.actual), None)
        assert hit is not None, f"missed {exp} ({exp.get('why', '')}); verify said:\n{show(bad)}"
        unmatched.remove(hit)
    assert not unmatched, "false alarm(s):\n" + "\n".join(b.message for b in unmatched)


def test_truncation_matches_the_finish_reason() -> None:
    """Each draft the server cut at the token limit is reported as cut off (unless its label says the cut fell
    on a clean boundary), and no draft the model finished is."""
    for d in drafts():
        flagged = any(b.actual in ("the report is cut off", "no report") for b in bad_of(d))
        if d["finish_reason"] == "length" and not d.get("clean_cut"):
            assert flagged, f"{d['id']}: cut at the token limit but not flagged"
        if d["finish_reason"] == "stop":
            assert not any(b.actual == "the report is cut off" for b in bad_of(d)), f"{d['id']}: finished but flagged"


def _true_facts(doc: FindingsDoc, name: str) -> set[str]:
    f = next(x for x in doc.findings if x.name == name)
    values = {format_count(v) for v in (f.failing, f.total, f.observed) if v is not None}
    values |= {format_count(v) for v in f.details.values() if isinstance(v, (int, float))}
    if f.rate is not None or (f.failing is not None and f.total):
        values.add(percent(f.rate if f.rate is not None else (f.failing or 0) / (f.total or 1)))
    if f.check == "freshness" and f.observed is not None:
        values.add(duration(f.observed))
    return values


def test_messages_state_true_facts() -> None:
    """Every bad item's true value is one of its finding's facts, and no message calls an age, a row count or a
    threshold "failing rows" of a check that counts none."""
    checked = 0
    for d in drafts():
        doc = findings(d["findings"])
        for b in bad_of(d):
            if b.finding is None or b.says == "(not mentioned)":
                continue
            f = next(x for x in doc.findings if x.name == b.finding)
            assert b.finding in b.message
            fixed = {"no rate", "no total", "no failing-row count", "fail", "warn", "pass", "error"}
            assert b.actual in fixed or b.actual in _true_facts(doc, b.finding), (d["id"], b)
            if f.failing is None:
                assert not re.search(r"findings show [\d,]+ failing rows", b.message), (d["id"], b.message)
            checked += 1
    assert checked >= 10
