"""The Python API (``import watchdog``): scan, load_suite, verify, run_audit, Sandbox, the error root --
against real databases, with the secrets given to a call masked in what it returns and raises."""

from __future__ import annotations

import json
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest

import watchdog
from watchdog.run.demo_data import build_demo_database

REPO = Path(__file__).resolve().parent.parent
SUITE_YAML = "tables:\n  people:\n    - not_null: email\n    - unique: id\n"
SECRET = "Hunter2-Secret-99"


@pytest.fixture
def people(tmp_path: Path) -> str:
    db = tmp_path / "people.db"
    conn = sqlite3.connect(db)
    conn.execute("CREATE TABLE people (id INTEGER, email TEXT)")
    conn.executemany("INSERT INTO people VALUES (?, ?)", [(1, "a@x"), (2, None), (2, "b@x"), (3, None)])
    conn.commit()
    conn.close()
    return f"sqlite:///{db}"


def statuses(findings: watchdog.FindingsDoc) -> dict[str, tuple[str, int | None]]:
    return {f.name: (f.status, f.failing) for f in findings.findings}


EXPECTED = {"people.email.not_null": ("fail", 2), "people.id.unique": ("fail", 2)}


def test_scan_takes_a_path_yaml_text_or_a_mapping_and_writes_nothing(people, tmp_path):
    path = tmp_path / "suite.yaml"
    path.write_text(SUITE_YAML)
    before = sorted(p.name for p in tmp_path.iterdir())
    by_path = watchdog.scan(people, path)
    by_text = watchdog.scan(people, SUITE_YAML)
    by_dict = watchdog.scan(people, {"tables": {"people": [{"not_null": "email"}, {"unique": "id"}]}})
    for findings in (by_path, by_text, by_dict):
        assert isinstance(findings, watchdog.Findings) and statuses(findings) == EXPECTED
        assert findings.exit_code() is watchdog.ExitCode.FAILED
    assert by_path.suites == [str(path)] and by_text.suites == ["<suite 1>"]
    assert sorted(p.name for p in tmp_path.iterdir()) == before  # no file written
    several = watchdog.scan(people, [str(path), {"tables": {"people": [{"row_count": {"min": 1}}]}}], sample=0)
    assert len(several.findings) == 3 and all(f.sample == [] for f in several.findings)


def test_sample_and_timeout_are_passed_on(people):
    findings = watchdog.scan(people, SUITE_YAML, sample=1, timeout=7)
    assert [len(f.sample) for f in findings.findings] == [1, 1]


def test_a_bad_suite_raises_one_error_naming_the_place(people, tmp_path):
    with pytest.raises(watchdog.SuiteError) as caught:
        watchdog.scan(people, "tables:\n  people:\n    - not_nul: email\n")
    assert isinstance(caught.value, watchdog.ConfigError) and isinstance(caught.value, watchdog.WatchdogError)
    assert "<suite 1>:3: tables.people[0].not_nul: unknown check type 'not_nul' (did you mean 'not_null'?)" in str(
        caught.value)
    with pytest.raises(watchdog.SuiteError, match="cannot read the file"):
        watchdog.scan(people, tmp_path / "missing.yaml")
    with pytest.raises(watchdog.ConfigError, match="sample"):
        watchdog.scan(people, SUITE_YAML, sample=-1)
    with pytest.raises(watchdog.ConfigError, match="timeout_s"):
        watchdog.scan(people, SUITE_YAML, timeout=0)


def test_load_suite_reads_one_suite():
    for given in (SUITE_YAML, {"tables": {"people": [{"not_null": "email"}, {"unique": "id"}]}}):
        suite = watchdog.load_suite(given)
        assert isinstance(suite, watchdog.Suite)
        assert [c.name for c in suite.checks] == ["people.email.not_null", "people.id.unique"]
    with pytest.raises(watchdog.SuiteError, match="missing required option"):
        watchdog.load_suite({"tables": {"people": [{"pattern": {"column": "email"}}]}})


def test_verify_takes_findings_as_objects_json_or_a_file(people, tmp_path):
    findings = watchdog.scan(people, SUITE_YAML)
    good = "`people.email.not_null` FAIL: 2 of 4 rows.\n\n`people.id.unique` FAIL: 2 of 4 rows.\n"
    path = tmp_path / "findings.json"
    path.write_text(findings.to_json())
    for given in (findings, findings.to_json_dict(), findings.to_json(), path, str(path)):
        assert watchdog.verify(good, given).passed, given
    wrong = watchdog.verify("`people.email.not_null` FAIL: 3 of 4 rows.\n", findings)
    assert isinstance(wrong, watchdog.Verification) and not wrong.passed
    assert any(b.finding == "people.email.not_null" and "3" in b.says for b in wrong.bad)


def test_the_sandbox_is_the_read_only_query_tool(people):
    with watchdog.Sandbox(people, max_rows=10) as box:
        assert box.query("SELECT count(*) FROM people").scalar() == 4
        with pytest.raises(watchdog.QueryRefused):
            box.query("DELETE FROM people")


def test_a_password_given_to_scan_is_masked_in_findings_and_errors(make_database):
    db = make_database("postgresql")
    db.create_table("people", {"id": "int", "email": "text"}, [(1, SECRET), (2, None)])
    url = db.url.replace("postgres@", f"postgres:{SECRET}@", 1)  # the server trusts loopback: any password works
    assert SECRET in url
    suite = {"tables": {"people": [{"not_null": "email"}]},
             "custom_sql": [{"name": "no_secret_rows", "sql": f"SELECT count(*) FROM people WHERE email = '{SECRET}'"}]}
    findings = watchdog.scan(url, suite)
    assert findings.findings[1].failing == 1, findings.findings[1]
    text = findings.to_json()
    assert SECRET not in text and "***" in text          # the custom query quotes it: masked in sql
    assert SECRET not in repr(findings)
    bad = {"tables": {"people": [{SECRET: "email"}]}}  # an error message that quotes the secret
    with pytest.raises(watchdog.SuiteError) as unmasked:
        watchdog.load_suite(bad)
    assert SECRET in str(unmasked.value)  # load_suite was given no secret
    with pytest.raises(watchdog.SuiteError) as caught:
        watchdog.scan(url, bad)
    assert SECRET not in str(caught.value) and "unknown check type '***'" in str(caught.value)
    assert caught.value.__cause__ is None
    assert all(SECRET not in str(p) for p in caught.value.problems)


def test_an_unreachable_database_is_a_finding_error_without_the_password():
    findings = watchdog.scan(f"postgresql://u:{SECRET}@127.0.0.1:1/x", SUITE_YAML, timeout=3)
    assert findings.exit_code() is watchdog.ExitCode.ERROR and findings.error
    assert SECRET not in findings.to_json() and "u:***@127.0.0.1:1" in findings.database


def test_masking_uses_the_call_s_own_secrets_not_the_process_registry():
    from watchdog.api.secrets import CallSecrets

    one = CallSecrets()
    one.add_url("postgresql://reader:Zq9-only-this-call@db/shop?sslpassword=Kx7-param-secret")
    assert one.text("Zq9-only-this-call and Kx7-param-secret") == "*** and ***"
    other = CallSecrets()
    other.add_url("https://hooks.example.com/services/T000/B000/abcdefghijklmnop1234")
    assert other.text("posted to https://hooks.example.com/services/T000/B000/abcdefghijklmnop1234") == "posted to ***"


AUDIT_CONFIG = """\
state_dir: state
history: {url: "sqlite:///history.db"}
databases:
  shop: {url: "sqlite:///people.db"}
audits:
  people:
    database: shop
    checks: [suite.yaml]
    deliver:
      - file: {dir: out}
"""


def test_run_audit_files_records_and_delivers_as_watchdog_run(people, tmp_path):
    (tmp_path / "suite.yaml").write_text(SUITE_YAML)
    config = tmp_path / "watchdog.yaml"
    config.write_text(AUDIT_CONFIG)
    result = watchdog.run_audit("people", config=config)
    assert isinstance(result, watchdog.RunResult)
    assert result.status == "failed" and result.exit_code is watchdog.ExitCode.FAILED
    assert result.findings is not None and statuses(result.findings) == EXPECTED
    assert sorted(p.name for p in result.run_dir.iterdir()) == ["audit.json", "findings.json", "report.html",
                                                                 "report.md"]
    assert json.loads((result.run_dir / "audit.json").read_text())["status"] == "failed"
    assert [d["channel"] for d in result.deliveries] == ["file"]
    from watchdog.history import HistoryStore

    store = HistoryStore(f"sqlite:///{tmp_path / 'history.db'}")
    try:
        assert store.get_run(result.run_id).status == "failed"
    finally:
        store.close()
    with pytest.raises(watchdog.ConfigError, match="nightly"):
        watchdog.run_audit("nightly", config=config)


DEMO_RUN_SPECIFIC = ("run_id", "started_at", "duration_s")


def comparable(doc: dict) -> dict:
    """findings.json without what differs between two runs of the same scan: the run's id, start time and
    duration, and the ages freshness checks measure (they grow with the clock)."""
    out = {k: v for k, v in doc.items() if k not in DEMO_RUN_SPECIFIC}
    findings = []
    for finding in doc["findings"]:
        if finding["check"] == "freshness":
            finding = {**finding, "observed": None, "details": {k: v for k, v in finding["details"].items()
                                                                if "age" not in k}}
        findings.append(finding)
    out["findings"] = findings
    return out


def test_the_cli_and_the_api_give_the_same_findings_json_for_the_demo(tmp_path):
    build_demo_database(tmp_path / "crm.db")
    url = f"sqlite:///{tmp_path / 'crm.db'}"
    suite = REPO / "checks" / "demo_crm.yaml"
    cli = subprocess.run([sys.executable, "-m", "watchdog", "scan", "--db", url, "--checks", str(suite),
                          "--out", str(tmp_path / "out")], capture_output=True, text=True, timeout=120, cwd=tmp_path)
    assert cli.returncode == int(watchdog.ExitCode.FAILED), cli.stderr
    from_cli = json.loads((tmp_path / "out" / "findings.json").read_text())
    from_api = json.loads(watchdog.scan(url, suite).to_json())
    assert len(from_api["findings"]) == len(from_cli["findings"]) > 10
    assert comparable(from_cli) == comparable(from_api)
    assert from_cli.keys() == from_api.keys()


def test_import_watchdog_stays_cheap_and_exports_the_api():
    code = ("import sys, watchdog; loaded = sorted(m for m in sys.modules if m.startswith('watchdog'));"
            "print(loaded); print(sorted(n for n in watchdog.__all__ if not n.startswith('_')))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout.splitlines()
    assert out[0] == "['watchdog']"
    names = set(eval(out[1]))  # noqa: S307 (our own print)
    assert {"scan", "run_audit", "load_suite", "Sandbox", "verify", "Findings", "Finding", "Summary", "ExitCode",
            "WatchdogError", "RunResult", "Verification"} <= names
    for name in names:
        assert getattr(watchdog, name) is not None


def test_scan_and_verify_are_callable_whatever_imported_their_packages_first():
    import watchdog.scan.scanner
    import watchdog.verify.walk

    assert callable(watchdog.scan) and callable(watchdog.verify)
    assert watchdog.scan.scanner.scan is watchdog.scan.scanner.scan  # the subpackages are still reachable
    from watchdog import scan, verify

    assert scan is watchdog.scan and verify is watchdog.verify
