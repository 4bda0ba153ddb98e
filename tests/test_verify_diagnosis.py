"""What reports say about a check's diagnosis: the labelled cases of tests/verify_corpus/diagnosis_cases.yaml (run
with the rest of the corpus by tests/test_verify_corpus.py), generated reports, causes and the citation share."""

from __future__ import annotations

from typing import Any

import pytest

from tests.test_verify_corpus import findings, raw_cases, report_of
from watchdog.findings import FindingsDoc
from watchdog.report import render_markdown
from watchdog.verify import verify_fn


def cases() -> list[dict[str, Any]]:
    """The cases of diagnosis_cases.yaml (tests/test_verify_corpus.py runs them with the rest of the corpus)."""
    return [c for c in raw_cases() if c["id"].startswith("diag_")]


def test_corpus_size() -> None:
    ids = [c["id"] for c in cases()]
    assert len(ids) >= 40
    assert sum(c["expect"] == "pass" for c in cases()) >= 15
    assert sum(c["expect"] != "pass" for c in cases()) >= 20


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


@pytest.mark.parametrize("seed", range(0, 60, 3))
def test_the_deterministic_report_of_a_generated_database_passes_and_a_changed_share_is_caught(seed: int) -> None:
    import re

    from bench.dbgen import generate
    from tests.generated import truth_findings

    doc = FindingsDoc.validate(truth_findings(generate(seed).truth()))
    report = render_markdown(doc)
    result = verify_fn(report, doc)
    assert result.passed, [b.message for b in result.bad]
    m = re.search(r"(\d+) of the ([\d,]+) \((\d+)%\) come from", report)
    if m is None:
        return
    wrong = report.replace(m.group(0), f"{int(m.group(1)) + 3} of the {m.group(2)} ({m.group(3)}%) come from", 1)
    bad = verify_fn(wrong, doc).bad
    assert bad and all("diagnosis" in b.message for b in bad), [b.message for b in bad]


def test_correct_reports_still_pass_when_the_findings_carry_the_real_diagnosis() -> None:
    """demo_diagnosed.json is demo.json with the diagnosis the stage computes on the demo database (no segment
    concentrates; offending values, distinct counts and same-row overlaps): every correct demo case still passes."""
    doc = findings("demo_diagnosed.json")
    assert sum(f.diagnosis is not None for f in doc.findings) == 8
    checked = 0
    for case in raw_cases():
        if case.get("findings") == "demo.json" and case["expect"] == "pass":
            result = verify_fn(report_of(case), doc)
            assert result.passed, (case["id"], [b.message for b in result.bad])
            checked += 1
    assert checked >= 10


def test_a_cause_naming_a_sample_rows_segment_value_must_be_held_an_example_address_need_not() -> None:
    from watchdog.verify.diagnosis_causes import check_causes
    from watchdog.verify.model import Results

    sample = [{"id": i, "intake_team": team, "reply_email": f"user{i}@relay.test", "quantity": 9999.0}
              for i, team in ((11, "night_shift"), (31, "night_shift"), (42, "team_red"))]
    doc = FindingsDoc.validate({
        "database": "sqlite:///x.db", "started_at": "2026-12-01T08:00:00+00:00", "duration_s": 0.1,
        "summary": {"checks": 1, "passed": 0, "warned": 0, "failed": 1, "errors": 0},
        "findings": [{"name": "clinicians.quantity.range", "check": "range", "table": "clinicians",
                      "column": "quantity", "status": "fail", "failing": 70, "total": 1465,
                      "params": {"min": 1, "max": 250}, "sample": sample,
                      "diagnosis": {"segments": [], "values": [{"value": 9999.0, "failing": 70}]}}]})
    f = doc.findings[0]
    res = Results()
    check_causes(res, f, ["An import writes the sentinel 9999 (e.g. for user11@relay.test).",
                          "Quantities typed by hand are not validated."])
    assert not res.bad, [b.message for b in res.bad]
    check_causes(res, f, ["The night_shift team enters 9999 when the quantity is unknown."])
    assert [b.finding for b in res.bad] == ["clinicians.quantity.range"]
    assert "intake_team = 'night shift'" in res.bad[0].message
