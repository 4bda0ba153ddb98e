"""The counting rules of every check type, on SQLite, PostgreSQL and MariaDB alike.

One hand-made dataset is loaded into each database and one suite is scanned through the
sandbox; every expected number below is worked out by hand from the rows (see comments),
and must be the same on all three databases.
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from tests.dbs import TestDatabase
from watchdog.findings import Finding, FindingsDoc
from watchdog.sandbox import Sandbox
from watchdog.scan.scanner import scan
from watchdog.scan.suites import load_suites

NOW = datetime.now(UTC).replace(tzinfo=None, microsecond=0)
#: the newest people.updated_at: two hours ago (UTC, stored without a time zone)
NEWEST = NOW - timedelta(hours=2)

PEOPLE = {"id": "int", "email": "text", "code": "text", "status": "text", "score": "int", "team_id": "int",
          "region": "text", "updated_at": "timestamp"}
# id  email    code      status    score  team_id  region
PEOPLE_ROWS = [
    (1, "a@x.io", "AB-123", "active", 0, 1, "north"),  # score on the lower bound
    (2, "a@x.io", "CD-456", "active", 100, 1, "north"),  # score on the upper bound
    (3, "a@x.io", "ab-123", "inactive", 50, 2, "south"),  # lower-case code: fails a case-sensitive regex
    (4, "b@x.io", "Ab-123", "active", -1, 2, "south"),  # mixed-case code; score below min
    (5, "b@x.io", "XAB-123", "inactive", 101, 3, "east"),  # matches AB only as a search; score above max
    (6, None, "AB-1234", "pending", None, 9, "north"),  # orphan team 9
    (7, None, None, None, 99, 9, "o'hare"),  # orphan team 9; updated_at NULL (below)
    (8, None, "EF-789", "unknown", 1, 7, "o'hare"),  # orphan team 7
    (9, "c@x.io", None, "active", 75, None, "south"),  # NULL foreign key: not an orphan
    (10, "d@x.io", "GH-012", "inactive", 20, None, "east"),
] + [(i, f"user{i}@x.io", f"AB-{100 + i}", "active", i, 1 + i % 3, "west") for i in range(11, 25)]
# 24 rows; row i was updated (24 - i) days before NEWEST, row 24 is the newest, row 7 never
PEOPLE_ROWS = [(*r, None if r[0] == 7 else NEWEST - timedelta(days=24 - r[0])) for r in PEOPLE_ROWS]

TEAMS_ROWS = [(1, "red"), (2, "blue"), (3, "green")]

# compound key (a, b): 14 rows
PAIRS_ROWS = [
    (1, "x"), (1, "x"),  # a duplicate group of 2
    (2, "y"), (2, "y"), (2, "y"),  # a duplicate group of 3
    (1, None), (1, None),  # partly NULL: GROUP BY groups the NULLs, so a duplicate group of 2
    (None, "x"), (None, "x"),  # partly NULL the other way: a duplicate group of 2
    (None, None), (None, None), (None, None),  # all NULL: skipped
    (None, "z"), (3, "x"),  # singletons
]

SUITE = """
tables:
  people:
    - not_null: email
    - not_null: email
      name: nulls_max_count_3
      max_count: 3
    - not_null: email
      name: nulls_max_count_2
      max_count: 2
    - not_null: email
      name: nulls_max_rate_equal
      max_rate: 0.125
    - not_null: email
      name: nulls_max_rate_below
      max_rate: 0.12
    - not_null: email
      name: nulls_count_ok_rate_not
      max_count: 10
      max_rate: 0.1
    - not_null: email
      name: nulls_north
      where: region = 'north'
    - not_null: email
      name: nulls_quoted_where
      where: region = 'o''hare'
    - unique: email
    - unique: email
      name: unique_north_south
      where: region IN ('north', 'south')
    - pattern: {column: code, regex: '^[A-Z]{2}-[0-9]{3}$'}
    - pattern: {column: code, regex: 'AB', name: code_search}
    - accepted_values: {column: status, values: [active, inactive]}
    - accepted_values: {column: status, values: [active, inactive], name: status_warn_tolerated}
      severity: warn
      max_count: 2
    - range: {column: score, min: 0, max: 100}
      severity: warn
    - range: {column: score, min: 50, name: score_min_only}
    - range: {column: score, max: 99, name: score_max_only}
    - foreign_key: {column: team_id, references: teams.id}
    - foreign_key: {column: team_id, references: teams.id, name: fk_north}
      where: region = 'north'
    - row_count: {min: 20, max: 30}
    - row_count: {min: 15, name: west_rows}
      where: region = 'west'
    - freshness: {column: updated_at, max_age: 3h}
    - freshness: {column: updated_at, max_age: 1h, name: stale_after_1h}
    - freshness: {column: updated_at, max_age: 30d, name: north_fresh}
      where: region = 'north'
    - not_null: no_such_column
  pairs:
    - unique: [a, b]
    - unique: a
  empty_t:
    - not_null: id
    - not_null: {column: id, max_rate: 0.1, name: empty_with_rate}
    - unique: id
    - row_count: {}
    - row_count: {min: 0, name: empty_allowed}
    - freshness: {column: updated_at, max_age: 1d}
  nowhere:
    - not_null: id
custom_sql:
  - name: scores_over_100
    sql: SELECT count(*) FROM people WHERE score > 100
  - name: scores_over_100_tolerated
    sql: SELECT count(*) FROM people WHERE score > 100;
    max_count: 1
  - name: nobody_from_nowhere
    sql: SELECT count(*) FROM people WHERE region = 'nowhere'
  - name: not_a_number
    sql: SELECT 'many' AS answer
"""
BROKEN = ("people.no_such_column.not_null", "nowhere.id.not_null", "not_a_number")


def load_fixture(db: TestDatabase) -> None:
    db.create_table("people", PEOPLE, PEOPLE_ROWS)
    db.create_table("teams", {"id": "int", "name": "text"}, TEAMS_ROWS)
    db.create_table("pairs", {"a": "int", "b": "text"}, PAIRS_ROWS)
    db.create_table("empty_t", {"id": "int", "updated_at": "timestamp"})


def run_suite(db: TestDatabase, suite_path: Path) -> FindingsDoc:
    checks = [check for suite in load_suites([suite_path]) for check in suite.checks]
    with Sandbox(db.url) as sandbox:
        return scan(sandbox, checks)


@pytest.fixture
def findings_doc(database: TestDatabase, tmp_path: Path) -> FindingsDoc:
    load_fixture(database)
    path = tmp_path / "suite.yaml"
    path.write_text(SUITE, encoding="utf-8")
    return run_suite(database, path)


@pytest.fixture
def findings(findings_doc: FindingsDoc) -> dict[str, Finding]:
    return {f.name: f for f in findings_doc.findings}


def counts(f: Finding) -> tuple:
    return f.status, f.failing, f.total, f.rate


def test_not_null_counts_null_rows(findings):
    # rows 6, 7, 8 have no email; 24 rows in all
    nulls = findings["people.email.not_null"]
    assert counts(nulls) == ("fail", 3, 24, 0.125)
    assert nulls.observed is None and nulls.details == {} and nulls.column == "email" and nulls.table == "people"
    assert sorted(row["id"] for row in findings["people.email.not_null"].sample) == [6, 7, 8]


def test_max_count_and_max_rate_tolerate_up_to_their_edge(findings):
    assert counts(findings["nulls_max_count_3"]) == ("pass", 3, 24, 0.125)  # 3 is not > 3
    assert counts(findings["nulls_max_count_2"]) == ("fail", 3, 24, 0.125)  # 3 > 2
    assert counts(findings["nulls_max_rate_equal"]) == ("pass", 3, 24, 0.125)  # 0.125 is not > 0.125
    assert counts(findings["nulls_max_rate_below"]) == ("fail", 3, 24, 0.125)  # 0.125 > 0.12
    assert counts(findings["nulls_count_ok_rate_not"]) == ("fail", 3, 24, 0.125)  # either limit breaches
    assert findings["nulls_max_count_3"].sample == []  # no sample for a passing check


def test_where_filters_the_rows_a_check_looks_at(findings):
    # north: rows 1, 2, 6; only row 6 has no email
    assert counts(findings["nulls_north"]) == ("fail", 1, 3, pytest.approx(1 / 3))
    # o'hare (a quote in the value): rows 7 and 8, both without email
    assert counts(findings["nulls_quoted_where"]) == ("fail", 2, 2, 1.0)
    # west: rows 11..24 = 14 rows, fewer than min 15
    west = findings["west_rows"]
    assert (west.status, west.observed, west.total) == ("fail", 14, 14)


def test_unique_counts_every_row_of_a_duplicated_group(findings):
    # a@x.io x3 (rows 1-3) and b@x.io x2 (rows 4-5): 5 rows; the 3 NULL emails are skipped
    email = findings["people.email.unique"]
    assert counts(email) == ("fail", 5, 24, pytest.approx(5 / 24))
    assert email.details == {"duplicate_values": 2, "excess_rows": 3}  # 2 values repeat; 2 + 1 rows beyond the first
    # north+south: rows 1,2,3,4,6,9 -> a@x.io x3 (b@x.io once, NULL skipped, c@x.io once)
    north_south = findings["unique_north_south"]
    assert counts(north_south) == ("fail", 3, 6, 0.5)
    assert north_south.details == {"duplicate_values": 1, "excess_rows": 2}


def test_compound_unique_skips_all_null_rows_and_groups_partial_nulls(findings):
    # groups (1,x)x2, (2,y)x3, (1,NULL)x2, (NULL,x)x2 = 9 rows; (NULL,NULL)x3 skipped; total is every row
    pair = findings["pairs.a+b.unique"]
    assert counts(pair) == ("fail", 9, 14, pytest.approx(9 / 14))
    assert pair.columns == ["a", "b"] and pair.column is None
    assert pair.details == {"duplicate_values": 4, "excess_rows": 5}  # 1 + 2 + 1 + 1
    # column a alone: 1 x4 (rows (1,x),(1,x),(1,NULL),(1,NULL)), 2 x3; 3 once; 6 NULLs skipped
    single = findings["pairs.a.unique"]
    assert counts(single) == ("fail", 7, 14, 0.5)
    assert single.details == {"duplicate_values": 2, "excess_rows": 5}  # 3 + 2


def test_unique_samples_are_rows_of_duplicated_groups(findings):
    # the sample joins the first duplicated keys back to their rows: a@x.io x3, then b@x.io x2
    assert [row["email"] for row in findings["people.email.unique"].sample] == ["a@x.io"] * 3 + ["b@x.io"] * 2
    # compound keys with a NULL part still find their rows (null-safe join); 5 rows at most
    pairs = findings["pairs.a+b.unique"].sample
    assert len(pairs) == 5
    assert all((row["a"], row["b"]) in {(1, "x"), (2, "y"), (1, None), (None, "x")} for row in pairs)


def test_pattern_is_a_case_sensitive_search(findings):
    # ^[A-Z]{2}-[0-9]{3}$: ab-123 and Ab-123 (case), XAB-123 and AB-1234 (anchors) fail; NULL codes (7, 9) skip
    assert counts(findings["people.code.pattern"]) == ("fail", 4, 24, pytest.approx(4 / 24))
    # 'AB' unanchored: XAB-123 and AB-1234 pass (search); CD-456, ab-123, Ab-123, EF-789, GH-012 fail
    assert counts(findings["code_search"]) == ("fail", 5, 24, pytest.approx(5 / 24))


def test_accepted_values_counts_non_null_values_outside_the_list(findings):
    # pending (row 6) and unknown (row 8); row 7's NULL is skipped
    assert counts(findings["people.status.accepted_values"]) == ("fail", 2, 24, pytest.approx(2 / 24))
    # same 2 failing rows, tolerated by max_count 2 -> pass even though severity is warn
    assert counts(findings["status_warn_tolerated"]) == ("pass", 2, 24, pytest.approx(2 / 24))


def test_range_bounds_are_inclusive_and_optional(findings):
    # [0, 100]: -1 (row 4) and 101 (row 5) fail; 0 and 100 sit on the bounds; row 6's NULL is skipped
    warn = findings["people.score.range"]
    assert counts(warn) == ("warn", 2, 24, pytest.approx(2 / 24))
    assert warn.severity == "warn"
    # min 50 only: 0, -1, 1, 20 and 11..24 (14 rows) are below; 50 is on the bound
    assert counts(findings["score_min_only"]) == ("fail", 18, 24, 0.75)
    # max 99 only: 100 and 101 are above; 99 is on the bound
    assert counts(findings["score_max_only"]) == ("fail", 2, 24, pytest.approx(2 / 24))


def test_foreign_key_counts_orphans_but_not_nulls(findings):
    # team 9 (rows 6, 7) and team 7 (row 8) do not exist; rows 9 and 10 have NULL team_id
    assert counts(findings["people.team_id.foreign_key"]) == ("fail", 3, 24, 0.125)
    # north: rows 1, 2 (team 1) and 6 (team 9)
    assert counts(findings["fk_north"]) == ("fail", 1, 3, pytest.approx(1 / 3))


def test_row_count_observes_the_number_of_rows(findings):
    rows = findings["people.row_count"]
    assert (rows.status, rows.observed, rows.failing, rows.rate) == ("pass", 24, None, None)


def age_of(moment: datetime) -> float:
    """Seconds since ``moment`` (naive UTC), now: the module's data was made when it was imported."""
    return (datetime.now(UTC).replace(tzinfo=None) - moment).total_seconds()


def test_freshness_observes_the_age_of_the_newest_value(findings):
    fresh = findings["people.updated_at.freshness"]  # newest was 2 h old at import, max 3 h
    assert fresh.status == "pass" and abs(fresh.observed - age_of(NEWEST)) <= 60
    assert fresh.details["newest"] == NEWEST.isoformat() + "+00:00"
    stale = findings["stale_after_1h"]  # the same 2 h is over 1 h
    assert stale.status == "fail" and abs(stale.observed - age_of(NEWEST)) <= 60
    # north: rows 1, 2, 6; row 6 is the newest, 24 - 6 = 18 days before NEWEST
    north = findings["north_fresh"]
    assert north.status == "pass" and north.total == 3
    assert abs(north.observed - age_of(NEWEST - timedelta(days=18))) <= 60


def test_an_empty_table_has_no_rate_and_fails_row_count_and_freshness(findings):
    assert counts(findings["empty_t.id.not_null"]) == ("pass", 0, 0, None)
    assert counts(findings["empty_with_rate"]) == ("pass", 0, 0, None)
    empty_unique = findings["empty_t.id.unique"]
    assert counts(empty_unique) == ("pass", 0, 0, None)
    assert empty_unique.details == {"duplicate_values": 0, "excess_rows": 0}
    row_count = findings["empty_t.row_count"]  # no bounds: at least one row is required
    assert (row_count.status, row_count.observed) == ("fail", 0)
    assert (findings["empty_allowed"].status, findings["empty_allowed"].observed) == ("pass", 0)
    freshness = findings["empty_t.updated_at.freshness"]  # no value at all
    assert (freshness.status, freshness.observed) == ("fail", None)


def test_custom_sql_returns_the_failing_count(findings):
    assert counts(findings["scores_over_100"]) == ("fail", 1, None, None)  # row 5 (101)
    assert counts(findings["scores_over_100_tolerated"]) == ("pass", 1, None, None)
    assert counts(findings["nobody_from_nowhere"]) == ("pass", 0, None, None)
    not_a_number = findings["not_a_number"]
    assert not_a_number.status == "error" and "one number" in not_a_number.error


def test_unknown_column_and_table_are_errors_with_a_message(findings):
    column = findings["people.no_such_column.not_null"]
    assert column.status == "error" and "no_such_column" in column.error
    assert column.failing is None and column.total is None
    table = findings["nowhere.id.not_null"]
    assert table.status == "error" and "nowhere" in table.error


def test_broken_checks_do_not_change_the_other_counts(database, findings_doc, tmp_path):
    # scan again without the broken checks (so the people batch runs in one piece) and compare
    clean_suite = SUITE.replace("    - not_null: no_such_column\n", "").replace(
        "  nowhere:\n    - not_null: id\n", "").split("  - name: not_a_number")[0]
    path = tmp_path / "clean.yaml"
    path.write_text(clean_suite, encoding="utf-8")
    clean = run_suite(database, path)
    assert clean.summary.errors == 0

    def comparable(doc: FindingsDoc) -> dict:
        return {f.name: (f.status, f.failing, f.total, f.rate, f.details.get("duplicate_values"))
                for f in doc.findings if f.check != "freshness"}

    with_broken = comparable(findings_doc)
    assert set(with_broken) - set(comparable(clean)) == set(BROKEN)
    assert {name: value for name, value in with_broken.items() if name not in BROKEN} == comparable(clean)


def test_summary_counts_each_status(findings_doc):
    by_status: dict[str, int] = {}
    for f in findings_doc.findings:
        by_status[f.status] = by_status.get(f.status, 0) + 1
    # warn: people.score.range only; error: the three broken checks
    assert by_status["warn"] == findings_doc.summary.warned == 1
    assert by_status["error"] == findings_doc.summary.errors == 3
    assert findings_doc.summary.checks == len(findings_doc.findings) == 38
    assert findings_doc.error is None


def test_default_names_follow_table_column_check(findings):
    assert {"people.email.not_null", "pairs.a+b.unique", "people.row_count", "empty_t.row_count"} <= set(findings)


# ---- strings compare exactly everywhere, as the regex does (MariaDB's default collation ignores case
# ---- and trailing spaces)

CASE_SUITE = """
tables:
  words:
    - accepted_values: {column: w, values: [active, inactive]}
    - unique: w
"""


@pytest.fixture
def exact_findings(database: TestDatabase, tmp_path: Path) -> dict[str, Finding]:
    database.create_table("words", {"w": "text"}, [("active",), ("Active",), ("active ",), ("inactive",)])
    path = tmp_path / "case.yaml"
    path.write_text(CASE_SUITE, encoding="utf-8")
    return {f.name: f for f in run_suite(database, path).findings}


def test_accepted_values_compares_values_exactly_on_every_database(exact_findings):
    # 'Active' and 'active ' (trailing space) are not in [active, inactive]
    assert counts(exact_findings["words.w.accepted_values"]) == ("fail", 2, 4, 0.5)


def test_unique_tells_apart_values_differing_in_case_or_trailing_space(exact_findings):
    # 'active', 'Active' and 'active ' are three distinct values, not a duplicate group
    assert counts(exact_findings["words.w.unique"]) == ("pass", 0, 4, 0.0)
