"""Suite folders are read at any depth in a stated order; a scan with no check at all is an error unless
allowed; ``check-config`` reads the suites of one scan together (duplicate names across files, empty folders).
Real CLI, real SQLite and PostgreSQL databases."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.dbs import TestDatabase
from watchdog.run.audit import execute_audit
from watchdog.scan.suites import SuiteError, expand_suite_paths, load_suites
from watchdog.settings import load_settings


def _write(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    return path


@pytest.fixture(params=["sqlite", "postgresql"])
def shop(request, make_database) -> TestDatabase:
    db = make_database(request.param)
    db.create_table("orders", {"id": "int", "email": "text"}, [(1, "a@x.io"), (2, None)])
    db.create_table("customers", {"id": "int"}, [(1,), (2,)])
    return db


def test_a_folder_is_read_at_any_depth_in_the_order_of_its_relative_paths(tmp_path, run_cli, shop):
    checks = tmp_path / "checks"
    _write(checks / "sales" / "orders.yaml", "tables:\n  orders:\n    - not_null: email\n")
    _write(checks / "sales" / "deep" / "more.yml", "tables:\n  orders:\n    - unique: id\n")
    _write(checks / "customers.yaml", "tables:\n  customers:\n    - unique: id\n")
    _write(checks / "z.yaml", "tables:\n  customers:\n    - row_count: {min: 1}\n")
    _write(checks / ".hidden" / "x.yaml", "tables:\n  nowhere:\n    - not_null: x\n")  # skipped
    _write(checks / ".#draft.yaml", "not: [valid")  # an editor's lock file: skipped
    _write(checks / "notes.txt", "not a suite")

    assert [p.relative_to(checks).as_posix() for p in expand_suite_paths([checks])] == [
        "customers.yaml", "sales/deep/more.yml", "sales/orders.yaml", "z.yaml"]

    out = tmp_path / "out"
    result = run_cli("scan", "--db", shop.url, "--checks", str(checks), "--out", str(out))
    assert result.returncode == 1, result.stderr  # orders.email has a NULL
    doc = json.loads((out / "findings.json").read_text())
    assert [f["name"] for f in doc["findings"]] == [
        "customers.id.unique", "orders.id.unique", "orders.email.not_null", "customers.row_count"]
    assert [Path(s).name for s in doc["suites"]] == ["customers.yaml", "more.yml", "orders.yaml", "z.yaml"]


def test_a_file_given_twice_or_inside_a_given_folder_is_read_once(tmp_path):
    checks = tmp_path / "checks"
    suite = _write(checks / "sales" / "orders.yaml", "tables:\n  orders:\n    - not_null: email\n")
    suites = load_suites([suite, checks, checks / "sales"])
    assert [s.path for s in suites] == [suite]


def test_a_scan_of_an_empty_folder_is_an_error_unless_allowed(tmp_path, run_cli, shop):
    empty = tmp_path / "empty"
    (empty / "sub").mkdir(parents=True)
    result = run_cli("scan", "--db", shop.url, "--checks", str(empty), "--out", str(tmp_path / "o1"))
    assert result.returncode == 3
    assert "nothing to check" in result.stderr and f"no *.yaml or *.yml file in {empty}" in result.stderr
    assert "--allow-empty" in result.stderr
    assert not (tmp_path / "o1").exists()  # refused before any query

    result = run_cli("scan", "--db", shop.url, "--checks", str(empty), "--out", str(tmp_path / "o2"),
                     "--allow-empty")
    assert result.returncode == 0, result.stderr
    assert json.loads((tmp_path / "o2" / "findings.json").read_text())["summary"]["checks"] == 0


def test_suites_that_all_allow_being_empty_may_make_an_empty_scan(tmp_path, run_cli, shop):
    suite = _write(tmp_path / "later.yaml", "allow_empty: true\ntables: {}\n")
    result = run_cli("scan", "--db", shop.url, "--checks", str(suite), "--out", str(tmp_path / "o"))
    assert result.returncode == 0, result.stderr


def test_check_config_fails_on_an_empty_folder(tmp_path, run_cli):
    (tmp_path / "empty").mkdir()
    result = run_cli("check-config", "--checks", "empty")
    assert result.returncode == 3
    assert "nothing to check: no *.yaml or *.yml file in empty" in result.stderr
    assert "ok:" not in result.stdout
    assert run_cli("check-config", "--checks", "empty", "--allow-empty").returncode == 0


def test_check_config_finds_duplicate_names_across_files_with_both_places(tmp_path, run_cli):
    _write(tmp_path / "a.yaml", "tables:\n  orders:\n    - unique: id\n    - not_null: email\n")
    _write(tmp_path / "b.yaml", "tables:\n  customers:\n    - unique: id\n  orders:\n    - not_null: email\n")
    result = run_cli("check-config", "--checks", "a.yaml", "b.yaml")
    assert result.returncode == 3, result.stdout
    assert ("b.yaml:5: orders.email.not_null: two checks are named 'orders.email.not_null' "
            "(the other one is at a.yaml:4)") in result.stderr
    assert "orders.id.unique" not in result.stderr  # customers.id.unique is another name
    assert "ok:" not in result.stdout


def test_an_audit_with_no_check_is_an_error_run_unless_allowed(tmp_path, make_database):
    db = make_database("sqlite")
    db.create_table("orders", {"id": "int"}, [(1,)])
    root = tmp_path / "project"
    (root / "checks" / "shop").mkdir(parents=True)

    def settings(allow: bool):
        config = _write(root / "config" / "watchdog.yaml", f"""\
base_dir: ..
databases:
  shop: {{url: "{db.url}"}}
history: {{url: "sqlite:///history.db"}}
audits:
  shop:
    database: shop
    checks: [checks/shop]
    allow_empty: {str(allow).lower()}
""")
        return load_settings(config)

    with pytest.raises(SuiteError, match="nothing to check"):
        execute_audit(settings(False), "shop")
    run = execute_audit(settings(True), "shop")
    assert run.status == "passed" and run.scan is not None and run.scan.doc.summary.checks == 0
