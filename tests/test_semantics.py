"""One meaning on every database (issue 11, section 3): the same suite over the same rows gives the
same findings on SQLite, PostgreSQL and MariaDB, or the same clear error. Expected numbers are worked
out by hand from the rows in each test."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.dbs import TestDatabase
from watchdog.findings import Finding
from watchdog.sandbox import Sandbox
from watchdog.scan.scanner import scan
from watchdog.scan.suites import SuiteError, load_suites
from watchdog.scan.where_lint import where_warnings


def run(database: TestDatabase, tmp_path: Path, suite: str) -> dict[str, Finding]:
    path = tmp_path / "suite.yaml"
    path.write_text(suite, encoding="utf-8")
    [loaded] = load_suites([path])
    with Sandbox(database.url) as box:
        doc = scan(box, loaded.checks, sample=0)
    return {f.name: f for f in doc.findings}


def test_foreign_key_compares_exactly(database, tmp_path):
    database.create_table("parents", {"code": "text"}, [("a",), ("b",)])
    # 'A' and 'a ' are not 'a' (MariaDB's default collation said they were); NULL is not an orphan
    database.create_table("children", {"id": "int", "code": "text"},
                          [(1, "a"), (2, "A"), (3, "a "), (4, "b"), (5, None)])
    found = run(database, tmp_path,
                "tables:\n  children:\n    - foreign_key: {column: code, references: parents.code}\n")
    f = found["children.code.foreign_key"]
    assert (f.status, f.failing, f.total) == ("fail", 2, 5)


def test_range_with_numbers_on_a_text_column_is_the_same_error_everywhere(database, tmp_path):
    database.create_table("m", {"id": "int", "score": "text", "n": "int"},
                          [(1, "5", 5), (2, "50", 50), (3, "500", 500), (4, "abc", 7)])
    found = run(database, tmp_path, "tables:\n  m:\n    - range: {column: score, min: 0, max: 100}\n"
                                    "    - range: {column: n, min: 0, max: 100}\n"
                                    "    - range: {column: n, min: '0', name: text_bound_on_number}\n")
    bad = found["m.score.range"]
    assert bad.status == "error" and bad.failing is None
    assert "the types disagree" in bad.error and "'score'" in bad.error and "(text)" in bad.error
    assert (found["m.n.range"].status, found["m.n.range"].failing) == ("fail", 1)
    text_bound = found["text_bound_on_number"]
    assert text_bound.status == "error" and "the types disagree" in text_bound.error


def test_range_with_dates_compares_dates_or_iso_text(database, tmp_path):
    # a timestamp column (TEXT holding ISO timestamps on SQLite)
    database.create_table("ev", {"id": "int", "at": "timestamp"},
                          [(1, "2024-01-01 00:00:00"), (2, "2024-06-30 12:00:00"), (3, "2025-01-01 00:00:00")])
    found = run(database, tmp_path, "tables:\n  ev:\n    - range: {column: at, min: 2024-01-01, max: 2024-12-31}\n")
    f = found["ev.at.range"]
    assert (f.status, f.failing, f.total) == ("fail", 1, 3)


def test_accepted_values_numbers_on_a_text_column_compare_as_text(database, tmp_path):
    database.create_table("z", {"id": "int", "code": "text", "n": "int"},
                          [(1, "1", 1), (2, "01", 2), (3, "2", 3), (4, "x", 1), (5, "2.5", 2)])
    found = run(database, tmp_path, "tables:\n  z:\n    - accepted_values: {column: code, values: [1, 2, 2.5]}\n"
                                    "    - accepted_values: {column: n, values: [1, 2]}\n"
                                    "    - accepted_values: {column: n, values: ['1', '2'], name: text_on_number}\n"
                                    "    - accepted_values: {column: code, values: [true], name: bool_on_text}\n")
    # '01' and 'x' are not the text of 1, 2 or 2.5 (MariaDB compared '01' = 1 as numbers)
    assert (found["z.code.accepted_values"].status, found["z.code.accepted_values"].failing) == ("fail", 2)
    assert found["z.n.accepted_values"].failing == 1  # n = 3
    for name in ("text_on_number", "bool_on_text"):
        assert found[name].status == "error" and "the types disagree" in found[name].error


@pytest.mark.parametrize("value, status, failing", [("0.016", "error", None), ("3", "fail", 3), ("3.0", "fail", 3)])
def test_custom_sql_counts_must_be_whole_numbers(database, tmp_path, value, status, failing):
    database.create_table("one", {"id": "int"}, [(1,)])
    found = run(database, tmp_path, f"custom_sql:\n  - name: c\n    sql: SELECT {value} FROM one\n")
    assert (found["c"].status, found["c"].failing) == (status, failing)
    if status == "error":
        assert "not a whole number" in found["c"].error and "min:" in found["c"].error


@pytest.mark.parametrize("bounds, status", [("max: 0.01", "fail"), ("max: 0.02", "pass"), ("min: 0.02", "fail"),
                                            ("{min: 0.01, max: 0.02}", "pass")])
def test_custom_sql_metric_form_has_real_bounds(database, tmp_path, bounds, status):
    database.create_table("one", {"id": "int"}, [(1,)])
    options = bounds.strip("{}").replace(", ", "\n    ")
    found = run(database, tmp_path, f"custom_sql:\n  - name: rate\n    sql: SELECT 0.016 FROM one\n    {options}\n")
    assert found["rate"].status == status and found["rate"].observed == pytest.approx(0.016)
    assert found["rate"].failing is None


def test_custom_sql_metric_form_refuses_max_count_beside_bounds(tmp_path):
    path = tmp_path / "s.yaml"
    path.write_text("custom_sql:\n  - name: r\n    sql: SELECT 1\n    max: 1\n    max_count: 2\n")
    with pytest.raises(SuiteError, match="not both"):
        load_suites([path])


def test_where_is_read_by_each_database_and_double_quotes_are_flagged():
    assert where_warnings("status = 'active'") == []
    [warning] = where_warnings("\"status\" = 'active'")
    assert "\"status\" is a column on PostgreSQL and SQLite but the string 'status' on MySQL/MariaDB" in warning
    assert "backticks" in where_warnings("`status` = 'active'")[0]
