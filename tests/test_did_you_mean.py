"""Errors that say what to do: the common ``postgres://`` spelling works, a bare file path is told the URL to
write, and a typo in a table, column or option name gets the closest name the catalogue or the check type has.
Real SQLite, PostgreSQL and MariaDB through the CLI."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from watchdog.errors import closest, did_you_mean


def _suite(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "suite.yaml"
    path.write_text(text)
    return path


def _errors(out: Path) -> list[str]:
    return [f.get("error") or "" for f in json.loads((out / "findings.json").read_text())["findings"]]


def test_one_similarity_rule():
    assert closest("Emial", ["id", "Email", "name"]) == "Email"
    assert closest("RAYYAN", ["rayyan_dirty", "orders"]) == "rayyan_dirty"
    assert did_you_mean("max_cnt", ["max_count", "severity"]) == " (did you mean 'max_count'?)"
    assert did_you_mean("zzz", ["max_count"]) == ""


def test_a_table_typo_names_the_closest_table(database, run_cli, tmp_path):
    database.create_table("rayyan_dirty", {"id": "int", "Email": "text"}, [(1, "a@x.io"), (2, None)])
    suite = _suite(tmp_path, "tables:\n  rayyan:\n    - not_null: Email\n")
    result = run_cli("scan", "--db", database.url, "--checks", str(suite), "--out", str(tmp_path / "o"))
    assert result.returncode == 3, result.stderr
    [error] = _errors(tmp_path / "o")
    assert "(did you mean 'rayyan_dirty'?)" in error, error


def test_a_column_typo_names_the_closest_column(database, run_cli, tmp_path):
    database.create_table("contacts", {"id": "int", "Email": "text"}, [(1, "a@x.io"), (2, None)])
    suite = _suite(tmp_path, "tables:\n  contacts:\n    - not_null: Emial\n    - unique: [id, Emial]\n"
                             "    - not_null: id\n")
    result = run_cli("scan", "--db", database.url, "--checks", str(suite), "--out", str(tmp_path / "o"))
    assert result.returncode == 3, result.stderr
    errors = _errors(tmp_path / "o")
    assert sum("(did you mean 'Email'?)" in e for e in errors) == 2, errors  # not_null and unique
    assert errors.count("") == 1  # not_null on id ran


def test_an_option_typo_names_the_option(run_cli, tmp_path):
    suite = _suite(tmp_path, "tables:\n  t:\n    - not_null: {column: a, max_cnt: 3}\n")
    result = run_cli("check-config", "--checks", str(suite))
    assert result.returncode == 3
    assert "unknown option 'max_cnt' (did you mean 'max_count'?)" in result.stderr, result.stderr


def test_postgres_scheme_is_read_as_postgresql(make_database, run_cli, tmp_path):
    db = make_database("postgresql")
    db.create_table("items", {"id": "int"}, [(1,), (None,)])
    url = db.url.replace("postgresql+psycopg://", "postgres://")
    suite = _suite(tmp_path, "tables:\n  items:\n    - not_null: id\n")
    result = run_cli("scan", "--db", url, "--checks", str(suite), "--out", str(tmp_path / "o"))
    assert result.returncode == 1, result.stderr  # connected, and found the NULL
    doc = json.loads((tmp_path / "o" / "findings.json").read_text())
    assert doc["findings"][0]["failing"] == 1
    assert doc["database"].startswith("postgresql://")


@pytest.mark.parametrize("name, scheme", [("shop.sqlite", "sqlite"), ("lake.duckdb", "duckdb")])
def test_a_bare_file_path_is_told_the_url(run_cli, tmp_path, name, scheme):
    (tmp_path / name).write_bytes(b"")
    suite = _suite(tmp_path, "tables:\n  t:\n    - not_null: a\n")
    (tmp_path / "watchdog.yaml").write_text("databases:\n  crm: {url: 'sqlite:///crm.db'}\n")
    result = run_cli("scan", "--db", f"./{name}", "--checks", str(suite), "--config", "watchdog.yaml")
    assert result.returncode == 3
    assert f"write {scheme}:///{name} (a URL)" in result.stderr, result.stderr
    missing = run_cli("scan", "--db", "./nothing.sqlite", "--checks", str(suite), "--config", "watchdog.yaml")
    assert "no database named './nothing.sqlite' (configured: crm)" in missing.stderr
    assert "a URL" not in missing.stderr  # no hint for a path that is not there
