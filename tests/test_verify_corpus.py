"""verify_fn against a labelled corpus of correct and wrong reports (tests/verify_corpus/cases.yaml)."""

from __future__ import annotations

import time
from functools import cache, lru_cache
from pathlib import Path
from typing import Any

import pytest
import yaml

from watchdog.findings import FindingsDoc
from watchdog.report import render_markdown
from watchdog.verify import verify_fn

CORPUS = Path(__file__).parent / "verify_corpus"


@cache
def findings(name: str) -> FindingsDoc:
    return FindingsDoc.load(CORPUS / name)


#: the labelled case files: general reports, and what reports say about a check's diagnosis
CASE_FILES = ("cases.yaml", "diagnosis_cases.yaml")


@lru_cache(maxsize=1)
def raw_cases() -> tuple[dict[str, Any], ...]:
    return tuple(case for name in CASE_FILES
                 for case in yaml.safe_load((CORPUS / name).read_text(encoding="utf-8"))["cases"])


def report_of(case: dict[str, Any]) -> str:
    """The case's report: its text, or the rendered template (or its base case's report) with its replacements.
    A replacement that no longer applies fails the test: the template (or the base case) changed."""
    by_id = {c["id"]: c for c in raw_cases()}
    if "base" in case:
        text = report_of(by_id[case["base"]])
        source = f"the report of its base case {case['base']!r}"
    elif case["report"] == "@template":
        text = render_markdown(findings(case["findings"]))
        source = f"the rendered template for {case['findings']} (the template changed)"
    else:
        text = case["report"]
        source = "its report"
    for old, new in case.get("replace", []):
        if old not in text:
            pytest.fail(f"update case {case['id']!r} in tests/verify_corpus/cases.yaml: its replace text {old!r} "
                        f"is no longer in {source}", pytrace=False)
        text = text.replace(old, new)
    return text


def correct_cases() -> list[dict[str, Any]]:
    return [c for c in raw_cases() if c["expect"] == "pass"]


def wrong_cases() -> list[dict[str, Any]]:
    return [c for c in raw_cases() if c["expect"] != "pass"]


def test_corpus_size() -> None:
    assert len(raw_cases()) >= 60
    assert len({c["id"] for c in raw_cases()}) == len(raw_cases())
    assert len({c["findings"] for c in raw_cases()}) >= 3
    assert len(correct_cases()) >= 25 and len(wrong_cases()) >= 30


@pytest.mark.parametrize("case", correct_cases(), ids=lambda c: c["id"])
def test_correct_report_passes(case: dict[str, Any]) -> None:
    result = verify_fn(report_of(case), findings(case["findings"]))
    assert result.passed, "false alarm(s):\n" + "\n".join(b.message for b in result.bad)
    assert result.ok, "nothing was checked"


@pytest.mark.parametrize("case", wrong_cases(), ids=lambda c: c["id"])
def test_wrong_report_is_flagged(case: dict[str, Any]) -> None:
    result = verify_fn(report_of(case), findings(case["findings"]))
    assert not result.passed
    bad = result.bad
    unmatched = list(bad)
    for exp in case["expect"]:
        hit = next((b for b in unmatched if b.finding == exp["finding"] and str(exp["actual"]) in b.actual), None)
        assert hit is not None, (f"expected a bad item for {exp}; got:\n"
                                 + "\n".join(f"  {b.finding} | {b.says} | {b.actual}" for b in bad))
        unmatched.remove(hit)
        assert hit.message and hit.says
    if case.get("exact", True):
        assert not unmatched, "unexpected bad item(s):\n" + "\n".join(b.message for b in unmatched)


def test_dict_findings_and_json_shape() -> None:
    case = next(c for c in raw_cases() if c["id"] == "contract_check")
    data = verify_fn(case["report"], findings("library.json").to_json_dict()).to_json_dict()
    assert set(data) == {"passed", "ok", "bad"} and data["passed"] is False
    first = data["bad"][0]
    assert set(first) == {"finding", "says", "actual", "message"}
    assert first["finding"] == "books.isbn.not_null" and first["actual"] == "2" and "7" in first["says"]
    assert "books.isbn.not_null" in first["message"] and "7" in first["message"] and "2" in first["message"]


def test_speed() -> None:
    """A few milliseconds per report (the template reports carry sample tables and SQL)."""
    texts = [(report_of(case), findings(case["findings"])) for case in raw_cases()]
    for text, doc in texts:  # warm up (regex compilation)
        verify_fn(text, doc)
    start = time.perf_counter()
    for text, doc in texts:
        verify_fn(text, doc)
    per_report = (time.perf_counter() - start) / len(texts)
    assert per_report < 0.05, f"{per_report * 1000:.1f} ms per report"
