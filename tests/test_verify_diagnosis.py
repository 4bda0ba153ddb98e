"""verify_fn on what reports say about a check's diagnosis: the labelled cases of
tests/verify_corpus/diagnosis_cases.yaml (correct ones pass, wrong ones are flagged for exactly the listed items)."""

from __future__ import annotations

import json
from functools import cache
from pathlib import Path
from typing import Any

import pytest
import yaml

from watchdog.findings import FindingsDoc
from watchdog.verify import verify_fn

CORPUS = Path(__file__).parent / "verify_corpus"


@cache
def findings(name: str) -> FindingsDoc:
    raw = json.loads((CORPUS / name).read_text(encoding="utf-8"))
    doc = FindingsDoc.validate(raw)
    for f, data in zip(doc.findings, raw["findings"], strict=True):
        if getattr(f, "diagnosis", None) is None and data.get("diagnosis") is not None:
            f.diagnosis = data["diagnosis"]  # type: ignore[attr-defined]  # until findings carry the field
    return doc


@cache
def cases() -> tuple[dict[str, Any], ...]:
    return tuple(yaml.safe_load((CORPUS / "diagnosis_cases.yaml").read_text(encoding="utf-8"))["cases"])


def report_of(case: dict[str, Any]) -> str:
    by_id = {c["id"]: c for c in cases()}
    text = report_of(by_id[case["base"]]) if "base" in case else case["report"]
    for old, new in case.get("replace", []):
        assert old in text, f"case {case['id']!r}: {old!r} is not in its base report"
        text = text.replace(old, new)
    return text


def findings_of(case: dict[str, Any]) -> FindingsDoc:
    by_id = {c["id"]: c for c in cases()}
    while "findings" not in case:
        case = by_id[case["base"]]
    return findings(case["findings"])


def test_corpus_size() -> None:
    ids = [c["id"] for c in cases()]
    assert len(ids) == len(set(ids)) and len(ids) >= 40
    assert sum(c["expect"] == "pass" for c in cases()) >= 15
    assert sum(c["expect"] != "pass" for c in cases()) >= 20


@pytest.mark.parametrize("case", [c for c in cases() if c["expect"] == "pass"], ids=lambda c: c["id"])
def test_correct_diagnosis_claims_pass(case: dict[str, Any]) -> None:
    result = verify_fn(report_of(case), findings_of(case))
    assert result.passed, "false alarm(s):\n" + "\n".join(b.message for b in result.bad)


@pytest.mark.parametrize("case", [c for c in cases() if c["expect"] != "pass"], ids=lambda c: c["id"])
def test_wrong_diagnosis_claims_are_flagged(case: dict[str, Any]) -> None:
    result = verify_fn(report_of(case), findings_of(case))
    unmatched = list(result.bad)
    for exp in case["expect"]:
        hit = next((b for b in unmatched if b.finding == exp["finding"] and str(exp["actual"]) in b.actual), None)
        assert hit is not None, (f"expected a bad item for {exp}; got:\n"
                                 + "\n".join(f"  {b.finding} | {b.says} | {b.actual}" for b in result.bad))
        unmatched.remove(hit)
        assert hit.message and hit.says
    if case.get("exact", True):
        assert not unmatched, "unexpected bad item(s):\n" + "\n".join(b.message for b in unmatched)
