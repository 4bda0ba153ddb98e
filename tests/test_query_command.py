"""``watchdog query``: values print as data, JSON keeps duplicate columns, the statement may come from a
file or standard input, and the allowlist refuses server-file reads through the real CLI."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

MARKUP = "[bold]x[/bold] :x: [link=http://e.x]y[/link]"


@pytest.fixture
def sqlite_url(make_database) -> str:
    db = make_database("sqlite")
    db.create_table("t", {"id": "int", "s": "text"}, [(1, MARKUP), (2, "[/]")])
    return db.url


def test_values_and_headers_print_literally_never_as_markup(run_cli, sqlite_url):
    result = run_cli("query", "--db", sqlite_url, f"SELECT '{MARKUP}' AS \"[red]h[/red]\"")
    assert result.returncode == 0, result.stderr
    assert MARKUP in result.stdout and "[red]h[/red]" in result.stdout
    closing = run_cli("query", "--db", sqlite_url, "SELECT '[/]' AS v")
    assert closing.returncode == 0, closing.stderr
    assert "[/]" in closing.stdout and "MarkupError" not in closing.stderr
    rows = run_cli("query", "--db", sqlite_url, "SELECT s FROM t ORDER BY id")
    assert MARKUP in rows.stdout and "[/]" in rows.stdout


def test_json_keeps_duplicate_column_names(run_cli, sqlite_url):
    result = run_cli("query", "--db", sqlite_url, "--json", "SELECT 1 AS a, 2 AS a, s FROM t WHERE id = 2")
    assert result.returncode == 0, result.stderr
    assert json.loads(result.stdout) == {"columns": ["a", "a", "s"], "rows": [[1, 2, "[/]"]], "truncated": False}


def test_statement_from_a_file_stdin_or_after_double_dash(run_cli, sqlite_url, tmp_path):
    sql_file = tmp_path / "count.sql"
    sql_file.write_text("-- how many rows\nSELECT count(*) AS n FROM t\n", encoding="utf-8")
    from_file = run_cli("query", "--db", sqlite_url, "--file", str(sql_file), "--json")
    assert from_file.returncode == 0, from_file.stderr
    assert json.loads(from_file.stdout)["rows"] == [[2]]
    piped = subprocess.run([sys.executable, "-m", "watchdog", "query", "--db", sqlite_url, "--json", "-"],
                           input="/* note */ SELECT max(id) AS m FROM t", capture_output=True, text=True, timeout=60)
    assert piped.returncode == 0, piped.stderr
    assert json.loads(piped.stdout)["rows"] == [[2]]
    dashed = run_cli("query", "--db", sqlite_url, "--json", "--", "-- leading comment\nSELECT min(id) FROM t")
    assert dashed.returncode == 0, dashed.stderr
    assert json.loads(dashed.stdout)["rows"] == [[1]]


@pytest.mark.parametrize("args", [(), ("SELECT 1", "--file", "x.sql")])
def test_no_statement_or_two_statements_is_a_usage_error(run_cli, sqlite_url, tmp_path, args):
    (tmp_path / "x.sql").write_text("SELECT 1")
    result = run_cli("query", "--db", sqlite_url, *args)
    assert result.returncode == 3 and result.stderr.startswith("error: ")


def test_postgres_old_file_read_alias_is_refused_by_the_cli(run_cli, make_database):
    db = make_database("postgresql")
    result = run_cli("query", "--db", db.url, "SELECT pg_read_file_old('/etc/passwd',0,200)")
    assert result.returncode == 3
    assert result.stderr == "refused: function 'pg_read_file_old' is not allowed\n"
    assert "root:" not in result.stdout


@pytest.mark.parametrize(("kind", "sql", "message"), [
    ("postgresql", "SELECT * FROM pg_hba_file_rules", "reading 'pg_hba_file_rules' is not allowed"),
    ("postgresql", "SELECT setseed(0.5)", "function 'setseed' is not allowed"),
    ("mariadb", "SELECT @@global.max_connections", "@@global variables are not allowed"),
    ("mariadb", "SELECT LOAD_FILE('/etc/passwd')", "function 'load_file' is not allowed"),
    ("sqlite", "SELECT changes()", "function 'changes' is not allowed"),
])
def test_state_and_file_reads_are_refused_on_each_database(run_cli, make_database, kind, sql, message):
    db = make_database(kind)
    db.create_table("t", {"id": "int"}, [(1,)])
    result = run_cli("query", "--db", db.url, sql)
    assert result.returncode == 3
    assert result.stderr == f"refused: {message}\n"
