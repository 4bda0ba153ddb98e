"""The diagnosis in a scan's run: filed in findings.json, said in report.md, off with --no-diagnose, and a
diagnosis that fails or runs out of budget is recorded without costing a finding."""

from __future__ import annotations

import json
from pathlib import Path

from tests.test_diagnose_engines import SUITE, load_fixture
from watchdog.diagnose import diagnose_doc
from watchdog.findings import FindingsDoc
from watchdog.report.diagnosis_text import sentences
from watchdog.run.scan_run import run_scan
from watchdog.sandbox import Sandbox
from watchdog.scan.scanner import scan
from watchdog.scan.suites import load_suite


def _setup(make_database, tmp_path: Path) -> tuple[str, Path]:
    db = make_database("sqlite")
    load_fixture(db)
    suite = tmp_path / "suite.yaml"
    suite.write_text(SUITE, encoding="utf-8")
    return db.url, suite


def test_a_scan_files_the_diagnosis_and_the_report_says_it(make_database, tmp_path: Path):
    url, suite = _setup(make_database, tmp_path)
    outcome = run_scan(url, [suite], out_dir=tmp_path / "out")
    doc = json.loads(outcome.findings_path.read_text())
    assert doc["schema_version"] == 1
    by_name = {f["name"]: f for f in doc["findings"]}
    assert by_name["contacts.email.not_null"]["diagnosis"]["segments"][0]["value"] == "csv_import"
    assert all("diagnosis" not in f for f in doc["findings"] if f["status"] == "pass")
    FindingsDoc.from_json(outcome.findings_path.read_text())  # a reader validates it
    report = outcome.report_path.read_text()
    assert ("**Diagnosis:** 20 of the 22 (91%) come from source = 'csv_import', which holds 7% of all rows of "
            "contacts") in report
    assert "The 5 orphan rows point to 3 missing customers.id values: 1017 ×2, 1022 ×2, 999 ×1." in report


def test_no_diagnose_leaves_it_out(make_database, tmp_path: Path, run_cli):
    url, suite = _setup(make_database, tmp_path)
    done = run_cli("scan", "--db", url, "--checks", str(suite), "--out", str(tmp_path / "out"), "--no-diagnose")
    assert done.returncode == 1, done.stderr
    doc = json.loads((tmp_path / "out" / "findings.json").read_text())
    assert all("diagnosis" not in f for f in doc["findings"])
    assert "Diagnosis" not in (tmp_path / "out" / "report.md").read_text()


def test_a_spent_budget_or_a_failing_statement_is_recorded_and_the_findings_stay(make_database, tmp_path: Path):
    url, suite = _setup(make_database, tmp_path)
    checks = load_suite(suite).checks
    with Sandbox(url) as box:
        doc = scan(box, checks, sample=0)
        before = [f.to_json_dict() for f in doc.findings]
        diagnose_doc(box, checks, doc, max_statements=2)  # the probe and the failing rows; not the rows statement
        status = next(f for f in doc.findings if f.name == "contacts.status.accepted_values")
        assert status.diagnosis is not None and status.diagnosis["values"][0] == {"value": "Active ", "failing": 5}
        assert "segments" not in status.diagnosis and status.diagnosis["statements"] == 2
        assert status.diagnosis["error"].startswith("not finished: the statement budget")
        email = next(f for f in doc.findings if f.name == "contacts.email.not_null")
        assert any("did not finish" in s for s in sentences(email))

        def broken(sql: str) -> None:
            raise RuntimeError("driver exploded")

        box.on_execute(broken)
        diagnose_doc(box, checks, doc)
    assert all(f.diagnosis == {"error": "the diagnosis failed: driver exploded"}
               for f in doc.findings if f.status != "pass")
    assert [{k: v for k, v in f.to_json_dict().items() if k != "diagnosis"} for f in doc.findings] == before


def test_the_html_report_and_the_email_show_it_in_chromium(make_database, tmp_path: Path):
    from tests.test_dashboard import chromium
    from watchdog.delivery.base import RunPackage
    from watchdog.delivery.email import email_context
    from watchdog.report.html import environment, render_html

    url, suite = _setup(make_database, tmp_path)
    outcome = run_scan(url, [suite], out_dir=tmp_path / "out")
    page = tmp_path / "report.html"
    page.write_text(render_html(outcome.doc), encoding="utf-8")
    dom, _ = chromium(page, tmp_path)
    assert dom.count('class="diagnosis"') == sum(f.status != "pass" for f in outcome.doc.findings)
    assert ("20 of the 22 (91%) come from source = 'csv_import', which holds 7% of all rows of contacts" in dom)
    assert "The 5 orphan rows point to 3 missing customers.id values: 1017 ×2, 1022 ×2, 999 ×1." in dom
    chromium(page, tmp_path, screenshot=tmp_path / "report.png")
    assert (tmp_path / "report.png").stat().st_size > 10_000

    package = RunPackage(run_id="r1", audit="crm", status="failed", run_dir=tmp_path / "out",
                         summary=outcome.doc.summary.to_json_dict(), trends={}, findings_json=outcome.doc.to_json())
    context = email_context(package, outcome.doc, attached=False)
    text = environment().get_template("email.txt.j2").render(context)
    html = environment().get_template("email.html.j2").render(context)
    assert "come from source = 'csv_import'" in text
    assert "come from source = &#39;csv_import&#39;" in html


def test_uniform_random_defects_claim_no_segment_through_the_database(tmp_path: Path):
    """100 checks whose failing rows are drawn at random, on 5 SQLite tables: at most 1 claimed segment."""
    import random
    import sqlite3

    from watchdog.diagnose import diagnose

    rng = random.Random(2024)
    path = tmp_path / "uniform.db"
    conn = sqlite3.connect(path)
    bad = [f"c{k}" for k in range(20)]
    suite = ["tables:"]
    for t in range(5):
        conn.execute(f"CREATE TABLE t{t} (id INTEGER, source TEXT, country TEXT, plan TEXT, tier INTEGER, "
                     + ", ".join(f"{c} TEXT" for c in bad) + ")")
        rates = [rng.choice([0.01, 0.03, 0.1, 0.3]) for _ in bad]
        rows = [(i, rng.choice("abcdefgh"), rng.choice(["DE", "FR", "US", None]), f"p{rng.randrange(12)}",
                 rng.randrange(3), *[None if rng.random() < r else "x" for r in rates]) for i in range(2000)]
        conn.executemany(f"INSERT INTO t{t} VALUES ({', '.join('?' * (5 + len(bad)))})", rows)
        suite += [f"  t{t}:", "    segments: [source, country, plan, tier]", "    checks:"]
        suite += [f"      - not_null: {c}" for c in bad]
    conn.commit()
    conn.close()
    (tmp_path / "suite.yaml").write_text("\n".join(suite) + "\n")
    checks = load_suite(tmp_path / "suite.yaml").checks
    with Sandbox(f"sqlite:///{path}") as box:
        doc = scan(box, checks, sample=0)
        found = diagnose(box, checks, doc.findings)
    assert len(found) == 100 and not [d for d in found.values() if "error" in d]
    assert all(d["segments"] == [] or len(d["segments"]) == 1 for d in found.values())
    assert sum(len(d["segments"]) for d in found.values()) <= 1


def test_the_first_run_of_the_failing_streak():
    from watchdog.diagnose.stage import first_failed_run

    def run(i: int, status: str) -> dict:
        return {"run_id": f"r{i}", "started_at": f"2026-11-{i:02d}T06:00:00Z", "finding": {"status": status}}

    assert first_failed_run([]) is None
    assert first_failed_run([run(1, "fail"), run(2, "pass")]) is None           # this run starts the streak
    assert first_failed_run([run(1, "fail"), run(2, "pass"), run(3, "warn"), run(4, "fail")]) == {
        "run_id": "r3", "at": "2026-11-03T06:00:00Z", "runs": 3}
