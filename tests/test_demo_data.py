"""Tests for the demo CRM generator, checked against independent SQL over the built file."""

from __future__ import annotations

import re
import sqlite3
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from watchdog.run.demo_data import build_demo_database

FIXED_NOW = datetime(2026, 11, 29, 12, 0, 0, tzinfo=UTC)
TABLES = ["companies", "contacts", "deals", "activities"]
EMAIL_REGEX = r"^[^@ ]+@[^@ ]+\.[a-z]{2,}$"


def dump_rows(path: Path) -> dict[str, list[tuple]]:
    conn = sqlite3.connect(path)
    try:
        return {t: conn.execute(f"SELECT * FROM {t} ORDER BY id").fetchall() for t in TABLES}
    finally:
        conn.close()


def scalar(conn: sqlite3.Connection, sql: str) -> int:
    return conn.execute(sql).fetchone()[0]


def age_seconds(conn: sqlite3.Connection, table: str, column: str) -> int:
    newest = scalar(conn, f"SELECT max({column}) FROM {table}")
    return int((FIXED_NOW.replace(tzinfo=None) - datetime.fromisoformat(newest)).total_seconds())


@pytest.fixture(scope="module")
def demo_path(tmp_path_factory) -> Path:
    return tmp_path_factory.mktemp("demo") / "crm.db"


@pytest.fixture(scope="module")
def expected(demo_path) -> dict:
    return build_demo_database(demo_path, now=FIXED_NOW)


@pytest.fixture(scope="module")
def conn(demo_path, expected):
    connection = sqlite3.connect(demo_path)
    yield connection
    connection.close()


def test_same_seed_builds_identical_rows(tmp_path):
    first = build_demo_database(tmp_path / "a.db", seed=7, now=FIXED_NOW)
    second = build_demo_database(tmp_path / "b.db", seed=7, now=FIXED_NOW)
    assert first == second
    assert dump_rows(tmp_path / "a.db") == dump_rows(tmp_path / "b.db")


def test_different_seed_builds_different_rows(tmp_path):
    build_demo_database(tmp_path / "a.db", seed=1, now=FIXED_NOW)
    build_demo_database(tmp_path / "b.db", seed=2, now=FIXED_NOW)
    assert dump_rows(tmp_path / "a.db") != dump_rows(tmp_path / "b.db")


def test_findings_do_not_depend_on_build_time(tmp_path):
    earlier = build_demo_database(tmp_path / "a.db", now=FIXED_NOW)
    later = build_demo_database(tmp_path / "b.db", now=FIXED_NOW + timedelta(days=400, seconds=17))
    assert earlier == later


def test_default_now_is_current_utc_time(tmp_path):
    findings = build_demo_database(tmp_path / "crm.db")
    conn = sqlite3.connect(tmp_path / "crm.db")
    newest = scalar(conn, "SELECT max(occurred_at) FROM activities")
    conn.close()
    age = datetime.now(UTC).replace(tzinfo=None) - datetime.fromisoformat(newest)
    assert abs(age.total_seconds() - findings["activities.occurred_at.freshness"]) < 60


def test_rebuild_replaces_existing_file_and_creates_parent_dirs(tmp_path):
    path = tmp_path / "nested" / "dir" / "crm.db"
    build_demo_database(path, now=FIXED_NOW)
    conn = sqlite3.connect(path)
    conn.execute("INSERT INTO companies (name) VALUES ('stray')")
    conn.commit()
    conn.close()
    findings = build_demo_database(path, now=FIXED_NOW)
    assert len(dump_rows(path)["companies"]) == findings["_rows"]["companies"]


def test_row_counts_match_tables(conn, expected):
    assert expected["_rows"] == {t: scalar(conn, f"SELECT count(*) FROM {t}") for t in TABLES}
    assert expected["_rows"] == {"companies": 200, "contacts": 2000, "deals": 800, "activities": 3000}
    assert expected["companies.row_count"] == expected["_rows"]["companies"]
    assert expected["contacts.row_count"] == expected["_rows"]["contacts"]


def test_timestamps_are_iso_utc_text(conn):
    stamp = re.compile(r"^\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2}$")
    for table, column in [("companies", "created_at"), ("contacts", "updated_at"),
                          ("deals", "closed_at"), ("activities", "occurred_at")]:
        values = [v for (v,) in conn.execute(f"SELECT {column} FROM {table} WHERE {column} IS NOT NULL")]
        assert values and all(stamp.match(v) for v in values), (table, column)


@pytest.mark.parametrize("check, sql", [
    ("companies.name.not_null", "SELECT count(*) FROM companies WHERE name IS NULL"),
    ("contacts.email.not_null", "SELECT count(*) FROM contacts WHERE email IS NULL"),
    ("contacts.status.accepted_values",
     "SELECT count(*) FROM contacts WHERE status IS NOT NULL AND status NOT IN ('lead', 'customer', 'churned')"),
    ("contacts.age.range", "SELECT count(*) FROM contacts WHERE age IS NOT NULL AND (age < 0 OR age > 120)"),
    ("contacts.company_id.foreign_key",
     "SELECT count(*) FROM contacts c WHERE c.company_id IS NOT NULL "
     "AND NOT EXISTS (SELECT 1 FROM companies p WHERE p.id = c.company_id)"),
    ("deals.contact_id.foreign_key",
     "SELECT count(*) FROM deals d WHERE d.contact_id IS NOT NULL "
     "AND NOT EXISTS (SELECT 1 FROM contacts c WHERE c.id = d.contact_id)"),
    ("deals.company_id.foreign_key",
     "SELECT count(*) FROM deals d WHERE d.company_id IS NOT NULL "
     "AND NOT EXISTS (SELECT 1 FROM companies p WHERE p.id = d.company_id)"),
    ("activities.contact_id.foreign_key",
     "SELECT count(*) FROM activities a WHERE a.contact_id IS NOT NULL "
     "AND NOT EXISTS (SELECT 1 FROM contacts c WHERE c.id = a.contact_id)"),
    ("deals.stage.accepted_values",
     "SELECT count(*) FROM deals WHERE amount IS NOT NULL AND stage IS NOT NULL "
     "AND stage NOT IN ('open', 'qualified', 'proposal', 'won', 'lost')"),
    ("deals.amount.range", "SELECT count(*) FROM deals WHERE amount < 0"),
    ("won_deals_without_amount", "SELECT count(*) FROM deals WHERE stage = 'won' AND amount IS NULL"),
])
def test_row_level_counts_match_sql(conn, expected, check, sql):
    assert expected[check] == scalar(conn, sql)


@pytest.mark.parametrize("check, table, columns", [
    ("contacts.email.unique", "contacts", "email"),
    ("contacts.first_name+last_name.unique", "contacts", "first_name, last_name"),
    ("companies.domain.unique", "companies", "domain"),
])
def test_unique_counts_every_row_of_a_duplicated_group(conn, expected, check, table, columns):
    not_all_null = " AND ".join(f"{c.strip()} IS NULL" for c in columns.split(","))
    groups = conn.execute(
        f"SELECT count(*) FROM {table} WHERE NOT ({not_all_null}) GROUP BY {columns} HAVING count(*) > 1"
    ).fetchall()
    assert expected[check] == sum(n for (n,) in groups)


def test_email_duplicate_breakdown_matches_sql(conn, expected):
    sizes = [n for (n,) in conn.execute(
        "SELECT count(*) FROM contacts WHERE email IS NOT NULL GROUP BY email HAVING count(*) > 1")]
    assert expected["contacts.email.unique.duplicate_values"] == len(sizes)
    assert expected["contacts.email.unique.excess_rows"] == sum(sizes) - len(sizes)
    assert 3 in sizes, "some duplicate groups should have three rows"


def test_email_pattern_count_matches_regex_search(conn, expected):
    emails = [e for (e,) in conn.execute("SELECT email FROM contacts WHERE email IS NOT NULL")]
    assert expected["contacts.email.pattern"] == sum(not re.search(EMAIL_REGEX, e) for e in emails)
    assert "ANN@EXAMPLE.COM" in emails


@pytest.mark.parametrize("check, table, column", [
    ("contacts.updated_at.freshness", "contacts", "updated_at"),
    ("deals.closed_at.freshness", "deals", "closed_at"),
    ("activities.occurred_at.freshness", "activities", "occurred_at"),
])
def test_freshness_is_age_of_newest_value_in_seconds(conn, expected, check, table, column):
    assert expected[check] == age_seconds(conn, table, column)


def test_planted_defects_match_the_suite_intent(expected):
    day = 86400
    assert expected["activities.occurred_at.freshness"] < 2 * day  # passes max_age 2d
    assert expected["contacts.updated_at.freshness"] < 30 * day  # passes max_age 30d
    assert 44 * day < expected["deals.closed_at.freshness"] < 46 * day  # fails max_age 30d
    assert 0 < expected["deals.contact_id.foreign_key"] <= 5  # passes with max_count 5
    assert expected["deals.amount.range"] > 0
    assert expected["won_deals_without_amount"] > 0
    for clean in ["companies.name.not_null", "companies.domain.unique", "deals.stage.accepted_values",
                  "deals.company_id.foreign_key", "activities.contact_id.foreign_key"]:
        assert expected[clean] == 0, clean
    for broken in ["contacts.email.not_null", "contacts.email.unique", "contacts.first_name+last_name.unique",
                   "contacts.email.pattern", "contacts.status.accepted_values", "contacts.age.range",
                   "contacts.company_id.foreign_key"]:
        assert expected[broken] > 0, broken
