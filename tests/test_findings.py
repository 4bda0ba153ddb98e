"""findings.json is a contract: the dataclasses that replaced the pydantic models (issue 13) write the same
bytes, read back what they wrote, and reject bad input with pydantic's messages."""

from __future__ import annotations

import dataclasses
import json
from datetime import UTC, datetime
from decimal import Decimal
from pathlib import Path
from typing import Any, Literal

import pytest
from pydantic import BaseModel, Field, ValidationError

from watchdog.findings import Finding, FindingsDoc, Summary
from watchdog.run.demo_data import build_demo_database
from watchdog.sandbox import Sandbox
from watchdog.scan import scanner
from watchdog.scan.suites import load_suites

REPO = Path(__file__).resolve().parent.parent


class LegacyFinding(BaseModel):  # the pydantic model findings.json was written by until issue 13, verbatim
    name: str
    check: str
    table: str | None = None
    column: str | None = None
    columns: list[str] | None = None
    status: Literal["pass", "warn", "fail", "error"]
    severity: Literal["fail", "warn"] = "fail"
    params: dict[str, Any] = Field(default_factory=dict)
    failing: int | None = None
    total: int | None = None
    rate: float | None = None
    observed: float | int | None = None
    details: dict[str, Any] = Field(default_factory=dict)
    sample: list[dict[str, Any]] = Field(default_factory=list)
    sql: str | None = None
    error: str | None = None
    description: str | None = None


class LegacySummary(BaseModel):
    checks: int = 0
    passed: int = 0
    warned: int = 0
    failed: int = 0
    errors: int = 0


class LegacyDoc(BaseModel):
    schema_version: Literal[1] = 1
    run_id: str | None = None
    database: str
    started_at: str
    duration_s: float
    summary: LegacySummary
    findings: list[LegacyFinding]
    suites: list[str] = Field(default_factory=list)
    watchdog_version: str = ""
    error: str | None = None


def legacy_json(doc: LegacyDoc) -> str:  # the old FindingsDoc.to_json
    return json.dumps(doc.model_dump(mode="json"), indent=2, ensure_ascii=False) + "\n"


def scan_both(monkeypatch: pytest.MonkeyPatch, url: str, suite: Path) -> tuple[FindingsDoc, LegacyDoc]:
    """A scan, with every Finding the scanner makes also made by the legacy model from the same arguments."""
    made: list[tuple[dict[str, Any], Finding]] = []

    def recording(**kwargs: Any) -> Finding:
        made.append((kwargs, Finding(**kwargs)))
        return made[-1][1]

    monkeypatch.setattr(scanner, "Finding", recording)
    with Sandbox(url) as box:
        doc = scanner.scan(box, [c for s in load_suites([suite]) for c in s.checks], sample=5, suites=[str(suite)])
    legacy_findings = []
    for kwargs, finding in made:
        legacy = LegacyFinding(**kwargs)
        legacy.sample = finding.sample  # set after construction, as the scanner does
        legacy_findings.append(legacy)
    fields = {f.name: getattr(doc, f.name) for f in dataclasses.fields(doc) if f.name not in ("summary", "findings")}
    legacy_doc = LegacyDoc(**fields, summary=LegacySummary(**dataclasses.asdict(doc.summary)), findings=legacy_findings)
    return doc, legacy_doc


def test_the_demo_scan_writes_the_bytes_the_pydantic_model_wrote(tmp_path, monkeypatch):
    db = tmp_path / "crm.db"
    build_demo_database(db, now=datetime(2026, 11, 29, 12, tzinfo=UTC))
    doc, legacy = scan_both(monkeypatch, f"sqlite:///{db}", REPO / "checks" / "demo_crm.yaml")
    assert len(doc.findings) > 15 and doc.summary.failed > 0 and any(f.sample for f in doc.findings)
    assert doc.to_json() == legacy_json(legacy)
    path = doc.write(tmp_path / "out" / "findings.json")
    assert path.read_text(encoding="utf-8") == legacy_json(legacy)
    assert FindingsDoc.load(path) == doc  # and reads back what it wrote
    assert LegacyDoc.model_validate_json(path.read_text(encoding="utf-8")) == legacy


def test_postgres_numbers_are_written_as_the_pydantic_model_wrote_them(make_database, tmp_path, monkeypatch):
    """A PostgreSQL scan (numeric columns come back as Decimals) writes what the pydantic model wrote."""
    db = make_database("postgresql")
    db.run("CREATE TABLE t (id int, amount numeric(12, 2), ratio double precision)",
           "INSERT INTO t VALUES (1, 10.50, 0.5), (2, NULL, 1.5), (2, -3.00, NULL)")
    suite = tmp_path / "t.yaml"
    suite.write_text("tables:\n  t:\n    - not_null: amount\n    - unique: id\n"
                     "    - range: {column: amount, min: 0, max: 5}\n    - range: {column: ratio, min: 1}\n"
                     "    - row_count: {min: 5}\n", encoding="utf-8")
    doc, legacy = scan_both(monkeypatch, db.url, suite)
    assert doc.summary.errors == 0 and doc.summary.failed == 5, doc.to_json()
    assert doc.to_json() == legacy_json(legacy)


@pytest.mark.parametrize("given", [
    {"failing": Decimal(3), "total": True}, {"failing": 3.0, "total": 7}, {"rate": 1}, {"rate": Decimal("0.25")},
    {"observed": Decimal("2")}, {"observed": Decimal("2.5")}, {"observed": True}, {"observed": 7},
    {"observed": 2.5}, {"observed": float("nan"), "rate": float("inf")}, {"columns": ("a", "b")},
    {"params": {"min": 1, "values": ["a", None], "nested": {"x": (1, 2)}}},
    {"status": "warn", "severity": "warn", "sql": "SELECT 1", "description": "d", "error": "e"},
])
def test_a_finding_holds_and_writes_its_values_as_the_pydantic_model_did(given):
    kwargs = {"name": "t.c.x", "check": "x", "status": "pass", **given}
    ours, theirs = Finding(**kwargs), LegacyFinding(**kwargs)
    assert json.dumps(ours.to_json_dict()) == json.dumps(theirs.model_dump(mode="json"))
    assert {k: type(getattr(ours, k)) for k in given} == {k: type(getattr(theirs, k)) for k in given}


def test_a_document_is_validated_by_pydantic_with_its_messages():
    finding = Finding(name="t.c.not_null", check="not_null", status="fail", failing=2, total=4, rate=0.5)
    doc = FindingsDoc(database="sqlite://", started_at="2026-11-29T00:00:00Z", duration_s=1,
                      summary=Summary.of([finding]), findings=[finding])
    assert doc.duration_s == 1.0 and isinstance(doc.duration_s, float)
    assert FindingsDoc.from_json(doc.to_json()) == doc == FindingsDoc.validate(json.loads(doc.to_json()))
    assert FindingsDoc.validate(doc) is doc
    assert dataclasses.replace(finding, status="pass") != finding
    with pytest.raises(ValidationError, match=r"findings\.0\.status\n  Input should be 'pass', 'warn', 'fail'"):
        FindingsDoc.from_json(doc.to_json().replace('"fail"', '"boom"', 1))
    with pytest.raises(ValidationError, match=r"schema_version\n  Input should be 1"):
        FindingsDoc.validate({**json.loads(doc.to_json()), "schema_version": 2})
    with pytest.raises(ValidationError, match=r"database\n  Field required"):
        FindingsDoc.validate({"started_at": "x", "duration_s": 1, "summary": {}, "findings": []})
    with pytest.raises(ValueError, match="status"):
        Finding(name="x", check="x", status="boom")  # type: ignore[arg-type]
