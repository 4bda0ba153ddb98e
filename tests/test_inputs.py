"""Inputs that used to lose work or mislead (issue 11, section 4): each case runs the real CLI or the
real scanner against real databases."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.dbs import TestDatabase
from watchdog.cli.console import summary_table
from watchdog.findings import FindingsDoc, jsonable
from watchdog.report.escape import plain_text
from watchdog.sandbox import Sandbox
from watchdog.scan.scanner import scan
from watchdog.scan.suites import SuiteError, load_suites
from watchdog.trends import MARGIN, compare


def _suite(tmp_path: Path, text: str, name: str = "suite.yaml") -> Path:
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    return path


@pytest.fixture
def sqlite_db(make_database) -> TestDatabase:
    db = make_database("sqlite")
    db.create_table("people", {"id": "int", "email": "text"}, [(1, "a@x.io"), (2, None), (3, None)])
    return db


# ---------------------------------------------------------------- --out


def test_out_under_a_file_is_refused_before_any_query(run_cli, sqlite_db, tmp_path):
    suite = _suite(tmp_path, "tables:\n  people:\n    - not_null: email\n")
    blocker = tmp_path / "taken"
    blocker.write_text("a file, not a folder")
    started = time.monotonic()
    result = run_cli("scan", "--db", sqlite_db.url, "--checks", str(suite), "--out", str(blocker / "run"))
    assert result.returncode == 3
    assert result.stderr.startswith("error: cannot write the output folder")
    assert "which is a file" in result.stderr and "unexpected" not in result.stderr
    assert time.monotonic() - started < 60
    assert blocker.read_text() == "a file, not a folder"


def test_findings_are_rescued_when_the_folder_cannot_be_written(sqlite_db, tmp_path, monkeypatch):
    from watchdog.run import filing, scan_run
    from watchdog.run.safe_write import OutputError

    suite = _suite(tmp_path, "tables:\n  people:\n    - not_null: email\n")
    out = tmp_path / "out"
    real_write = filing.write_atomic

    def write(path: Path, text: str) -> Path:  # the chosen folder fails after the scan (as a full disk would)
        if path.parent == out:
            raise OSError(28, "No space left on device")
        return real_write(path, text)

    monkeypatch.setattr(filing, "write_atomic", write)
    with pytest.raises(OutputError) as caught:
        scan_run.run_scan(sqlite_db.url, [suite], out_dir=out)
    rescued = caught.value.rescued
    assert rescued is not None and str(rescued) in str(caught.value)
    assert "No space left on device" in str(caught.value)
    assert FindingsDoc.load(rescued).findings[0].failing == 2


# ---------------------------------------------------------------- Ctrl-C


def test_ctrl_c_keeps_finished_checks_and_exits_130(sqlite_db, tmp_path):
    # `people` is scanned first (one quick batch); the custom query then runs for about a minute
    slow = ("WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 400000000) "
            "SELECT count(*) - count(*) FROM n")
    suite = _suite(tmp_path, f"tables:\n  people:\n    - not_null: email\ncustom_sql:\n  - name: slow\n"
                             f"    sql: \"{slow}\"\n")
    out = tmp_path / "out"
    proc = subprocess.Popen([sys.executable, "-m", "watchdog", "scan", "--db", sqlite_db.url, "--checks", str(suite),
                             "--out", str(out), "--timeout", "120"], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            text=True, cwd=tmp_path)
    try:
        time.sleep(6)  # start-up, the quick batch, then well into the slow query
        assert proc.poll() is None, proc.communicate()
        os.kill(proc.pid, signal.SIGINT)
        _, err = proc.communicate(timeout=60)
    finally:
        if proc.poll() is None:
            proc.kill()
    assert proc.returncode == 130, err
    assert "interrupted" in err and str(out / "findings.json") in err
    doc = json.loads((out / "findings.json").read_text())
    by_name = {f["name"]: f for f in doc["findings"]}
    assert by_name["people.email.not_null"]["status"] == "fail" and by_name["people.email.not_null"]["failing"] == 2
    assert by_name["slow"]["status"] == "error" and by_name["slow"]["error"].startswith("not run")
    assert doc["error"].startswith("interrupted")


# ---------------------------------------------------------------- empty suites


def test_an_empty_suite_is_an_error_unless_allowed(run_cli, sqlite_db, tmp_path):
    empty = _suite(tmp_path, "tables: {}\n")
    result = run_cli("scan", "--db", sqlite_db.url, "--checks", str(empty), "--out", str(tmp_path / "o1"))
    assert result.returncode == 3
    assert f"{empty}:1: the suite has no checks" in result.stderr and "allow_empty: true" in result.stderr
    allowed = _suite(tmp_path, "allow_empty: true\ntables: {}\n", "allowed.yaml")
    result = run_cli("scan", "--db", sqlite_db.url, "--checks", str(allowed), "--out", str(tmp_path / "o2"))
    assert result.returncode == 0, result.stderr
    bad = _suite(tmp_path, "allow_empty: maybe\ntables: {}\n", "bad.yaml")
    with pytest.raises(SuiteError, match="allow_empty: expected true or false"):
        load_suites([bad])


# ---------------------------------------------------------------- URLs and names


@pytest.mark.parametrize("url, expected", [
    ("foo://u@h/x", "unknown database kind 'foo'"),
    ("postgresql+nodriver://u@h/x", "the driver 'nodriver' for postgresql is not installed"),
])
def test_unknown_dialect_is_a_clear_message(run_cli, tmp_path, url, expected):
    suite = _suite(tmp_path, "tables:\n  t:\n    - not_null: a\n")
    scanned = run_cli("scan", "--db", url, "--checks", str(suite), "--out", str(tmp_path / "o"))
    queried = run_cli("query", "--db", url, "SELECT 1")
    # a scan says it as its error (findings.json and report.md written, the check not run); query in one line
    assert json.loads((tmp_path / "o" / "findings.json").read_text())["error"].startswith(
        "database unavailable: " + expected)
    for result, prefix in ((scanned, "error: database unavailable: "), (queried, "error: ")):
        assert result.returncode == 3
        assert result.stderr.startswith(prefix + expected), result.stderr
        assert "NoSuchModuleError" not in result.stderr


def test_a_table_whose_name_has_a_dot_is_written_in_double_quotes(database, tmp_path):
    database.create_table("daily.events", {"id": "int", "parent": "int"}, [(1, None), (2, 1), (3, 9)])
    suite = _suite(tmp_path, "tables:\n  '\"daily.events\"':\n    - not_null: parent\n    - unique: id\n"
                             "    - foreign_key: {column: parent, references: '\"daily.events\".id'}\n")
    [suite_obj] = load_suites([suite])
    with Sandbox(database.url) as box:
        doc = scan(box, suite_obj.checks)
    by_check = {f.check: f for f in doc.findings}
    assert [f.status for f in doc.findings if f.status == "error"] == [], [f.error for f in doc.findings]
    assert by_check["not_null"].failing == 1 and by_check["unique"].failing == 0
    assert by_check["foreign_key"].failing == 1


@pytest.mark.parametrize("name, message", [
    ("a..b", "empty part in 'a..b'"),
    ("a.b.c.d", "has 4 dotted parts"),
    ('"open', "unclosed double quote"),
])
def test_bad_table_names_are_suite_errors(tmp_path, name, message):
    suite = _suite(tmp_path, f"tables:\n  '{name}':\n    - not_null: a\n")
    with pytest.raises(SuiteError) as caught:
        load_suites([suite])
    [problem] = caught.value.problems
    assert problem.line == 2 and "invalid table name" in problem.message and message in problem.message


# ---------------------------------------------------------------- trends


def _finding(name: str, status: str, **figures: object) -> dict:
    return {"name": name, "check": figures.pop("check", "not_null"), "status": status, **figures}


def test_a_first_run_has_no_marks_and_says_so(tmp_path):
    from watchdog.report import render_markdown

    current = [_finding("a", "fail", failing=3), _finding("b", "pass", failing=0)]
    assert compare(current, None) == {} and compare(current, []) == {}
    doc = FindingsDoc(database="sqlite:///x", started_at="2026-01-01T00:00:00Z", duration_s=0.1,
                      summary={"checks": 0}, findings=[])
    text = render_markdown(doc, trends={})
    assert "no previous run to compare with" in text and "UNCHANGED" not in text and "| Change |" not in text


def test_freshness_on_identical_data_is_unchanged_however_much_it_aged():
    newest = {"newest": "2026-01-01T00:00:00+00:00"}
    before = _finding("f", "fail", check="freshness", observed=90_000, details=newest)
    later = _finding("f", "fail", check="freshness", observed=90_600, details=newest)
    assert compare([later], [before]) == {"f": "unchanged"}
    older = _finding("f", "fail", check="freshness", observed=80_000, details={"newest": "2025-12-31T00:00:00+00:00"})
    assert compare([older], [before]) == {"f": "worse"}


def test_a_measurement_moves_only_by_more_than_the_margin():
    # a freshness finding recorded without its newest value (older history) falls back to the age
    before = _finding("c", "fail", check="freshness", observed=100.0)
    small = _finding("c", "fail", check="freshness", observed=100.0 * (1 + MARGIN) - 1)
    big = _finding("c", "fail", check="freshness", observed=100.0 * (1 + 2 * MARGIN))
    assert compare([small], [before]) == {"c": "unchanged"}
    assert compare([big], [before]) == {"c": "worse"}
    # failing-row counts are exact: one more row is worse
    assert compare([_finding("n", "fail", failing=101)], [_finding("n", "fail", failing=100)]) == {"n": "worse"}


# ---------------------------------------------------------------- what the output says


def test_summary_table_shows_thresholds(sqlite_db, tmp_path):
    from rich.console import Console

    suite = _suite(tmp_path, "tables:\n  people:\n    - not_null: email\n      max_count: 5\n"
                             "    - not_null: email\n      name: rated\n      max_rate: 0.7\n")
    [s] = load_suites([suite])
    with Sandbox(sqlite_db.url) as box:
        doc = scan(box, s.checks)
    console = Console(width=200, record=True)
    console.print(summary_table(doc))
    text = console.export_text()
    assert "2 (max 5)" in text and "2 (max 70%)" in text


def test_a_long_value_shows_its_real_length():
    value = "x" * 5_000_000
    assert plain_text(jsonable(value, 200)).endswith("(5,000,000 chars in all)")
    assert plain_text("y" * 130).endswith("(130 chars in all)")


def test_check_config_with_checks_only_validates_what_was_asked(run_cli, tmp_path):
    suite = _suite(tmp_path, "tables:\n  people:\n    - not_null: email\n")
    # a broken default configuration in the working folder must not be read
    (tmp_path / "config").mkdir()
    (tmp_path / "config" / "watchdog.yaml").write_text("audits: [broken\n")
    result = run_cli("check-config", "--checks", str(suite))
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "ok: 1 suites, 1 checks"


def test_check_config_warns_about_double_quotes_in_where(run_cli, tmp_path):
    suite = _suite(tmp_path, "tables:\n  people:\n    - not_null: email\n"
                             "      where: \"\\\"status\\\" = 'active'\"\n")
    result = run_cli("check-config", "--checks", str(suite))
    assert result.returncode == 0, result.stderr
    assert f"warning: {suite}:3: people.email.not_null: where: \"status\" is a column" in result.stderr
    assert "MySQL/MariaDB" in result.stderr


def test_compound_unique_accepts_columns(database, tmp_path):
    database.create_table("pairs", {"a": "int", "b": "text"}, [(1, "x"), (1, "x"), (2, "x")])
    suite = _suite(tmp_path, "tables:\n  pairs:\n    - unique: {columns: [a, b], max_count: 0}\n"
                             "    - unique: {column: [a, b], name: old_form}\n")
    [s] = load_suites([suite])
    with Sandbox(database.url) as box:
        doc = scan(box, s.checks)
    new, old = doc.findings
    assert new.name == "pairs.a+b.unique" and new.columns == ["a", "b"] and "columns" not in new.params
    assert (new.failing, old.failing) == (2, 2)
    both = _suite(tmp_path, "tables:\n  pairs:\n    - unique: {column: a, columns: [a, b]}\n", "both.yaml")
    with pytest.raises(SuiteError, match="not both"):
        load_suites([both])
