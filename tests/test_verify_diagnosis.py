"""verify_fn on what reports say about a check's diagnosis: the labelled cases of
tests/verify_corpus/diagnosis_cases.yaml (correct ones pass, wrong ones are flagged for exactly the listed items)."""

from __future__ import annotations

from functools import cache
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


@cache
def cases() -> tuple[dict[str, Any], ...]:
    return tuple(yaml.safe_load((CORPUS / "diagnosis_cases.yaml").read_text(encoding="utf-8"))["cases"])


def report_of(case: dict[str, Any]) -> str:
    by_id = {c["id"]: c for c in cases()}
    if "base" in case:
        text = report_of(by_id[case["base"]])
    elif case["report"] == "@template":  # the deterministic report, with its diagnosis sentences
        text = render_markdown(findings(case["findings"]))
    else:
        text = case["report"]
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


def test_citation_share_of_a_program_answer_and_of_a_rendered_report() -> None:
    from watchdog.verify.diagnosis_causes import citation_share

    doc = findings("clinic_diagnosed.json")
    answer = {"checks": [
        {"name": "patients.temperature_c.range", "causes": ["Firmware v2_0 writes bad readings."]},
        {"name": "prescriptions.patient_id.foreign_key", "causes": ["Patient 659 was never loaded."]},
        {"name": "prescriptions.notify_email.pattern", "causes": ["A form writes 'n/a'."]},
        {"name": "patients.title.not_null", "causes": ["Titles are optional in the form."]},
    ]}
    got = citation_share(answer, doc)
    diagnosed = [f.name for f in doc.findings if f.status == "fail"]
    assert got["checks"] == len(diagnosed) == 8          # every failing check has diagnosis facts here
    assert got["citing"] == 3 and got["share"] == 0.375
    assert got["per_check"]["patients.temperature_c.range"] and not got["per_check"]["patients.title.not_null"]
    case = next(c for c in cases() if c["id"] == "diag_program_mode_causes")
    rendered = citation_share(report_of(case), doc)
    assert rendered["citing"] == 3 and rendered["per_check"]["prescriptions.notify_email.pattern"]
    mapping = citation_share({"checks": {"patients.title.not_null": {"causes": ["Since 2025-03-02 the form "
                                                                                 "skips titles."]}}}, doc)
    assert mapping["per_check"]["patients.title.not_null"]     # the onset's date


def test_check_causes_on_a_program_answer() -> None:
    from watchdog.verify.diagnosis_causes import check_causes
    from watchdog.verify.model import Results

    doc = findings("clinic_diagnosed.json")
    f = next(f for f in doc.findings if f.name == "patients.temperature_c.range")
    res = Results()
    check_causes(res, f, ["Sensors on firmware = 'v2_0' misreport since mid-June 2025.", "A conversion bug."])
    assert not res.bad
    check_causes(res, f, ["Firmware = 'v1_2' sends Fahrenheit.", "Since 2024-01-01 the gateway drops values."])
    assert [b.actual[:30] for b in res.bad] == ["the diagnosis found: 19 of the", "the diagnosis dates: 2025-06-0"]
    passing = next(f for f in doc.findings if f.status == "pass")
    check_causes(res, passing, ["firmware = 'v1_2'"])  # not diagnosed: nothing to hold it to
    assert len(res.bad) == 2
