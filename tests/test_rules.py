"""functional_dependency, expression, pattern match:false, custom_sql failing_rows_sql, schema and
schema_changes on SQLite, PostgreSQL and MariaDB, against hand-computed figures."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from watchdog.findings import Finding
from watchdog.sandbox import Sandbox
from watchdog.scan.scanner import scan
from watchdog.scan.suites import SuiteError, load_suite

# zip, st, city -- see the figures in each test
PLACES = [
    (1, "1", "a", "boston"), (2, "1", "a", "boston"), (3, "1", "a", "bostn"),   # zip 1: bostn is wrong
    (4, "2", "a", "x"), (5, "2", "a", "y"), (13, "2", "b", "x"),                # zip 2: x x y; (2,a): x/y tie
    (6, None, "a", "q"),                                                         # NULL determinant: skipped
    (7, "3", "a", None), (8, "3", "a", "c"),                                     # NULL dependent
    (9, "4", "b", "Boston"), (10, "4", "b", "boston"), (11, "4", "b", "boston"),  # case differs: a different value
    (12, "5", "a", "m"),
]


def run(database, suite_text: str, tmp_path: Path, history: dict[str, list[dict[str, Any]]] | None = None,
        sample: int = 5) -> dict[str, Finding]:
    path = tmp_path / "suite.yaml"
    path.write_text(suite_text)
    with Sandbox(database.url) as box:
        doc = scan(box, load_suite(path).checks, history=history, sample=sample)
    return {f.name: f for f in doc.findings}


def test_functional_dependency_majority_ties_nulls_and_compound_determinants(database, tmp_path):
    database.create_table("places", {"id": "int", "zip": "text", "st": "text", "city": "text"}, PLACES)
    found = run(database, """\
tables:
  places:
    - functional_dependency: {determinant: [zip], dependent: city}
    - functional_dependency: {determinant: [zip, st], dependent: city}
    - functional_dependency: {determinant: zip, dependent: city, dependent_nulls: value, name: with_nulls}
    - functional_dependency: {determinant: [zip], dependent: city, where: "zip <> '4'", max_count: 5, name: tolerated}
""", tmp_path)
    plain = found["places.zip->city.functional_dependency"]
    # zip 1: bostn (1 row); zip 2: y (x x y); zip 4: Boston (boston x2); zip 3's NULL is skipped
    assert (plain.status, plain.failing, plain.total) == ("fail", 3, 13)
    assert plain.details == {"groups_in_conflict": 3, "rows_in_conflict": 9, "tied_groups": 0}
    assert [(r["id"], r["city"], r["wd_majority_value"]) for r in plain.sample] == [
        (3, "bostn", "boston"), (5, "y", "x"), (9, "Boston", "boston")]
    compound = found["places.zip+st->city.functional_dependency"]
    # (1,a): bostn; (2,a): x and y tie, both rows fail; (4,b): Boston
    assert (compound.failing, compound.columns) == (4, ["zip", "st", "city"])
    assert compound.details == {"groups_in_conflict": 3, "rows_in_conflict": 8, "tied_groups": 1}
    assert [(r["id"], r["wd_majority_value"]) for r in compound.sample] == [(3, "boston"), (4, None), (5, None),
                                                                          (9, "boston")]
    nulls = found["with_nulls"]  # zip 3: NULL and c tie
    assert (nulls.failing, nulls.details["tied_groups"], nulls.details["groups_in_conflict"]) == (5, 1, 4)
    tolerated = found["tolerated"]
    assert (tolerated.status, tolerated.failing, tolerated.total) == ("pass", 2, 9)  # NULL <> '4' is not true
    # the recorded SQL reproduces the failing rows
    with Sandbox(database.url) as box:
        rows = box.query(plain.sql or "").as_dicts()
    assert [r["id"] for r in rows] == [3, 5, 9]


def test_functional_dependency_on_an_empty_table(database, tmp_path):
    database.create_table("places", {"id": "int", "zip": "text", "st": "text", "city": "text"})
    found = run(database, "tables:\n  places:\n    - functional_dependency: {determinant: [zip], dependent: city}\n",
                tmp_path)
    f = found["places.zip->city.functional_dependency"]
    assert (f.status, f.failing, f.total, f.details["groups_in_conflict"]) == ("pass", 0, 0, 0)


STAYS = [(1, "2020-01-01", "2020-01-05"), (2, "2020-01-05", "2020-01-01"), (3, "2020-01-01", None),
         (4, "2020-01-03", "2020-01-03")]


def test_expression_long_and_short_forms_and_null_handling(database, tmp_path):
    database.create_table("stays", {"id": "int", "admit_date": "date", "discharge_date": "date"}, STAYS)
    found = run(database, """\
tables:
  stays:
    - expression: {condition: "discharge_date >= admit_date"}
    - expression: {condition: "discharge_date >= admit_date", nulls: fail, name: strict}
    - expression: "id > 0"
    - expression: {condition: "discharge_date >= admit_date", where: "id > 2", name: filtered}
""", tmp_path)
    default = found["stays.expression(discharge_date >= admit_date)"]
    assert (default.status, default.failing, default.total) == ("fail", 1, 4)
    assert [r["id"] for r in default.sample] == [2]
    strict = found["strict"]  # the NULL discharge date fails too
    assert (strict.failing, sorted(r["id"] for r in strict.sample)) == (2, [2, 3])
    assert (found["stays.expression(id > 0)"].status, found["stays.expression(id > 0)"].failing) == ("pass", 0)
    assert (found["filtered"].failing, found["filtered"].total) == (0, 2)


def test_an_invalid_expression_is_an_error_and_the_other_checks_still_run(database, tmp_path):
    database.create_table("stays", {"id": "int", "admit_date": "date", "discharge_date": "date"}, STAYS)
    found = run(database, """\
tables:
  stays:
    - expression: {condition: "discharge_date >= ; DROP TABLE stays", name: broken}
    - expression: {condition: "id > 0) OR (1 = 1", name: escape}
    - not_null: discharge_date
""", tmp_path)
    assert found["broken"].status == "error" and "invalid where condition" in (found["broken"].error or "")
    assert found["escape"].status == "error"
    assert (found["stays.discharge_date.not_null"].failing) == 1
    assert database.scalar("SELECT COUNT(*) FROM stays") == 4


def test_pattern_that_must_not_match(database, tmp_path):
    database.create_table("logs", {"id": "int", "kind": "text"},
                          [(1, "select"), (2, "DROP table"), (3, "delete"), (4, None), (5, "xDELETEx")])
    found = run(database, """\
tables:
  logs:
    - pattern: {column: kind, regex: 'DROP|DELETE', match: false}
""", tmp_path)
    f = found["logs.kind.pattern"]
    assert (f.status, f.failing, f.total) == ("fail", 2, 5)  # case-sensitive: "delete" is fine
    assert [r["id"] for r in f.sample] == [2, 5]


def test_custom_sql_failing_rows_sql_counts_in_the_database_and_samples_its_rows(database, tmp_path):
    database.create_table("events", {"id": "int", "started_at": "int", "ended_at": "int"},
                          [(1, 1, 2), (2, 5, 3), (3, 7, 4), (4, 1, None)])
    seen: list[str] = []
    path = tmp_path / "suite.yaml"
    path.write_text("""\
custom_sql:
  - name: bad_rows
    failing_rows_sql: SELECT id, started_at, ended_at FROM events WHERE ended_at < started_at ORDER BY id
  - name: none_bad
    failing_rows_sql: SELECT * FROM events WHERE id > 100;
  - name: old_form
    sql: SELECT COUNT(*) FROM events WHERE ended_at < started_at
  - name: writes
    failing_rows_sql: DELETE FROM events
""")
    with Sandbox(database.url) as box:
        box.on_execute(seen.append)
        doc = scan(box, load_suite(path).checks)
    found = {f.name: f for f in doc.findings}
    assert (found["bad_rows"].status, found["bad_rows"].failing) == ("fail", 2)
    assert found["bad_rows"].sample == [{"id": 2, "started_at": 5, "ended_at": 3},
                                        {"id": 3, "started_at": 7, "ended_at": 4}]
    assert found["bad_rows"].sql == ("SELECT id, started_at, ended_at FROM events WHERE ended_at < started_at "
                                     "ORDER BY id")
    assert (found["none_bad"].status, found["none_bad"].failing) == ("pass", 0)
    assert (found["old_form"].status, found["old_form"].failing) == ("fail", 2)
    assert found["writes"].status == "error"
    assert any("COUNT(*)" in sql.upper() and "wd_failing" in sql for sql in seen)  # counted by the database
    assert database.scalar("SELECT COUNT(*) FROM events") == 4


def test_custom_sql_needs_one_of_the_two_queries(tmp_path):
    path = tmp_path / "suite.yaml"
    path.write_text("custom_sql:\n  - name: both\n    sql: SELECT 1\n    failing_rows_sql: SELECT 1\n")
    with pytest.raises(SuiteError,
                       match="suite.yaml:2: custom_sql\\[0\\]: give one of 'sql' and 'failing_rows_sql'"):
        load_suite(path)


USERS = {"id": "int", "email": "text", "score": "real", "born": "date"}
DATE = {"sqlite": "DATE", "postgresql": "DATE", "mariadb": "DATE"}


def create_users(database, columns: dict[str, str]) -> None:
    """Like create_table, but a ``date`` column is declared DATE on SQLite too (tests/dbs.py makes it TEXT)."""
    from tests.dbs import TYPES

    q = database.quote
    cols = ", ".join(f"{q(c)} {DATE[database.kind] if t == 'date' else TYPES[t][database.kind]}"
                     for c, t in columns.items())
    database.run(f"CREATE TABLE {q('users')} ({cols})")


def test_schema_declared_columns_and_generic_types(database, tmp_path):
    create_users(database, USERS)
    found = run(database, """\
tables:
  users:
    - schema: {columns: {id: integer, email: text}, allow_extra: true}
    - schema: {columns: {id: text, email: string, score: float, born: date, phone: any}, name: strict}
""", tmp_path)
    ok = found["users.schema"]
    assert (ok.status, ok.failing, ok.total) == ("pass", 0, None)
    assert [c["name"] for c in ok.details["columns"]] == ["id", "email", "score", "born"]
    strict = found["strict"]
    assert strict.status == "fail" and strict.failing == 2
    assert strict.details["missing"] == ["phone"]
    wrong = [(w["column"], w["expected"], w["actual"]) for w in strict.details["wrong_type"]]
    assert wrong == [("id", "text", "integer")]
    assert strict.details["extra"] == []


def test_schema_rejects_unknown_types_with_file_and_line(tmp_path):
    path = tmp_path / "suite.yaml"
    path.write_text("tables:\n  users:\n    - schema:\n        columns: {id: integr}\n")
    with pytest.raises(SuiteError, match="suite.yaml:4: .*unknown type 'integr'"):
        load_suite(path)


def test_schema_on_a_missing_table_is_an_error(database, tmp_path):
    database.create_table("users", USERS)
    found = run(database, "tables:\n  nope:\n    - schema: {columns: {id: integer}}\n    - schema_changes: {}\n",
                tmp_path)
    assert found["nope.schema"].status == "error" and "nope" in (found["nope.schema"].error or "")


def test_schema_changes_against_the_previous_run(database, tmp_path):
    database.create_table("users", USERS, [(1, "a@x", 1.5, "2000-01-01")])
    suite = "tables:\n  users:\n    - schema_changes: {}\n"
    first = run(database, suite, tmp_path)["users.schema_changes"]
    assert (first.status, first.failing, first.details["previous_run"]) == ("pass", 0, None)
    history = {"users.schema_changes": [{"run_id": "r1", "started_at": "2026-01-01T00:00:00Z",
                                         "finding": first.to_json_dict()}]}
    same = run(database, suite, tmp_path, history)["users.schema_changes"]
    assert (same.status, same.failing, same.details["previous_run"]) == ("pass", 0, "r1")
    database.run(f"DROP TABLE {database.quote('users')}")
    database.create_table("users", {"id": "text", "email": "text", "born": "date", "phone": "text"})
    changed = run(database, suite, tmp_path, history)["users.schema_changes"]
    assert (changed.status, changed.failing) == ("fail", 3)
    assert changed.details["added"] == ["phone"] and changed.details["removed"] == ["score"]
    assert [(c["column"], c["old"], c["new"]) for c in changed.details["type_changed"]] == [("id", "integer", "text")]


CONTRACT = """\
tables:
  hospital:
    - functional_dependency: {determinant: [zip], dependent: city}   # name: hospital.zip->city.functional_dependency
    - expression: {condition: "discharge_date >= admit_date"}
    - pattern: {column: kind, regex: 'DROP|DELETE', match: false}
    - schema: {columns: {id: integer, email: text}, allow_extra: true}
    - schema_changes: {}                      # against the audit's previous run; passes when there is none
    - row_count:
        anomaly: {timestamp_column: created_at, bucket: day, training: 28d}   # sensitivity, direction optional
    - not_null:
        column: email
        anomaly: {}                           # the failing rate against this audit's run history
custom_sql:
  - name: bad_rows
    failing_rows_sql: SELECT * FROM events WHERE ended_at < started_at
"""


def test_the_issue_contract_suite_works_as_written(database, tmp_path):
    from datetime import UTC, datetime, timedelta

    day = datetime.now(UTC).replace(tzinfo=None, hour=0, minute=0, second=0, microsecond=0)
    rows = [(i, "02139", "cambridge" if i != 5 else "cambrdge", "note", None if i == 2 else "e@x", "2020-01-01",
             "2020-01-03" if i != 7 else "2019-12-31", day - timedelta(days=i % 20 + 1, hours=-6))
            for i in range(1, 41)]
    columns = {"id": "int", "zip": "text", "city": "text", "kind": "text", "email": "text", "admit_date": "date",
               "discharge_date": "date", "created_at": "timestamp"}
    database.create_table("hospital", columns, rows)
    database.create_table("events", {"id": "int", "started_at": "int", "ended_at": "int"}, [(1, 2, 1), (2, 1, 2)])
    found = run(database, CONTRACT, tmp_path)
    assert list(found) == ["hospital.zip->city.functional_dependency",
                           "hospital.expression(discharge_date >= admit_date)", "hospital.kind.pattern",
                           "hospital.schema", "hospital.schema_changes", "hospital.row_count",
                           "hospital.email.not_null", "bad_rows"]
    figures = {name: (f.status, f.failing) for name, f in found.items()}
    assert figures == {
        "hospital.zip->city.functional_dependency": ("fail", 1),
        "hospital.expression(discharge_date >= admit_date)": ("fail", 1),
        "hospital.kind.pattern": ("pass", 0),
        "hospital.schema": ("pass", 0),
        "hospital.schema_changes": ("pass", 0),
        "hospital.row_count": ("pass", None),       # 2 rows a day, every day: usual
        "hospital.email.not_null": ("pass", 1),     # no history: not judged, no threshold
        "bad_rows": ("fail", 1),
    }
    assert found["hospital.zip->city.functional_dependency"].sample[0]["wd_majority_value"] == "cambridge"
    assert found["hospital.row_count"].details["anomaly"]["expected"] == 2


DENIED = {"sqlite": "load_extension('x') IS NULL", "postgresql": "pg_sleep(1) IS NULL", "mariadb": "sleep(1) = 0"}


def test_an_expression_goes_through_the_sandbox(database, tmp_path):
    database.create_table("stays", {"id": "int", "admit_date": "date", "discharge_date": "date"}, STAYS)
    suite = f"tables:\n  stays:\n    - expression: {{condition: \"{DENIED[database.kind]}\", name: x}}\n"
    found = run(database, suite, tmp_path)
    assert found["x"].status == "error" and "not allowed" in (found["x"].error or "")


def test_sqlite_iso_text_timestamps_with_a_t_fall_in_the_right_hour(make_database, tmp_path):
    from datetime import UTC, datetime, timedelta

    db = make_database("sqlite")
    hour = datetime.now(UTC).replace(tzinfo=None, minute=0, second=0, microsecond=0)
    stamps = [(h, (hour - timedelta(hours=h) + timedelta(minutes=30)).isoformat()) for h in range(1, 12)
              for _ in range(9 if h == 1 else 3)]
    db.create_table("t", {"id": "int", "at": "text"}, stamps + [(0, (hour + timedelta(seconds=5)).isoformat())])
    a = run(db, "tables:\n  t:\n    - row_count: {anomaly: {timestamp_column: at, bucket: hour, training: 8h}}\n",
            tmp_path)["t.row_count"].details["anomaly"]
    assert (a["value"], a["expected"], a["training_points"], a["anomalous"]) == (9, 3, 8, True)


def test_reports_describe_the_new_types_and_escape_column_names():
    from watchdog.findings import FindingsDoc, Summary
    from watchdog.report import render_markdown
    from watchdog.report.html import render_html

    evil = "<script>x</script>|"
    findings = [
        Finding(name="t.zip->city.functional_dependency", check="functional_dependency", table="t", column="city",
                columns=["zip", "city"], status="fail", failing=3, total=13, rate=3 / 13,
                details={"groups_in_conflict": 3, "rows_in_conflict": 9, "tied_groups": 1}),
        Finding(name="t.schema", check="schema", table="t", status="fail", failing=2,
                details={"missing": [evil], "wrong_type": [{"column": "id", "expected": "text", "actual": "integer",
                                                             "actual_type": "INTEGER"}], "extra": [], "columns": []}),
        Finding(name="t.row_count", check="row_count", table="t", status="fail", total=40, observed=40,
                details={"anomaly": {"metric": "value", "source": "buckets", "bucket": "day", "timestamp_column": "at",
                                     "training": "28d", "value": 40, "expected": 10, "low": 9, "high": 11,
                                     "training_points": 12, "reason": "above the expected range", "anomalous": True,
                                     "judged": [{"at": "2026-01-02T00:00:00+00:00", "value": 40, "low": 9,
                                                 "high": 11, "anomalous": True}],
                                     "series": [{"at": "2026-01-01T00:00:00+00:00", "value": 10},
                                                {"at": "2026-01-02T00:00:00+00:00", "value": 40}]}}),
    ]
    doc = FindingsDoc(database="sqlite:///x.db", started_at="2026-01-03T00:00:00Z", duration_s=0.1,
                      summary=Summary.of(findings), findings=findings)
    md = render_markdown(doc)
    assert "- Groups of equal zip with more than one city: 3 (9 rows), 1 of them tied" in md
    assert "- Column id: expected text, is integer (INTEGER)." in md
    assert "- 40 rows." in md and "expected at least 1" not in md
    assert ("- Anomaly (per day of at, training 28d): rows 40 in the last complete day; expected 9 to 11 "
            "(typical 10, from 12 training points): above the expected range.") in md
    assert "<script>x</script>|" not in md
    html = render_html(doc)
    assert "<script>" not in html and "&lt;script&gt;" in html
    svg = html[html.index("<svg"):html.index("</svg>")]
    assert "<rect" in svg and "<polyline" in svg and 'fill="#cc0000"' in svg  # band, series, the anomalous day
    assert "2 column(s) in question" in html
