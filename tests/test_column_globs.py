"""Column globs and lists: one check per matching column, on SQLite, PostgreSQL, MariaDB and DuckDB alike.

The expected figures are worked out by hand from ROWS; a glob that matches no column is an error (file:line and
the table's columns) in ``scan`` and in ``check-config --db`` alike, and the other checks still run.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from tests.dbs import KINDS
from watchdog.sandbox import Sandbox
from watchdog.scan.scanner import scan
from watchdog.scan.suites import SuiteError, load_suites

ENGINES = (*KINDS, "duckdb")
REPO = Path(__file__).resolve().parent.parent

# id, code_a, code_b, label
ROWS = [(1, "-x", "ok", "-a"), (2, "ok", None, "fine"), (3, "ok", "-*", "x")]

SUITE = r"""
tables:
  items:
    - pattern: {column: 'code_*', regex: '^-\*', match: false}
    - not_null: {column: '*'}
    - accepted_values: {column: [code_a, code_b], values: ['ok', '-x']}
    - pattern: {column: '*', regex: '^-', match: false, name: 'dash_{column}'}
    - range: {column: 'nothing_*', min: 0}
    - unique: {column: 'code_?'}
"""

EXPECTED = {
    "items.code_a.pattern": ("pass", 0), "items.code_b.pattern": ("fail", 1),  # only code_b holds '-*'
    "items.id.not_null": ("pass", 0), "items.code_a.not_null": ("pass", 0), "items.code_b.not_null": ("fail", 1),
    "items.label.not_null": ("pass", 0),
    "items.code_a.accepted_values": ("pass", 0), "items.code_b.accepted_values": ("fail", 1),  # '-*'
    "dash_id": ("pass", 0), "dash_code_a": ("fail", 1), "dash_code_b": ("fail", 1), "dash_label": ("fail", 1),
    "items.nothing_*.range": ("error", None),
    "items.code_a.unique": ("fail", 2), "items.code_b.unique": ("pass", 0),  # 'ok' twice in code_a
}


def write(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "suite.yaml"
    path.write_text(text, encoding="utf-8")
    return path


def load(kind, make_database):
    db = make_database(kind)
    db.create_table("items", {"id": "int", "code_a": "text", "code_b": "text", "label": "text"}, ROWS)
    return db


@pytest.mark.parametrize("kind", ENGINES)
def test_globs_and_lists_expand_to_one_check_per_column(kind, make_database, tmp_path):
    db = load(kind, make_database)
    checks = [c for s in load_suites([write(tmp_path, SUITE)]) for c in s.checks]
    with Sandbox(db.url) as box:
        doc = scan(box, checks, sample=0)
    found = {f.name: f for f in doc.findings}
    assert {name: (f.status, f.failing) for name, f in found.items()} == EXPECTED
    assert list(found)[:2] == ["items.code_a.pattern", "items.code_b.pattern"]  # in the suite's, then the table's order
    error = found["items.nothing_*.range"].error
    assert "suite.yaml:8" in error and "matches no column of table 'items'" in error
    assert "its columns: id, code_a, code_b, label" in error
    assert found["items.code_b.pattern"].column == "code_b" and found["items.code_b.pattern"].params["column"] == \
        "code_b"


def check_config(*args: str, cwd: Path) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "watchdog", "check-config", *args], capture_output=True, text=True,
                          cwd=cwd, env={"PYTHONPATH": str(REPO), "PATH": ""})


def test_check_config_with_db_reports_what_scan_would(make_database, tmp_path):
    db = load("sqlite", make_database)
    suite = write(tmp_path, SUITE + "    - not_null: code_a\n")
    run = check_config("--checks", str(suite), "--db", db.url, cwd=tmp_path)
    assert run.returncode == 3, run.stderr
    # the "*" glob of line 5 makes items.code_a.not_null, which line 10 is named too
    assert "suite.yaml:5: column glob '*' makes the check 'items.code_a.not_null' for column 'code_a', but a " \
           "check of that name is also at" in run.stderr and "suite.yaml:10" in run.stderr
    assert "suite.yaml:8: column glob 'nothing_*' matches no column of table 'items'; its columns: id, code_a, " \
           "code_b, label" in run.stderr
    checks = [c for s in load_suites([suite]) for c in s.checks]
    with Sandbox(db.url) as box:
        found = {f.name: f for f in scan(box, checks, sample=0).findings}
    assert found["items.*.not_null"].status == "error" and "suite.yaml:5" in found["items.*.not_null"].error
    assert found["items.code_a.not_null"].status == "pass"  # the check written for the column runs
    without = check_config("--checks", str(suite), cwd=tmp_path)  # no database: the globs cannot be expanded
    assert without.returncode == 0 and "give --db to check that each matches a column" in without.stderr


BAD = [
    ("    - not_null: {column: [a, a]}\n", "listed twice"),
    ("    - not_null: {column: []}\n", "expected column names or globs"),
    ("    - not_null: {column: 'a*', name: mine}\n", "write {column} in it"),
    ("    - not_null: {column: [a, b], name: mine}\n", "write {column} in it"),
    ("    - not_null: [a, b]\n    - not_null: b\n", "two checks are named 't.b.not_null'"),
]


@pytest.mark.parametrize(("check", "said"), BAD)
def test_bad_column_lists_name_file_and_line(check, said, tmp_path):
    with pytest.raises(SuiteError) as caught:
        load_suites([write(tmp_path, "tables:\n  t:\n" + check)])
    assert "suite.yaml:" in str(caught.value) and said in str(caught.value)


@pytest.mark.parametrize("kind", ["sqlite", "postgresql"])
def test_a_glob_judged_per_group(kind, make_database, tmp_path):
    """A glob and group_by together: each column's check is judged per group (code_a: '-x' in group 1 only)."""
    db = load(kind, make_database)
    text = ("tables:\n  items:\n    - pattern: {column: 'code_*', regex: '^-', match: false, "
            "group_by: [id], name: 'dash_{column}_by_id'}\n")
    checks = [c for s in load_suites([write(tmp_path, text)]) for c in s.checks]
    with Sandbox(db.url) as box:
        found = {f.name: f for f in scan(box, checks, sample=0).findings}
    assert [g["group"] for g in found["dash_code_a_by_id"].details["groups"]] == [{"id": 1}]
    assert [g["group"] for g in found["dash_code_b_by_id"].details["groups"]] == [{"id": 3}]
