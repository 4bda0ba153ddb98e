"""The diagnosis in the findings block every role reads, and the plain facts a likely cause may quote: compact,
the same for every role, and grounded by verify's own rules (on generated databases with planted causes)."""

from __future__ import annotations

import json

import pytest

from bench.dbgen import generate
from tests.generated import truth_findings
from watchdog.findings import FindingsDoc
from watchdog.graph import prompts
from watchdog.graph.prompt_diagnosis import DIAGNOSIS_RULE, cause_facts, diagnosis_brief
from watchdog.verify.diagnosis_causes import check_causes, cites_diagnosis
from watchdog.verify.model import Results


def _doc(findings: dict) -> FindingsDoc:
    return FindingsDoc.validate(findings)


def test_the_findings_block_carries_each_diagnosis_compactly() -> None:
    findings = truth_findings(generate(2).truth())
    block = prompts.findings_data(findings)
    lines = {json.loads(line)["name"]: json.loads(line) for line in block.splitlines() if line.startswith('{"name"')}
    cause = lines["prescriptions.patient_id.foreign_key"]["diagnosis"]
    assert cause["segments"] == [{"column": "origin_system", "value": "new_erp", "failing": 91, "rows": 340,
                                  "of_failing": "98%", "of_rows": "14%"}]
    assert cause["values"] == [{"value": 659, "failing": 93}]
    assert lines["patients.title.not_null"]["diagnosis"]["segments"] == "none"      # looked, found none
    assert lines["patients.title.not_null"]["diagnosis"]["onset"]["since"] == "2025-03-02 03:11"
    assert "diagnosis" not in lines["patients.id.unique"]                          # passing: not diagnosed
    assert all(len(json.dumps(v.get("diagnosis", ""))) < 400 for v in lines.values())


def test_the_rule_is_in_the_shared_message_only_when_something_was_diagnosed() -> None:
    findings = truth_findings(generate(2).truth())
    assert DIAGNOSIS_RULE in prompts.shared_system(findings)
    plain = {**findings, "findings": [{k: v for k, v in f.items() if k != "diagnosis"} for f in findings["findings"]]}
    assert DIAGNOSIS_RULE not in prompts.shared_system(plain)
    assert prompts.shared_system(findings) == prompts.shared_system(json.loads(json.dumps(findings)))
    assert diagnosis_brief({"name": "x"}) is None


@pytest.mark.parametrize("seed", range(12))
def test_the_quotable_facts_are_grounded_and_cite_the_diagnosis(seed: int) -> None:
    findings = truth_findings(generate(seed).truth())
    doc = _doc(findings)
    for raw, f in zip(findings["findings"], doc.findings, strict=True):
        facts = cause_facts(raw)
        res = Results()
        check_causes(res, f, [fact.capitalize() + "." for fact in facts])
        assert not res.bad, [b.message for b in res.bad]
        if raw.get("diagnosis", {}).get("segments"):
            assert cites_diagnosis(f, [facts[0]])


def test_a_program_mode_draft_is_held_to_the_diagnosis_by_verify() -> None:
    """The program-mode rendering (the model's causes under each check) through verify_fn, as the graph and
    `watchdog verify` run it: causes quoting the diagnosis pass; a segment or date it does not hold is flagged."""
    from watchdog.graph.compose import CheckProse, Prose, assemble
    from watchdog.verify import verify_fn
    from watchdog.verify.diagnosis_causes import citation_share

    findings = truth_findings(generate(2).truth())
    doc = FindingsDoc.validate(findings)
    problems = [f for f in doc.findings if f.status == "fail"]
    raw = {f["name"]: f for f in findings["findings"]}

    def prose(causes: dict[str, list[str]]) -> Prose:
        return Prose(summary="Orphan prescriptions and bad temperature readings matter most.",
                     priorities=["Load the missing patients first."],
                     checks=[CheckProse(name=f.name, causes=causes.get(f.name) or ["A form accepts it empty."],
                                        fixes=["Validate the value where it is entered."]) for f in problems])

    grounded = {f.name: [fact[0].upper() + fact[1:] + "." for fact in cause_facts(raw[f.name])[:2]] or
                ["A form accepts it empty."] for f in problems}
    draft = assemble(doc, prose(grounded))
    result = verify_fn(draft, doc)
    assert result.passed, [b.message for b in result.bad]
    share = citation_share(draft, doc)
    assert share["citing"] == share["checks"] == len(problems)

    wrong = dict(grounded, **{"prescriptions.patient_id.foreign_key": [
        "The legacy_erp feed (origin_system = 'legacy_erp') sends unknown patients since 2023-01-05."]})
    bad = verify_fn(assemble(doc, prose(wrong)), doc).bad
    assert {b.finding for b in bad} == {"prescriptions.patient_id.foreign_key"}
    assert any("new_erp" in b.actual for b in bad) and any("diagnosis dates" in b.actual for b in bad)


def test_a_cause_lists_the_wrong_values_as_all_of_them_only_when_they_are():
    from watchdog.graph.prompt_diagnosis import cause_facts

    def finding(distinct: int) -> dict:
        return {"name": "t.x.range", "status": "fail", "diagnosis": {
            "values": [{"value": 700.69, "failing": 2}, {"value": -96.13, "failing": 1}], "values_distinct": distinct}}

    # 27 distinct wrong values, one repeated: it is the most common, not "the wrong values"
    assert cause_facts(finding(27)) == ["the most common wrong values are 700.69"]
    assert cause_facts(finding(1)) == ["the wrong values are 700.69"]
