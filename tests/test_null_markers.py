"""Null markers (``null_values``, ``trim_blanks``) and numbers stored as text (``range: {numeric_text: true}``),
on SQLite, PostgreSQL, MariaDB and DuckDB alike.

One hand-made table is loaded twice (``places`` with table options, ``raw_places`` without) into each database;
every expected number below is worked out by hand from the rows.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from tests.dbs import KINDS, TestDatabase
from watchdog.findings import Finding
from watchdog.sandbox import Sandbox
from watchdog.scan.planner import plan
from watchdog.scan.scanner import scan, with_column_types
from watchdog.scan.suites import SuiteError, load_suites

ENGINES = (*KINDS, "duckdb")
COLUMNS = {"id": "int", "phone": "text", "volume": "text", "status": "text", "score": "int"}
# id  phone        volume        status    score
ROWS = [
    (1, "555-1234", " 1e3 ", "open", 1),  # 1000 as text, surrounding blanks
    (2, "?", "1,000", "?", 2),  # a marker; a locale separator is not a number
    (3, "", "-0", "", 3),  # '' marker; minus zero is 0
    (4, "   ", "", "N/A", None),  # blank: '' with trim_blanks; '' marker in volume
    (5, None, None, None, 5),  # NULL everywhere
    (6, "N/A", "12.5", "closed", 6),  # a marker; a decimal
    (7, "n/a", "abc", "bogus", 7),  # 'n/a' is not 'N/A' (exact); not a number; not accepted
    (8, "? ", "\t2001\n", "open", 8),  # '? ' is not '?' (exact); 2001 with blanks: above 2000
]

SUITE = """
tables:
  places:
    null_values: ['', '?', 'N/A']
    trim_blanks: true
    checks:
      - not_null: phone
      - not_null: {column: phone, name: phone_own_markers, null_values: ['?']}
      - not_null: {column: phone, name: phone_no_markers, null_values: []}
      - not_null: score
      - pattern: {column: phone, regex: '^[0-9]{3}-[0-9]{4}$'}
      - accepted_values: {column: status, values: [open, closed]}
      - range: {column: volume, min: -1, max: 2000, numeric_text: true}
      - range: {column: volume, name: volume_max_500, max: 500, numeric_text: true, null_values: []}
  raw_places:
    - not_null: phone
    - pattern: {column: phone, regex: '^[0-9]{3}-[0-9]{4}$'}
    - range: {column: volume, min: -1, max: 2000, numeric_text: true}
"""


def load(db: TestDatabase) -> None:
    db.create_table("places", COLUMNS, ROWS)
    db.create_table("raw_places", COLUMNS, ROWS)


def checks_of(tmp_path: Path, text: str) -> list:
    path = tmp_path / "suite.yaml"
    path.write_text(text, encoding="utf-8")
    return [check for suite in load_suites([path]) for check in suite.checks]


@pytest.fixture(params=ENGINES)
def findings(request: pytest.FixtureRequest, make_database, tmp_path: Path) -> dict[str, Finding]:
    db = make_database(request.param)
    load(db)
    with Sandbox(db.url) as sandbox:
        doc = scan(sandbox, checks_of(tmp_path, SUITE))
    return {f.name: f for f in doc.findings}


def counts(f: Finding) -> tuple:
    return f.status, f.failing, f.total


def test_not_null_fails_on_markers_compared_exactly(findings):
    # NULL (5), '?' (2), '' (3), blanks (4, trim_blanks), 'N/A' (6); not 'n/a' (7) nor '? ' (8)
    assert counts(findings["places.phone.not_null"]) == ("fail", 5, 8)
    # its own list replaces the table's: '?' (2) and NULL (5); blanks are not '' then
    assert counts(findings["phone_own_markers"]) == ("fail", 2, 8)
    assert counts(findings["phone_no_markers"]) == ("fail", 1, 8)
    # a numeric column holds no text markers: only NULL (4)
    assert counts(findings["places.score.not_null"]) == ("fail", 1, 8)
    # without table options only NULL counts
    assert counts(findings["raw_places.phone.not_null"]) == ("fail", 1, 8)


def test_pattern_and_accepted_values_skip_markers_as_nulls(findings):
    # present phones: 555-1234 (1) matches; 'n/a' (7) and '? ' (8) fail
    assert counts(findings["places.phone.pattern"]) == ("fail", 2, 8)
    # without markers '?', '', blanks and 'N/A' fail too: 2, 3, 4, 6, 7, 8
    assert counts(findings["raw_places.phone.pattern"]) == ("fail", 6, 8)
    # status: '?', '', 'N/A', NULL skipped; only 'bogus' (7) fails
    assert counts(findings["places.status.accepted_values"]) == ("fail", 1, 8)


def test_numeric_text_compares_numbers_and_counts_what_is_not_one(findings):
    # ' 1e3 ' = 1000, '-0' = 0, '12.5' pass; '' is a marker, NULL skipped;
    # '1,000' and 'abc' are not numbers, '\t2001\n' = 2001 > 2000
    f = findings["places.volume.range"]
    assert counts(f) == ("fail", 3, 8)
    assert f.details["not_numeric"] == 2
    # max 500 and no markers: 1000 (1), '1,000' (2), '' (4), 'abc' (7), 2001 (8)
    f = findings["volume_max_500"]
    assert counts(f) == ("fail", 5, 8)
    assert f.details["not_numeric"] == 3
    # no table options: '' is not a number either: 2, 4, 7, 8
    f = findings["raw_places.volume.range"]
    assert counts(f) == ("fail", 4, 8)
    assert f.details["not_numeric"] == 3


@pytest.mark.parametrize("kind", ENGINES)
def test_an_empty_table_and_all_null_markers_pass(kind, make_database, tmp_path):
    db = make_database(kind)
    db.create_table("places", COLUMNS, [])
    db.create_table("raw_places", COLUMNS, [(1, "?", "?", "?", 1), (2, None, "N/A", "", 2)])
    suite = """
tables:
  places:
    null_values: ['?']
    checks:
      - range: {column: volume, min: 0, numeric_text: true}
  raw_places:
    null_values: ['', '?', 'N/A']
    checks:
      - range: {column: volume, min: 0, numeric_text: true}
      - pattern: {column: phone, regex: '^x$'}
"""
    with Sandbox(db.url) as sandbox:
        doc = scan(sandbox, checks_of(tmp_path, suite))
    found = {f.name: f for f in doc.findings}
    assert counts(found["places.volume.range"]) == ("pass", 0, 0)
    assert found["places.volume.range"].details["not_numeric"] == 0
    assert counts(found["raw_places.volume.range"]) == ("pass", 0, 2)
    assert counts(found["raw_places.phone.pattern"]) == ("pass", 0, 2)


@pytest.mark.parametrize("kind", ENGINES)
def test_markers_and_numeric_text_add_no_statement(kind, make_database, tmp_path):
    db = make_database(kind)
    load(db)
    with Sandbox(db.url) as sandbox:
        marked = plan(with_column_types(sandbox, checks_of(tmp_path, SUITE)), sandbox.dialect)
    # one aggregate statement per table (and a catalogue read for each), every check's counts in it
    batches = [s for s in marked.statements if s.is_batch]
    assert sorted(s.table for s in batches) == ["places", "raw_places"]
    assert not marked.errors


def test_numeric_text_on_a_numeric_column_is_an_error(make_database, tmp_path):
    db = make_database("sqlite")
    load(db)
    suite = "tables:\n  places:\n    - range: {column: score, min: 0, numeric_text: true}\n"
    with Sandbox(db.url) as sandbox:
        doc = scan(sandbox, checks_of(tmp_path, suite))
    (finding,) = doc.findings
    assert finding.status == "error"
    assert "numeric_text: true reads numbers stored as text" in (finding.error or "")


BAD = [
    ("tables:\n  t:\n    null_values: '?x'\n    trim_blanks: yes please\n    checks: [{not_null: a}]\n",
     ["suite.yaml:4", "trim_blanks", "expected true or false"]),
    ("tables:\n  t:\n    null_values: ['?', 0]\n    checks: [{not_null: a}]\n",
     ["suite.yaml:3", "null_values", "expected text values", "0"]),
    ("tables:\n  t:\n    null_values: ['?']\n    trim_blanks: true\n    checks: [{not_null: a}]\n",
     ["suite.yaml:4", "add '' to null_values"]),
    ("tables:\n  t:\n    - not_null: {column: a, null_values: [1]}\n",
     ["suite.yaml:3", "null_values", "expected text values"]),
    ("tables:\n  t:\n    - range: {column: a, min: '0', numeric_text: true}\n",
     ["suite.yaml:3", "numeric_text: true compares numbers", "write min as a number"]),
]


@pytest.mark.parametrize(("text", "said"), BAD)
def test_bad_options_name_file_line_and_what_to_do(text, said, tmp_path):
    with pytest.raises(SuiteError) as caught:
        checks_of(tmp_path, text)
    message = str(caught.value)
    for part in said:
        assert part in message, message


#: text at the edges of the numeric-text rule (watchdog/scan/check_types/numeric_text.py)
EDGES = ["1e3", "1E+02", "+5", "5.", ".5", ".", "-", "+", "e5", "1e", "1e123", "1e-99", "0x1F", "NaN", "Infinity",
         "inf", "1 000", "1_000", "\u0661\u0662", "\uff11\uff12", "12 ", " 12", "\t12\n", "1.2.3", "--1", "1e+",
         "0", "-0.0", "100", "100.0000001", "99.9999", "1e02", "001e1", "1,5", "7" * 100, "7" * 101, "$5", "5%"]
_RULE = re.compile(r"[\t\n\v\f\r ]*[+-]?([0-9]{1,100}(\.[0-9]{0,100})?|\.[0-9]{1,100})([eE][+-]?[0-9]{1,2})?"
                   r"[\t\n\v\f\r ]*", re.ASCII)


@pytest.mark.parametrize("kind", ENGINES)
def test_every_engine_reads_numeric_text_by_the_one_rule(kind, make_database, tmp_path):
    # the rule written again as a Python regex, and the number as Python's float reads it
    numbers = [float(v) for v in EDGES if _RULE.fullmatch(v)]
    not_numeric = len(EDGES) - len(numbers)
    outside = sum(not 0 <= n <= 100 for n in numbers)
    # by hand: 17 of the 38 are numbers; outside [0, 100]: 1e3, 100.0000001 and the 100 sevens (1E+02 is 100)
    assert (len(EDGES), not_numeric, outside) == (38, 21, 3)
    db = make_database(kind)
    db.create_table("edges", {"v": "text"}, [(v,) for v in EDGES])
    suite = "tables:\n  edges:\n    - range: {column: v, min: 0, max: 100, numeric_text: true}\n"
    with Sandbox(db.url) as sandbox:
        (finding,) = scan(sandbox, checks_of(tmp_path, suite)).findings
    assert (finding.failing, finding.details["not_numeric"]) == (not_numeric + outside, not_numeric)


def test_spark_reads_numeric_text_by_the_one_rule(spark_admin_url, tmp_path):
    from tests.spark_server import create_spark_database

    numbers = [float(v) for v in EDGES if _RULE.fullmatch(v)]
    not_numeric, outside = len(EDGES) - len(numbers), sum(not 0 <= n <= 100 for n in numbers)
    db = create_spark_database(spark_admin_url)
    try:
        db.create_table("edges", {"v": "text"}, [(v,) for v in EDGES])
        db.create_table("places", {"volume": "text"}, [("12",), ("?",), ("",), ("2500",), (None,), (" 1e3 ",)])
        suite = ("tables:\n  edges:\n    - range: {column: v, min: 0, max: 100, numeric_text: true}\n"
                 "  places:\n    null_values: ['', '?']\n    checks:\n"
                 "      - range: {column: volume, min: -1, max: 2000, numeric_text: true}\n")
        with Sandbox(db.url) as sandbox:
            edges, places = scan(sandbox, checks_of(tmp_path, suite)).findings
    finally:
        db.close()
    assert (edges.failing, edges.details["not_numeric"]) == (not_numeric + outside, not_numeric), edges.error
    # by hand: 12 and 1e3 inside, 2500 outside; '?', '' and NULL are missing, not checked
    assert (places.failing, places.details["not_numeric"]) == (1, 0), places.error
