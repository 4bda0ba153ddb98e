"""``group_by``: row-level checks judged per group, on SQLite, PostgreSQL, MariaDB and DuckDB alike.

Every expected figure below is worked out by hand from ROWS: a NULL region is a group of its own, ``'eu'`` and
``'EU '`` are groups apart from ``'EU'`` (compared exactly, even where the default collation would merge them),
and region ``AP`` has only NULL emails.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.dbs import KINDS
from watchdog.sandbox import Sandbox
from watchdog.scan import grouped
from watchdog.scan.planner import plan
from watchdog.scan.scanner import scan, with_column_types
from watchdog.scan.suites import SuiteError, load_suites

ENGINES = (*KINDS, "duckdb")

# id, region, email, code, amount
ROWS = [
    (1, "EU", None, "A", 5), (2, "EU", None, "A", -1), (3, "EU", "a@x", "B", 7), (4, "EU", "b@x", "B", 8),  # 2/4
    (5, "eu", None, "A", 1),                                                                               # 1/1
    (6, "US", "u1@x", "A", 2), (7, "US", "u2@x", "B", -3), (8, "US", "u3@x", "B", -4),                     # 0/3
    (9, None, None, "A", 1), (10, None, "c@x", None, 2),                                                   # 1/2
    (11, "AP", None, None, 3), (12, "AP", None, "A", 4),                                                   # 2/2
    (13, "EU ", "d@x", "B", 5),                                                                            # 0/1
]

SUITE = """
tables:
  orders:
    - not_null: {column: email, group_by: [region]}
    - not_null: {column: email, group_by: region, max_rate: 0.5, name: half}
    - not_null: {column: email, group_by: [region], max_count: 5, warn: {max_count: 1}, name: warned}
    - not_null: {column: email, group_by: [region], where: "id > 100", name: empty_scope}
    - pattern: {column: email, regex: '@', group_by: [region], name: pat}
    - range: {column: amount, min: 0, group_by: [code], max_count: 1, name: amounts}
    - expression: {condition: "amount >= 0", group_by: [code], max_count: 1, name: expr_amounts}
    - accepted_values: {column: region, values: [EU, US], group_by: [code], name: regions_by_code}
  empty:
    - not_null: {column: email, group_by: [region], name: on_empty}
  many:
    - not_null: {column: v, group_by: [g], name: many_groups}
"""


def _group(region, failing, total, status="fail"):
    return {"group": {"region": region}, "failing": failing, "total": total, "rate": failing / total,
            "status": status}


def load(kind, make_database):
    return load_into(make_database(kind))


def load_into(db, prefix: str = ""):
    """The three tables (names prefixed with ``prefix``) in ``db``: any TestDatabase, or Spark's."""
    cols = {"id": "int", "region": "text", "email": "text", "code": "text", "amount": "int"}
    db.create_table(prefix + "orders", cols, ROWS)
    db.create_table(prefix + "empty", {"id": "int", "region": "text", "email": "text"})
    db.create_table(prefix + "many", {"g": "int", "v": "text"}, [(g, None) for g in range(25, 0, -1)])
    return db


def suite_text(prefix: str = "") -> str:
    return SUITE.replace("  orders:", f"  {prefix}orders:").replace("  empty:", f"  {prefix}empty:").replace(
        "  many:", f"  {prefix}many:")


def checks_of(tmp_path: Path, text: str) -> list:
    path = tmp_path / "suite.yaml"
    path.write_text(text, encoding="utf-8")
    return [check for suite in load_suites([path]) for check in suite.checks]


@pytest.mark.parametrize("kind", ENGINES)
def test_groups_are_judged_apart_the_same_on_every_engine(kind, make_database, tmp_path):
    db = load(kind, make_database)
    checks = checks_of(tmp_path, SUITE)
    with Sandbox(db.url) as box:
        doc = scan(box, checks, sample=5)
        found = {f.name: f for f in doc.findings}
        # the finding's SQL selects the failing rows of the groups over a threshold: run as recorded
        rows_half = box.query(found["half"].sql, max_rows=100).as_dicts()
        groups_half = box.query(found["half"].details["groups_sql"], max_rows=100).rows
    assert_groups(found)
    assert sorted(r["id"] for r in rows_half) == [5, 11, 12]
    assert sorted(half_row["id"] for half_row in found["half"].sample) == [5, 11, 12]
    assert sorted((r[0], int(r[1]), int(r[2])) for r in groups_half) == [("AP", 2, 2), ("eu", 1, 1)]


def assert_groups(found, prefix: str = "") -> None:
    """The figures of SUITE's checks, worked out by hand from ROWS."""
    every = found[f"{prefix}orders.email.not_null"]
    assert (every.status, every.failing, every.total) == ("fail", 6, 13)  # the whole table's figures
    assert every.details["groups"] == [_group("EU", 2, 4), _group("AP", 2, 2), _group(None, 1, 2),
                                       _group("eu", 1, 1)]
    assert (every.details["groups_failing"], every.details["groups_checked"], every.details["groups_omitted"]) \
        == (4, 6, 0)
    half = found["half"]  # a rate of 0.5 is not over max_rate 0.5: EU and the NULL group pass
    assert (half.status, half.details["groups"]) == ("fail", [_group("AP", 2, 2), _group("eu", 1, 1)])
    warned = found["warned"]
    assert (warned.status, warned.details["groups_failing"], warned.details["groups_warning"]) == ("warn", 0, 2)
    assert warned.details["groups"] == [_group("EU", 2, 4, "warn"), _group("AP", 2, 2, "warn")]
    empty_scope = found["empty_scope"]
    assert (empty_scope.status, empty_scope.failing, empty_scope.total) == ("pass", 0, 0)
    assert (empty_scope.details["groups"], empty_scope.details["groups_checked"]) == ([], 0)
    assert (found["pat"].status, found["pat"].failing, found["pat"].total) == ("pass", 0, 13)
    for name in ("amounts", "expr_amounts"):  # code A: 1 negative of 6; B: 2 of 5 (> 1); NULL: 0 of 2
        amounts = found[name]
        assert (amounts.status, amounts.failing, amounts.total) == ("fail", 3, 13)
        assert amounts.details["groups"] == [{"group": {"code": "B"}, "failing": 2, "total": 5, "rate": 0.4,
                                              "status": "fail"}]
    # A: 'eu' and 'AP' of 6; B: 'EU ' of 5 (exact); NULL code: 'AP' of 2 (a NULL region is skipped)
    regions = found["regions_by_code"]
    assert (regions.status, regions.failing, regions.total) == ("fail", 4, 13)
    assert [(g["group"]["code"], g["failing"], g["total"]) for g in regions.details["groups"]] == \
        [("A", 2, 6), ("B", 1, 5), (None, 1, 2)]
    on_empty = found["on_empty"]
    assert (on_empty.status, on_empty.failing, on_empty.total, on_empty.details["groups"]) == ("pass", 0, 0, [])
    many = found["many_groups"]  # 25 groups fail, one row each: the first 20 by value are listed
    assert [g["group"]["g"] for g in many.details["groups"]] == list(range(1, 21))
    assert (many.details["groups_failing"], many.details["groups_omitted"]) == (25, 5)


@pytest.mark.parametrize("kind", ["sqlite", "postgresql"])
def test_checks_sharing_group_columns_share_one_statement(kind, make_database, tmp_path):
    db = load(kind, make_database)
    with Sandbox(db.url) as box:
        checks = with_column_types(box, checks_of(tmp_path, SUITE))
        statements = plan(checks, box.dialect).statements
    by_table = {}
    for s in statements:
        if isinstance(s.metrics[0], grouped.GroupedCount):
            by_table.setdefault(s.table, []).append(len(s.metrics))
    # orders: [region] (five checks) and [code] (three); empty and many: one each
    assert sorted(by_table["orders"]) == [3, 5]
    assert (by_table["empty"], by_table["many"]) == ([1], [1])


BAD = [
    ("    - unique: {column: a, group_by: [r]}\n", ["suite.yaml:3", "unique cannot be judged per group"]),
    ("    - not_null: {column: a, group_by: [r, r]}\n", ["suite.yaml:3", "listed twice"]),
    ("    - not_null: {column: a, group_by: []}\n", ["suite.yaml:3", "group_by"]),
    ("    - not_null: {column: a, group_by: [r], anomaly: {}}\n", ["suite.yaml:3", "do not go together"]),
]


@pytest.mark.parametrize(("check", "said"), BAD)
def test_bad_group_by_names_file_line_and_what_to_do(check, said, tmp_path):
    with pytest.raises(SuiteError) as caught:
        checks_of(tmp_path, "tables:\n  t:\n" + check)
    for part in said:
        assert part in str(caught.value)


def test_a_missing_group_column_is_an_error_and_the_other_checks_still_run(make_database, tmp_path):
    db = load("sqlite", make_database)
    text = "tables:\n  orders:\n    - not_null: {column: email, group_by: [nope], name: bad}\n" \
           "    - not_null: {column: email, name: fine}\n" \
           "    - not_null: {column: email, group_by: [region], where: 'no_such > 1', name: bad_where}\n" \
           "    - not_null: {column: email, group_by: [region], name: shares_with_bad_where}\n"
    with Sandbox(db.url) as box:
        found = {f.name: f for f in scan(box, checks_of(tmp_path, text), sample=0).findings}
    assert found["bad"].status == "error" and "nope" in found["bad"].error
    assert (found["fine"].status, found["fine"].failing) == ("fail", 6)
    # a broken where fails the shared statement: each check then runs alone, and only the broken one errs
    assert found["bad_where"].status == "error" and "no_such" in found["bad_where"].error
    assert (found["shares_with_bad_where"].status, found["shares_with_bad_where"].details["groups_failing"]) == \
        ("fail", 4)


@pytest.mark.parametrize("kind", ["sqlite", "mariadb"])
def test_an_export_holds_the_failing_rows_of_the_groups_over_a_threshold(kind, make_database, tmp_path):
    from watchdog.run.export_failures import ExportRequest
    from watchdog.run.scan_run import run_scan

    db = load(kind, make_database)
    suite = tmp_path / "suite.yaml"
    suite.write_text(SUITE, encoding="utf-8")
    folder = tmp_path / "failed"
    outcome = run_scan(db.url, [suite], out_dir=tmp_path / "run", sample=2, export=ExportRequest(folder, batch=2))
    report = outcome.report_path.read_text(encoding="utf-8")
    assert "Judged per group: 4 failing and 0 warning of 6 groups." in report
    assert "region=EU: 2 of 4 (50.00%, fail); region=AP: 2 of 2 (100.00%, fail); region=NULL: 1 of 2" in report
    lines = (folder / "half.csv").read_text(encoding="utf-8").splitlines()
    assert lines[0] == "id,region,email,code,amount"
    assert sorted(int(line.split(",")[0]) for line in lines[1:]) == [5, 11, 12]  # groups AP and eu
    every = (folder / "orders.email.not_null.csv").read_text(encoding="utf-8").splitlines()
    assert sorted(int(line.split(",")[0]) for line in every[1:]) == [1, 2, 5, 9, 11, 12]


METRICS = """
tables:
  orders:
    - metric: {column: amount, agg: avg, min: 2, group_by: [region], name: avg_amount}
    - metric: {column: email, agg: null_rate, max: 0.5, warn: {max: 0.4}, group_by: [region], name: null_emails}
    - metric: {column: amount, agg: count, min: 2, group_by: [code], where: "amount > 0", name: positive_amounts}
"""


@pytest.mark.parametrize("kind", ENGINES)
def test_a_metric_is_judged_per_group(kind, make_database, tmp_path):
    db = load(kind, make_database)
    with Sandbox(db.url) as box:
        found = {f.name: f for f in scan(box, checks_of(tmp_path, METRICS), sample=0).findings}
    # avg amount: EU (5-1+7+8)/4 = 4.75, eu 1, US (2-3-4)/3 = -5/3, NULL 1.5, AP 3.5, 'EU ' 5
    avg = found["avg_amount"]
    assert avg.status == "fail" and avg.observed == pytest.approx(30 / 13)  # the whole table's value
    assert {g["group"]["region"]: g["value"] for g in avg.details["groups"]} == \
        {"eu": 1.0, None: 1.5, "US": pytest.approx(-5 / 3)}
    assert avg.details["groups_failing"] == 3 and avg.details["groups_checked"] == 6
    # null share of emails: EU 2/4 = 0.5 (warns: > 0.4), eu 1/1 and AP 2/2 fail, NULL 1/2 warns
    nulls = found["null_emails"]
    assert nulls.status == "fail"
    assert {g["group"]["region"]: g["status"] for g in nulls.details["groups"]} == \
        {"eu": "fail", "AP": "fail", "EU": "warn", None: "warn"}
    # positive amounts per code: A 5 (of 6 rows), B 3 (3, 4 and 13), NULL code 2: none below 2
    positive = found["positive_amounts"]
    assert (positive.status, positive.observed, positive.details["groups"]) == ("pass", 10, [])
