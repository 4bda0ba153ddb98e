"""verify.problems: a numberless claim of a problem ("missing names", "duplicate domains") about a check that
passed, on the real 1.5B program draft of issue 10 (tests/verify_corpus/real/q15-demo-program-bench-t0.2.json)
and small edits of it and of its findings."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from watchdog.findings import FindingsDoc
from watchdog.graph.compose import assemble, parse_prose
from watchdog.verify import verify_fn

CORPUS = Path(__file__).parent / "verify_corpus"
DRAFT = CORPUS / "real" / "q15-demo-program-bench-t0.2.json"


def _findings(*extra: dict[str, Any], **changes: dict[str, Any]) -> FindingsDoc:
    """demo.json with findings changed by name (``changes``, keys with ``__`` for dots) and ``extra`` added."""
    raw = json.loads((CORPUS / "demo.json").read_text(encoding="utf-8"))
    for key, values in changes.items():
        f = next(x for x in raw["findings"] if x["name"] == key.replace("__", "."))
        f.update(values)
    base = next(x for x in raw["findings"] if x["name"] == "contacts.email.not_null")
    for e in extra:
        raw["findings"].append({**base, "description": None, **e})
    return FindingsDoc.validate(raw)


def _report(doc: FindingsDoc, **edits: str) -> str:
    prose_json = json.loads(DRAFT.read_text(encoding="utf-8"))
    prose_json.update(edits)
    prose, problem = parse_prose(json.dumps(prose_json))
    assert prose is not None, problem
    return assemble(doc, prose)


def _problem_items(text: str, doc: FindingsDoc) -> dict[str, str]:
    return {b.finding or "": b.message for b in verify_fn(text, doc).bad
            if b.finding in ("companies.name.not_null", "companies.domain.unique")}


def test_real_draft_is_flagged_with_true_facts() -> None:
    doc = _findings()
    bad = [b for b in verify_fn(_report(doc), doc).bad if b.finding in ("companies.name.not_null",
                                                                        "companies.domain.unique")]
    assert [(b.finding, b.says, b.actual) for b in bad] == [
        ("companies.name.not_null", "missing names", "pass"),
        ("companies.domain.unique", "duplicate domains", "pass")]
    assert bad[0].message.startswith("companies.name.not_null passed (0 rows with a missing name)")
    assert bad[1].message.startswith("companies.domain.unique passed (0 duplicated domain values)")


def test_priorities_alone_are_flagged() -> None:
    """Without the summary's words, "Ensure all company records have a name" and "Remove duplicate web domains"
    still claim the two problems."""
    doc = _findings()
    text = _report(doc, summary="The report highlights incorrect email formats among the contacts.")
    items = _problem_items(text, doc)
    assert set(items) == {"companies.name.not_null", "companies.domain.unique"}, items


def test_no_flag_when_a_matching_check_failed() -> None:
    """If contacts.first_name.not_null failed, "missing names" may be about it; the domains are still flagged."""
    doc = _findings({"name": "contacts.first_name.not_null", "column": "first_name", "failing": 4,
                     "rate": 0.002})
    assert set(_problem_items(_report(doc), doc)) == {"companies.domain.unique"}
    doc = _findings(companies__domain__unique={"status": "warn", "failing": 2,
                                               "details": {"duplicate_values": 1, "excess_rows": 1}})
    assert "companies.domain.unique" not in _problem_items(_report(doc), doc)


def test_no_flag_when_the_noun_is_ambiguous() -> None:
    """Two passing not_null checks on name columns: "missing names" could be either."""
    doc = _findings({"name": "contacts.last_name.not_null", "column": "last_name", "status": "pass",
                     "failing": 0, "rate": 0.0})
    assert set(_problem_items(_report(doc), doc)) == {"companies.domain.unique"}


def test_no_flag_inside_a_checks_own_section() -> None:
    """A cause under a check's heading is about that check, not a claim about another one."""
    doc = _findings()
    text = _report(doc, summary="Email formats are wrong.", priorities=["Correct email format for all contacts"])
    text = text.replace("- Missing email addresses in some records", "- Missing names in some records")
    assert "- Missing names in some records" in text
    assert _problem_items(text, doc) == {}


def test_no_flag_when_the_passing_check_counts_rows() -> None:
    """A check that passed within its tolerance still counts missing values: the claim may be true."""
    doc = _findings(companies__name__not_null={"failing": 2, "rate": 0.01, "params": {"max_count": 5}})
    assert set(_problem_items(_report(doc), doc)) == {"companies.domain.unique"}


@pytest.mark.parametrize("summary", [
    "There are no missing names and no duplicate domains; email formats are wrong.",
    "If duplicate domains or missing names appear, the import should be fixed.",
    "Keep monitoring for missing names and duplicate domains.",
    "Names and domains passed: 0 missing names, 0 duplicate domains.",
    "Companies are not missing names, nor are there duplicate domains.",
    "Missing names and duplicate domains were fixed last week; email formats are wrong.",
    "Add a NOT NULL constraint to prevent missing names; check for duplicate domains.",
])
def test_negated_or_hedged_claims_are_left_alone(summary: str) -> None:
    doc = _findings()
    text = _report(doc, summary=summary, priorities=["Correct email format for all contacts"])
    assert _problem_items(text, doc) == {}
