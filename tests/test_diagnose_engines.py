"""The diagnosis on real databases: the same facts on SQLite, PostgreSQL, MariaDB and DuckDB (Spark: test_spark.py).

One fixture holds every case the issue names: a planted segment (with a late onset), ties among offending
values, NULL segment values, a segment column that is all NULL, a table without a timestamp column, a check
with ``where:``, a compound key, a foreign key whose parent table is empty. The expected facts are worked out
here in Python from the rows the fixture loads.
"""

from __future__ import annotations

import re
from collections import Counter
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

import pytest

from watchdog.diagnose import diagnose
from watchdog.findings import Finding
from watchdog.sandbox import Sandbox
from watchdog.scan.scanner import scan
from watchdog.scan.suites import load_suite

START = datetime(2026, 1, 1, 0, 0, 0)
ROWS = 600

SUITE = """\
tables:
  contacts:
    segments: [source, country, blank, status]
    timestamp_column: created_at
    checks:
      - not_null: email
      - not_null: {column: email, where: "country = 'DE'", name: de_email}
      - accepted_values: {column: status, values: [lead, customer]}
      - foreign_key: {column: customer_id, references: customers.id}
      - foreign_key: {column: region_id, references: regions.id}
      - unique: [first_name, last_name]
      - pattern: {column: phone, regex: '^[+]'}
  orders:
    - foreign_key: {column: customer_id, references: customers.id}
"""


def contacts() -> list[tuple[Any, ...]]:
    rows = []
    for i in range(ROWS):
        source = "csv_import" if i % 15 == 0 else ("web", "app", "api")[i % 3]
        country = None if i % 10 == 3 else ("DE", "FR", "US")[(i // 2) % 3]
        email = None if (source == "csv_import" and i >= 300) or i in (7, 111) else f"u{i}@example.com"
        status = {5: "Active ", 25: "Active ", 45: "Active ", 65: "Active ", 85: "Active ", 105: "actve", 125: "actve",
                  145: "bad", 165: "bad"}.get(i, ("lead", "customer")[i % 2])
        customer = {50: 1017, 51: 1017, 52: 1022, 53: 1022, 54: 999}.get(i, 1 + i % 20)
        region = i % 4 if i % 2 else None          # regions is empty: every non-NULL region_id is an orphan
        first, last = (f"f{i % 400}", f"l{i % 400}")  # keys repeat for i and i + 400
        phone = f"{i:07d}" if country is None and i % 20 != 13 else f"+49{i:07d}"
        created = (START + timedelta(minutes=i)).strftime("%Y-%m-%d %H:%M:%S")
        rows.append((i, email, source, country, None, status, customer, region, first, last, phone, created))
    return rows


COLUMNS = {"id": "int", "email": "text", "source": "text", "country": "text", "blank": "text", "status": "text",
           "customer_id": "int", "region_id": "int", "first_name": "text", "last_name": "text", "phone": "text",
           "created_at": "timestamp"}


def load_fixture(db: Any) -> None:
    db.create_table("customers", {"id": "int", "name": "text"}, [(i, f"c{i}") for i in range(1, 21)])
    db.create_table("regions", {"id": "int"}, [])
    rows = contacts()
    if db.kind == "spark":  # Spark will not write text into a TIMESTAMP column
        rows = [(*r[:-1], datetime.fromisoformat(r[-1])) for r in rows]
    db.create_table("contacts", COLUMNS, rows)
    db.create_table("orders", {"id": "int", "customer_id": "int"},
                    [(i, 1 + i % 20 if i % 7 else 555) for i in range(100)])


#: statements that read the catalogue (which columns lead an index), not a table
CATALOGUE = re.compile(r"pg_catalog\.|pragma_index_list|pragma_table_info|information_schema\.|"
                       r"duckdb_constraints|duckdb_indexes")


def run_diagnosis(url: str, suite: Path, timeout_s: float = 30.0,
                  ) -> tuple[dict[str, Finding], dict[str, dict[str, Any]], list[str]]:
    checks = load_suite(suite).checks
    with Sandbox(url, timeout_s=timeout_s) as box:
        doc = scan(box, checks, sample=0)
        sent: list[str] = []
        box.on_execute(sent.append)
        found = diagnose(box, checks, doc.findings)
    return {f.name: f for f in doc.findings}, found, sent


def _iso(i: int) -> str:
    return (START + timedelta(minutes=i)).isoformat()


def check_facts(findings: dict[str, Finding], found: dict[str, dict[str, Any]], statements: list[str]) -> None:
    """The facts every engine must give for the fixture."""
    rows = contacts()
    assert set(found) == {f.name for f in findings.values() if f.status in ("fail", "warn")}
    # at most three statements per table, however many checks: contacts 3 (probe, failing rows, rows); orders 2
    # (besides the catalogue's, which read no table)
    assert len([s for s in statements if not CATALOGUE.search(s)]) == 5

    email = found["contacts.email.not_null"]
    failing = [r for r in rows if r[1] is None]
    assert findings["contacts.email.not_null"].failing == len(failing) == 22
    csv = [r for r in rows if r[2] == "csv_import"]
    assert email["segments"] == [{"column": "source", "value": "csv_import", "failing": 20, "rows": len(csv),
                                  "share_of_failing": round(20 / 22, 4), "share_of_rows": round(len(csv) / ROWS, 4),
                                  "lift": round((20 / len(csv)) / (22 / ROWS), 2)}]
    assert email["onset"] == {"column": "created_at", "first": _iso(7), "last": _iso(585),
                              "table_first": _iso(0), "table_last": _iso(ROWS - 1)}
    assert email["statements"] == 3 and "values" not in email

    # where: the segment shares are of the rows the check looks at
    de = found["de_email"]
    de_failing = [r[0] for r in rows if r[3] == "DE" and r[1] is None]
    assert findings["de_email"].failing == len(de_failing) and findings["de_email"].total == sum(
        r[3] == "DE" for r in rows)
    assert de["onset"]["first"] == _iso(de_failing[0]) and de["onset"]["last"] == _iso(de_failing[-1])
    assert [s["column"] for s in de["segments"]] in ([], ["source"])

    # offending values, ties in value order: 'actve' and 'bad' both x2
    status = found["contacts.status.accepted_values"]
    assert status["values"] == [{"value": "Active ", "failing": 5}, {"value": "actve", "failing": 2},
                                {"value": "bad", "failing": 2}]
    assert status["values_distinct"] == 3 and status["segments"] == []

    # the missing parent keys, ties in value order
    fk = found["contacts.customer_id.foreign_key"]
    assert fk["values"] == [{"value": 1017, "failing": 2}, {"value": 1022, "failing": 2},
                            {"value": 999, "failing": 1}]
    # an empty parent table: every non-NULL key is missing
    regions = found["contacts.region_id.foreign_key"]
    assert regions["values"] == [{"value": v, "failing": 150} for v in (1, 3)]
    assert regions["values_distinct"] == 2

    # a compound key: the duplicated (first, last) pairs, 2 rows each, in value order
    dup = found["contacts.first_name+last_name.unique"]
    assert findings["contacts.first_name+last_name.unique"].failing == 400
    assert dup["values_distinct"] == 200 and dup["values"][0] == {"value": ["f0", "l0"], "failing": 2}
    assert [v["value"] for v in dup["values"]] == [["f0", "l0"], ["f1", "l1"], ["f10", "l10"], ["f100", "l100"],
                                                   ["f101", "l101"]]

    # a NULL segment value: the bad phones sit where country is NULL
    phone = found["contacts.phone.pattern"]
    bad_phones = [r for r in rows if not r[10].startswith("+")]
    nulls = [r for r in rows if r[3] is None]
    assert phone["segments"][0] == {"column": "country", "value": None, "failing": len(bad_phones),
                                    "rows": len(nulls), "share_of_failing": 1.0,
                                    "share_of_rows": round(len(nulls) / ROWS, 4),
                                    "lift": round(ROWS / len(nulls), 2)}
    # the all-NULL column is one segment holding every row: never a concentration
    assert all(s["column"] != "blank" for f in found.values() for s in f.get("segments", []))

    # overlap: rows failing two checks of the table
    shared = Counter()
    for r in rows:
        if r[1] is None and r[6] in (1017, 1022, 999):
            shared["fk"] += 1
        if r[1] is None and r[5] not in ("lead", "customer"):
            shared["status"] += 1
    overlap = {o["check"]: o["rows"] for o in email.get("overlap", [])}
    assert overlap.get("contacts.customer_id.foreign_key", 0) == shared["fk"]
    assert overlap.get("contacts.status.accepted_values", 0) == shared["status"]
    assert overlap["contacts.region_id.foreign_key"] == sum(1 for r in rows if r[1] is None and r[7] is not None)

    # a table without a timestamp column (and no segments declared): no onset; the probe finds no candidate
    orders = found["orders.customer_id.foreign_key"]
    assert "onset" not in orders and orders["values"] == [{"value": 555, "failing": 15}]


@pytest.mark.parametrize("kind", ["sqlite", "postgresql", "mariadb", "duckdb"])
def test_the_same_facts_on_every_engine(kind, make_database, tmp_path: Path):
    db = make_database(kind)
    load_fixture(db)
    suite = tmp_path / "suite.yaml"
    suite.write_text(SUITE, encoding="utf-8")
    findings, found, sent = run_diagnosis(db.url, suite)
    assert not [v["error"] for v in found.values() if "error" in v]
    check_facts(findings, found, sent)


@pytest.mark.parametrize("kind", ["sqlite", "postgresql", "mariadb"])
def test_the_time_range_is_read_from_an_index_that_leads_with_the_timestamp(kind, make_database, tmp_path: Path):
    """With an index on the timestamp column, the table's first and last timestamp are two index lookups instead of
    every row's timestamp read in the rows pass: the same facts, and the form is the one sent."""
    db = make_database(kind)
    load_fixture(db)
    db.run(f"CREATE INDEX {db.quote('contacts_created')} ON {db.quote('contacts')} ({db.quote('created_at')})")
    suite = tmp_path / "suite.yaml"
    suite.write_text(SUITE, encoding="utf-8")
    findings, found, sent = run_diagnosis(db.url, suite)
    check_facts(findings, found, sent)
    rows_pass = [s for s in sent if "MIN(" in s.upper() and "wd_rows" not in s and not CATALOGUE.search(s)]
    assert len(rows_pass) == 1 and rows_pass[0].upper().count("(SELECT MIN(") == 1
    assert rows_pass[0].upper().count("(SELECT MAX(") == 1
