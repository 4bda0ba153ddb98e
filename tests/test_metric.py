"""``metric`` and ``distribution`` on SQLite, PostgreSQL, MariaDB and DuckDB alike.

Every expected number is worked out by hand from the rows below (percentiles: linear between the closest ranks,
as ``percentile_cont``; position ``h = (n - 1) p`` from 0).
"""

from __future__ import annotations

import json
import math
from pathlib import Path

import pytest

from tests.dbs import KINDS
from watchdog.findings import Finding
from watchdog.sandbox import Sandbox
from watchdog.scan.planner import plan
from watchdog.scan.scanner import scan, with_column_types
from watchdog.scan.suites import SuiteError, load_suites

ENGINES = (*KINDS, "duckdb")
COLUMNS = {"id": "int", "amount": "real", "code": "text", "status": "text", "blanks": "real"}
# amount: 10, 20, 20, 40 and two NULLs -> n 4, mean 22.5, squares of deviations 156.25 + 6.25 + 6.25 + 306.25 = 475
ROWS = [
    (1, 10.0, "5", "a", None),
    (2, 20.0, "7", "a", None),
    (3, 20.0, "?", "b", None),  # a marker
    (4, None, "x", "c", None),  # not a number
    (5, 40.0, "", None, None),  # '' marker, and blank
    (6, None, "0", "a", None),  # '0' is a marker here, though it is a number too
]

SUITE = """
tables:
  sales:
    null_values: ['', '?', '0']
    checks:
      - metric: {column: amount, agg: avg, min: 10, max: 500}
      - metric: {column: amount, agg: sum}
      - metric: {column: amount, agg: min}
      - metric: {column: amount, agg: max, max: 30, warn: {max: 25}}
      - metric: {column: amount, agg: count}
      - metric: {column: amount, agg: distinct}
      - metric: {column: amount, agg: stddev}
      - metric: {column: amount, agg: median}
      - metric: {column: amount, agg: p05}
      - metric: {column: amount, agg: p25}
      - metric: {column: amount, agg: p75}
      - metric: {column: amount, agg: p95, warn: {max: 30}}
      - metric: {column: code, agg: null_rate}
      - metric: {column: code, agg: blank_rate}
      - metric: {column: code, agg: count}
      - metric: {column: code, agg: distinct}
      - metric: {column: code, agg: sum, numeric_text: true}
      - metric: {column: code, agg: avg, numeric_text: true}
      - metric: {column: code, agg: avg, numeric_text: true, name: code_avg_no_markers, null_values: []}
      - metric: {column: blanks, agg: avg, min: 0}
      - metric: {column: blanks, agg: sum}
      - metric: {column: blanks, agg: count}
      - metric: {column: blanks, agg: median, warn: {min: 0}}
      - metric: {column: amount, agg: avg, name: amount_where, where: "id <= 2"}
  one:
    - metric: {column: amount, agg: median}
    - metric: {column: amount, agg: p95}
    - metric: {column: amount, agg: stddev}
    - metric: {column: amount, agg: avg}
  empty:
    - metric: {column: amount, agg: avg, min: 0}
    - metric: {column: amount, agg: sum}
    - metric: {column: amount, agg: count}
    - metric: {column: amount, agg: null_rate}
    - metric: {column: amount, agg: p25}
"""

#: name -> (status, observed, extra details)
EXPECTED = {
    "sales.amount.avg": ("pass", 22.5, {}),
    "sales.amount.sum": ("pass", 90.0, {}),
    "sales.amount.min": ("pass", 10.0, {}),
    "sales.amount.max": ("fail", 40.0, {}),
    "sales.amount.count": ("pass", 4, {}),
    "sales.amount.distinct": ("pass", 3, {}),
    "sales.amount.stddev": ("pass", 12.5830573921, {}),  # sqrt(475 / 3)
    "sales.amount.median": ("pass", 20.0, {}),  # h = 1.5: between the tied 20 and 20
    "sales.amount.p05": ("pass", 11.5, {}),  # h = 0.15: 10 + 0.15 * 10
    "sales.amount.p25": ("pass", 17.5, {}),  # h = 0.75: 10 + 0.75 * 10
    "sales.amount.p75": ("pass", 25.0, {}),  # h = 2.25: 20 + 0.25 * 20
    "sales.amount.p95": ("warn", 37.0, {}),  # h = 2.85: 20 + 0.85 * 20
    "sales.code.null_rate": ("pass", 0.5, {"rows": 6}),  # '?', '' and '0' of 6
    "sales.code.blank_rate": ("pass", 0.166666666667, {"rows": 6}),  # ''
    "sales.code.count": ("pass", 3, {}),  # '5', '7', 'x'
    "sales.code.distinct": ("pass", 3, {}),
    "sales.code.sum": ("pass", 12.0, {"not_numeric": 1}),  # 5 + 7; 'x'
    "sales.code.avg": ("pass", 6.0, {"not_numeric": 1}),
    "code_avg_no_markers": ("pass", 4.0, {"not_numeric": 3}),  # 5, 7, 0; '?', 'x', ''
    "sales.blanks.avg": ("fail", None, {}),  # no value: the bound cannot be met
    "sales.blanks.sum": ("pass", 0.0, {}),
    "sales.blanks.count": ("pass", 0, {}),
    "sales.blanks.median": ("warn", None, {}),
    "amount_where": ("pass", 15.0, {}),
    "one.amount.median": ("pass", 7.0, {}),
    "one.amount.p95": ("pass", 7.0, {}),
    "one.amount.stddev": ("pass", None, {}),  # one value: no sample deviation
    "one.amount.avg": ("pass", 7.0, {}),
    "empty.amount.avg": ("fail", None, {}),
    "empty.amount.sum": ("pass", 0.0, {}),
    "empty.amount.count": ("pass", 0, {}),
    "empty.amount.null_rate": ("pass", None, {}),
    "empty.amount.p25": ("pass", None, {}),
}


def checks_of(tmp_path: Path, text: str) -> list:
    path = tmp_path / "suite.yaml"
    path.write_text(text, encoding="utf-8")
    return [check for suite in load_suites([path]) for check in suite.checks]


@pytest.fixture(params=ENGINES)
def db(request: pytest.FixtureRequest, make_database):
    made = make_database(request.param)
    made.create_table("sales", COLUMNS, ROWS)
    made.create_table("one", {"amount": "real"}, [(7.0,)])
    made.create_table("empty", {"amount": "real"}, [])
    return made


def test_every_metric_on_every_engine(db, tmp_path: Path):
    with Sandbox(db.url) as sandbox:
        doc = scan(sandbox, checks_of(tmp_path, SUITE), sample=0)
    got = {f.name: f for f in doc.findings}
    assert set(got) == set(EXPECTED)
    for name, (status, observed, details) in EXPECTED.items():
        f = got[name]
        assert (f.status, f.observed) == (status, observed), (name, f.status, f.observed, f.error)
        for key, value in details.items():
            assert f.details[key] == value, (name, key, f.details)
    assert "note" in got["sales.blanks.avg"].details and "stddev needs two" in got["one.amount.stddev"].details["note"]


def test_metrics_add_no_statement_except_percentiles_where_there_is_no_percentile_aggregate(db, tmp_path: Path):
    """Everything but a percentile on SQLite and MariaDB rides in the table's one aggregate statement."""
    suite = """
tables:
  sales:
    - not_null: amount
    - metric: {column: amount, agg: avg}
    - metric: {column: amount, agg: stddev}
    - metric: {column: code, agg: null_rate}
    - metric: {column: amount, agg: median}
"""
    with Sandbox(db.url) as sandbox:
        checks = with_column_types(sandbox, checks_of(tmp_path, suite))
        statements = plan(checks, sandbox.dialect).statements
    by_ranks = sandbox.dialect in ("sqlite", "strictsqlite", "mysql")
    assert len(statements) == (2 if by_ranks else 1)


def _history(findings: list[Finding]) -> dict[str, list[dict]]:
    return {f.name: [{"run_id": "run-1", "started_at": "2026-01-01T00:00:00Z",
                      "finding": json.loads(json.dumps(f.to_json_dict()))}] for f in findings}


def psi(pairs: list[tuple[float, float]]) -> float:
    total = 0.0
    for e, a in pairs:
        e, a = max(e, 0.0001), max(a, 0.0001)
        total += (a - e) * math.log(a / e)
    return total


DISTRIBUTIONS = """
tables:
  mix:
    null_values: ['?']
    checks:
      - distribution: {column: status, max_psi: 0.2}
      - distribution: {column: status, name: fixed, baseline: {a: 0.5, b: 0.3, c: 0.2}}
      - distribution: {column: amount, warn: {max_psi: 0.1}, max_psi: 5}
"""


def test_distribution_against_the_previous_run_and_a_baseline(db, tmp_path: Path):
    db.create_table("mix", {"status": "text", "amount": "real"},
                    [("a", 1.0), ("a", 2.0), ("a", 3.0), ("a", 4.0), ("b", 5.0), ("b", 6.0), ("b", 7.0), ("?", 8.0),
                     ("c", 9.0), ("c", 10.0)])
    checks = checks_of(tmp_path, DISTRIBUTIONS)
    with Sandbox(db.url) as sandbox:
        first = {f.name: f for f in scan(sandbox, checks, sample=0).findings}
    status, fixed, amount = first["mix.status.distribution"], first["fixed"], first["mix.amount.distribution"]
    assert (status.status, status.observed) == ("pass", None) and "no baseline" in status.details["note"]
    assert (amount.status, amount.observed) == ("pass", None)
    assert amount.details["shares"]["edges"] == [float(v) for v in range(1, 10)]  # nearest rank: 1 .. 9
    assert amount.details["shares"]["values"] == [0.1] * 10
    # a 0.4, b 0.3, c 0.2, NULL ('?') 0.1 against a 0.5, b 0.3, c 0.2
    assert fixed.observed == pytest.approx(psi([(0.5, 0.4), (0.3, 0.3), (0.2, 0.2), (0.0, 0.1)]), abs=1e-9)
    assert fixed.status == "fail" and {b["value"] for b in fixed.details["buckets"]} == {"a", "b", "c", None}

    db.insert("mix", ["status", "amount"], [("c", float(v)) for v in range(11, 21)])  # c gains 10 rows
    with Sandbox(db.url) as sandbox:
        second = {f.name: f for f in scan(sandbox, checks, sample=0, history=_history(list(first.values()))).findings}
    status, amount = second["mix.status.distribution"], second["mix.amount.distribution"]
    # 20 rows: a 4, b 3, c 12, NULL 1 against the first run's a 0.4, b 0.3, c 0.2, NULL 0.1
    want = psi([(0.4, 0.2), (0.3, 0.15), (0.2, 0.6), (0.1, 0.05)])
    assert status.observed == pytest.approx(want, abs=1e-9) and status.status == "fail"
    assert status.details["baseline"] == "run run-1"
    # 1..20 in the first run's edges 1..9: nine buckets of 1/20, then 11/20 above 9; each expected 0.1
    want = psi([(0.1, 0.05)] * 9 + [(0.1, 0.55), (0.0, 0.0)])
    assert amount.observed == pytest.approx(want, abs=1e-9) and amount.status == "warn"
    assert [b["actual"] for b in amount.details["buckets"]] == [0.05] * 9 + [0.55, 0.0]


def test_distribution_of_an_empty_table_and_ties(db, tmp_path: Path):
    db.create_table("mix", {"status": "text", "amount": "real"}, [])
    checks = checks_of(tmp_path, DISTRIBUTIONS)
    with Sandbox(db.url) as sandbox:
        first = {f.name: f for f in scan(sandbox, checks, sample=0).findings}
    assert {f.status for f in first.values()} == {"pass", "fail"}
    assert first["mix.amount.distribution"].details["shares"] is None
    assert first["fixed"].status == "fail" and "no rows" in first["fixed"].details["note"]
    db.insert("mix", ["status", "amount"], [("a", 5.0)] * 8 + [("b", None), ("b", 9.0)])
    with Sandbox(db.url) as sandbox:
        second = {f.name: f for f in scan(sandbox, checks, sample=0, history=_history(list(first.values()))).findings}
    amount = second["mix.amount.distribution"]
    assert amount.status == "pass" and amount.observed is None  # the empty run is no baseline
    # 9 values: ranks ceil(k 9 / 10) = 1, 2, 3, 4, 5, 6, 7, 8, 9 -> 5 (ties) up to rank 8, then 9: two edges
    assert amount.details["shares"] == {"mode": "deciles", "edges": [5.0, 9.0], "values": [0.8, 0.1, 0.0],
                                        "null": 0.1}


def test_bad_options_are_reported_with_file_and_line(tmp_path: Path):
    bad = """
tables:
  sales:
    - metric: {column: amount, agg: averag}
    - metric: {column: amount, agg: p5}
    - metric: {column: amount, agg: avg, max: 10, warn: {max: 50}}
    - distribution: {column: status, baseline: {a: 0.5, b: 0.2}}
    - distribution: {column: status, anomaly: {timestamp_column: ts}}
"""
    with pytest.raises(SuiteError) as info:
        checks_of(tmp_path, bad)
    text = str(info.value)
    assert "suite.yaml:4: tables.sales[0].metric.agg: unknown agg 'averag' (did you mean 'avg'?)" in text
    assert "suite.yaml:5:" in text and "did you mean 'p05'?" in text
    assert "suite.yaml:6:" in text and "warn.max (50) is above max (10)" in text
    assert "suite.yaml:7:" in text and "add up to 0.7" in text
    assert "suite.yaml:8:" in text and "cannot be bucketed" in text


def test_a_numeric_aggregate_on_text_says_to_use_numeric_text(make_database, tmp_path: Path):
    made = make_database("sqlite")
    made.create_table("sales", COLUMNS, ROWS)
    suite = ("tables:\n  sales:\n    - metric: {column: code, agg: avg}\n"
             "    - distribution: {column: code, buckets: deciles}\n")
    with Sandbox(made.url) as sandbox:
        doc = scan(sandbox, checks_of(tmp_path, suite))
    assert doc.findings[0].status == "error" and "numeric_text: true" in (doc.findings[0].error or "")
    assert doc.findings[1].status == "error" and "deciles read numbers" in (doc.findings[1].error or "")


def test_anomaly_on_a_metric_uses_the_run_history(make_database, tmp_path: Path):
    made = make_database("sqlite")
    made.create_table("one", {"amount": "real"}, [(7.0,)])
    checks = checks_of(tmp_path, "tables:\n  one:\n    - metric: {column: amount, agg: avg, anomaly: {}}\n")
    past = [{"run_id": f"r{i}", "started_at": f"2026-01-0{i + 1}T00:00:00Z",
             "finding": {"status": "pass", "observed": 100.0 + i % 2}} for i in range(7)]
    with Sandbox(made.url) as sandbox:
        f = scan(sandbox, checks, sample=0, history={"one.amount.avg": past}).findings[0]
    assert f.status == "fail" and f.details["anomaly"]["anomalous"] and f.details["anomaly"]["metric"] == "value"


@pytest.fixture(scope="module")
def spark_db(spark_admin_url: str):
    from tests.spark_server import create_spark_database

    made = create_spark_database(spark_admin_url)
    yield made
    made.close()


def test_the_same_metrics_and_distributions_on_spark(spark_db, tmp_path: Path):
    """Spark's exact ``percentile`` and window functions give the hand-computed numbers too, numbers stored as text
    included."""
    spark_db.create_table("sales", COLUMNS, ROWS)
    spark_db.create_table("one", {"amount": "real"}, [(7.0,)])
    spark_db.create_table("empty", {"amount": "real"}, [])
    spark_db.create_table("mix", {"status": "text", "amount": "real"},
                          [("a", 1.0), ("a", 2.0), ("a", 3.0), ("a", 4.0), ("b", 5.0), ("b", 6.0), ("b", 7.0),
                           ("?", 8.0), ("c", 9.0), ("c", 10.0)])
    suite = SUITE + "\n" + "\n".join(DISTRIBUTIONS.splitlines()[2:])
    with Sandbox(spark_db.url) as sandbox:
        got = {f.name: f for f in scan(sandbox, checks_of(tmp_path, suite), sample=0).findings}
    for name, (status, observed, _) in EXPECTED.items():
        if name in got:
            assert (got[name].status, got[name].observed) == (status, observed), (name, got[name].error)
    assert got["mix.amount.distribution"].details["shares"]["edges"] == [float(v) for v in range(1, 10)]
    assert got["fixed"].observed == pytest.approx(psi([(0.5, 0.4), (0.3, 0.3), (0.2, 0.2), (0.0, 0.1)]), abs=1e-9)


def test_an_audit_compares_with_its_previous_run_through_the_history(tmp_path: Path):
    """Two runs of a configured audit: the second reads the first's shares from the history store."""
    import sqlite3

    from watchdog.run.audit import execute_audit
    from watchdog.settings import load_settings

    root = tmp_path / "project"
    (root / "config").mkdir(parents=True)
    (root / "checks").mkdir()
    (root / "data").mkdir()
    (root / "checks" / "shop.yaml").write_text(
        "tables:\n  items:\n    - distribution: {column: kind, max_psi: 0.2}\n"
        "    - metric: {column: price, agg: median, max: 100}\n")
    config = root / "config" / "watchdog.yaml"
    config.write_text('base_dir: ..\nstate_dir: state\ndatabases:\n  shop: {url: "sqlite:///data/shop.db"}\n'
                      'history: {url: "sqlite:///history.db"}\naudits:\n  shop:\n    database: shop\n'
                      '    checks: [checks/shop.yaml]\n    deliver:\n      - file: {dir: reports}\n')
    db = root / "data" / "shop.db"

    def write(kinds: list[str]) -> None:
        with sqlite3.connect(db) as conn:
            conn.execute("DROP TABLE IF EXISTS items")
            conn.execute("CREATE TABLE items (kind TEXT, price REAL)")
            conn.executemany("INSERT INTO items VALUES (?, ?)", [(k, float(i)) for i, k in enumerate(kinds)])

    settings = load_settings(config)
    write(["a"] * 5 + ["b"] * 5)
    execute_audit(settings, "shop")
    write(["a"] * 9 + ["b"])
    second = execute_audit(settings, "shop")
    findings = {f["name"]: f for f in json.loads((second.run_dir / "findings.json").read_text())["findings"]}
    distribution = findings["items.kind.distribution"]
    # a 0.9, b 0.1 against a 0.5, b 0.5
    assert distribution["observed"] == pytest.approx(psi([(0.5, 0.9), (0.5, 0.1)]), abs=1e-9)
    assert distribution["status"] == "fail" and distribution["details"]["baseline"].startswith("run ")
    assert findings["items.price.median"]["observed"] == 4.5  # 0..9: h = 4.5


def test_a_percentile_is_refused_where_no_interpolation_is_known_to_match(tmp_path: Path):
    """Trino has only an approximate percentile: refused with a clear error, not a different number."""
    checks = checks_of(tmp_path, "tables:\n  sales:\n    - metric: {column: amount, agg: median}\n"
                                 "    - metric: {column: amount, agg: avg}\n")
    result = plan(checks, "trino")
    assert "percentiles (median, p01..p99) run on SQLite" in result.errors["sales.amount.median"]
    assert "sales.amount.avg" not in result.errors


def test_anomaly_per_day_on_a_metric(db, tmp_path: Path):
    """``anomaly: {timestamp_column}`` on a metric: the average per day over 28 days, then a jump on the last
    complete day (the current day is never judged)."""
    from datetime import UTC, datetime, timedelta

    today = datetime.now(UTC).replace(hour=0, minute=0, second=0, microsecond=0, tzinfo=None)
    rows = []
    for back in range(1, 29):
        day = today - timedelta(days=back)
        values = (1000.0, 1000.0) if back == 1 else (10.0 + back % 3, 12.0)  # the last complete day jumps
        rows += [(day + timedelta(hours=h), v) for h, v in zip((3, 15), values, strict=True)]
    rows.append((today + timedelta(minutes=5), 5000.0))  # today: not judged
    db.create_table("daily", {"at": "timestamp", "amount": "real"},
                    [(at.strftime("%Y-%m-%d %H:%M:%S") if db.kind == "sqlite" else at, v) for at, v in rows])
    suite = ("tables:\n  daily:\n    - metric: {column: amount, agg: avg, anomaly: {timestamp_column: at, "
             "detection: 1}}\n    - metric: {column: amount, agg: null_rate, name: nulls, anomaly: "
             "{timestamp_column: at, detection: 1}}\n"
             "    - metric: {column: amount, agg: median, anomaly: {timestamp_column: at, detection: 1}}\n")
    with Sandbox(db.url) as sandbox:
        got = {f.name: f for f in scan(sandbox, checks_of(tmp_path, suite), sample=0).findings}
    avg = got["daily.amount.avg"]
    assert avg.status == "fail", avg.error
    assert avg.details["anomaly"]["source"] == "buckets" and avg.details["anomaly"]["value"] == 1000.0
    assert got["nulls"].status == "pass" and got["nulls"].details["anomaly"]["value"] == 0.0
    median = got["daily.amount.median"]
    if db.kind in ("sqlite", "mariadb"):  # no percentile aggregate to GROUP BY: refused, not approximated
        assert median.status == "error" and "a percentile per bucket needs PostgreSQL" in (median.error or "")
    else:
        assert median.status == "fail" and median.details["anomaly"]["value"] == 1000.0


def test_reports_say_what_a_metric_and_a_distribution_measured(make_database, tmp_path: Path):
    from watchdog.report.rules_view import anomaly_lines, rule_lines

    made = make_database("sqlite")
    made.create_table("sales", COLUMNS, ROWS)
    suite = ("tables:\n  sales:\n    null_values: ['', '?', '0']\n    checks:\n"
             "      - metric: {column: code, agg: sum, numeric_text: true, max: 1}\n"
             "      - distribution: {column: status, baseline: {a: 0.5, b: 0.5}}\n"
             "      - metric: {column: amount, agg: avg, anomaly: {}}\n")
    past = [{"run_id": f"r{i}", "started_at": f"2026-01-0{i + 1}T00:00:00Z",
             "finding": {"status": "pass", "observed": 22.0 + i % 2}} for i in range(6)]
    with Sandbox(made.url) as sandbox:
        got = {f.name: f for f in scan(sandbox, checks_of(tmp_path, suite), sample=0,
                                       history={"sales.amount.avg": past}).findings}
    assert rule_lines(got["sales.code.sum"]) == ["sum of code: 12.", "Values that are not numbers, left out: 1."]
    # a 3/6, b 1/6, c 1/6, NULL 1/6 against a 0.5, b 0.5: b moved most (50% to 16.67%)
    line = rule_lines(got["sales.status.distribution"])[0]
    assert line.startswith("PSI ") and "against the baseline option (categories); moved most: 'b' 50.00% to 16.67%" \
        in line
    assert anomaly_lines(got["sales.amount.avg"])[0].startswith("Anomaly (against this audit's earlier runs): avg 22.5")
