"""Anomalies: the pure detector (hand-computed bands), bucketed anomalies on SQLite, PostgreSQL and
MariaDB (one GROUP BY, the current bucket never judged), and anomalies against an audit's run history."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest

from watchdog.anomaly_detector import DetectorConfig, judge, judge_point, zscore
from watchdog.findings import Finding
from watchdog.sandbox import Sandbox
from watchdog.scan.scanner import scan
from watchdog.scan.suites import SuiteError, load_suite

# ---- the pure detector


def test_median_and_mad_band_hand_computed():
    # median 11; absolute deviations 1 1 0 2 2 -> MAD 1; spread 1.4826; half-width max(3 x 1.4826, 10% of 11)
    j = judge([10, 12, 11, 13, 9], 16)
    assert j.expected == 11 and j.low == pytest.approx(11 - 4.4478) and j.high == pytest.approx(11 + 4.4478)
    assert j.anomalous and j.reason == "above the expected range" and j.score == pytest.approx(5 / 1.4826)
    assert not judge([10, 12, 11, 13, 9], 15).anomalous
    spike_only = judge([10, 12, 11, 13, 9], 5, DetectorConfig(direction="spike"))
    assert not spike_only.anomalous and "direction is spike" in spike_only.reason
    assert judge([10, 12, 11, 13, 9], 5, DetectorConfig(direction="drop")).anomalous


def test_a_static_series_ignores_a_tiny_change_that_a_zscore_flags():
    static = [1000.0] * 20
    assert zscore(static, 1000.05)  # the plain z-score's failure mode
    j = judge(static, 1000.05)
    assert not j.anomalous and (j.low, j.high) == (900.0, 1100.0)  # min_change 10 %
    assert judge(static, 850).anomalous


def test_a_noisy_series_with_an_outlier_still_sees_a_drop_to_zero():
    training = [100, 120, 80, 110, 90, 1000, 105, 95]
    assert not zscore(training, 0)  # the outlier inflated the standard deviation
    j = judge(training, 0)
    assert j.anomalous and j.low is not None and j.low > 0
    assert not judge([0, 3, 0, 5, 2, 0], 0).anomalous  # zeros are usual here


def test_too_little_history_is_never_an_anomaly():
    assert judge([], 5).reason == "too little history: 0 training point(s), 5 needed"
    one = judge([10], 1000)
    assert not one.anomalous and one.training_points == 1 and one.expected is None
    assert judge([10, 10], 1000, DetectorConfig(min_training=2)).anomalous


def test_weekly_seasonality_compares_a_day_with_the_same_weekday():
    monday = datetime(2026, 1, 5, tzinfo=UTC)
    points = [(monday + timedelta(days=i), 100.0 if (monday + timedelta(days=i)).weekday() < 5 else 10.0)
              for i in range(28)]
    saturday = monday + timedelta(days=33)
    weekly = DetectorConfig(seasonality="weekly", min_training=4)
    assert judge_point(points, saturday, 100.0, weekly).anomalous
    assert not judge_point(points, saturday, 10.0, weekly).anomalous
    assert not judge_point(points, saturday + timedelta(days=2), 100.0, weekly).anomalous
    flat = DetectorConfig(seasonality="none")
    assert judge_point(points, saturday, 10.0, flat).anomalous  # without seasonality: a weekday's level
    assert not judge_point(points, saturday, 10.0).anomalous  # auto: the training shows a week
    assert judge_point(points, saturday, 100.0).anomalous


def test_trend_follows_a_line():
    values = [10.0 * i for i in range(10)]
    j = judge(values, 100, DetectorConfig(trend=True))
    assert j.expected == pytest.approx(100) and not j.anomalous
    assert judge(values, 160, DetectorConfig(trend=True)).anomalous


# ---- bucketed anomalies in the database


def _now() -> datetime:
    return datetime.now(UTC).replace(tzinfo=None)


def orders(spike: int = 40) -> list[tuple[Any, ...]]:
    """14 days of 10 rows (1 NULL email each), yesterday ``spike`` rows (half NULL), and 100 rows today."""
    today = _now().replace(hour=0, minute=0, second=0, microsecond=0)
    rows, n = [], 0
    for days_ago in range(1, 15):
        count = spike if days_ago == 1 else 10
        for k in range(count):
            n += 1
            null = k < (count // 2 if days_ago == 1 else 1)
            rows.append((n, None if null else f"u{n}@x", today - timedelta(days=days_ago) + timedelta(hours=6)))
    for _ in range(100):  # today: the current bucket, incomplete, never judged
        n += 1
        rows.append((n, None, today + timedelta(seconds=1)))
    return rows


def scan_suite(database, text: str, tmp_path: Path, history: dict[str, list[dict[str, Any]]] | None = None,
               seen: list[str] | None = None) -> dict[str, Finding]:
    path = tmp_path / "suite.yaml"
    path.write_text(text)
    with Sandbox(database.url) as box:
        if seen is not None:
            box.on_execute(seen.append)
        doc = scan(box, load_suite(path).checks, history=history)
    return {f.name: f for f in doc.findings}


BUCKETED = """\
tables:
  orders:
    - row_count:
        anomaly: {timestamp_column: created_at, bucket: day, training: 28d}
    - not_null:
        column: email
        anomaly: {timestamp_column: created_at, training: 28d}
    - not_null:
        column: id
        name: ids
        anomaly: {timestamp_column: created_at, direction: drop}
"""


def test_bucketed_anomalies_judge_complete_buckets_only(database, tmp_path):
    database.create_table("orders", {"id": "int", "email": "text", "created_at": "timestamp"}, orders())
    seen: list[str] = []
    found = scan_suite(database, BUCKETED, tmp_path, seen=seen)
    yesterday = (_now() - timedelta(days=1)).date().isoformat()
    before = (_now() - timedelta(days=2)).date().isoformat()

    count = found["orders.row_count"]
    a = count.details["anomaly"]
    assert count.status == "fail" and count.observed == 14 * 10 - 10 + 40 + 100
    assert (a["source"], a["bucket"], a["value"]) == ("buckets", "day", 40)
    assert (a["expected"], a["low"], a["high"]) == (10, 9, 11)
    assert a["training_points"] == 12 and a["anomalous"] is True
    judged = [(j["at"][:10], j["value"], j["anomalous"]) for j in a["judged"]]
    assert judged == [(before, 10, False), (yesterday, 40, True)]
    assert len(a["series"]) == 14 and a["series"][-1]["value"] == 40  # days before the first row are not zeros

    rate = found["orders.email.not_null"].details["anomaly"]  # 1 in 10 NULL, yesterday 20 of 40
    assert found["orders.email.not_null"].status == "fail"
    assert (rate["metric"], rate["value"], rate["expected"], rate["high"]) == ("rate", 0.5, 0.1, pytest.approx(0.11))
    ids = found["ids"]  # no NULL ids at all, a spike in volume does not matter: passes without a threshold
    assert ids.status == "pass" and ids.details["anomaly"]["anomalous"] is False

    group_bys = [sql for sql in seen if "GROUP BY" in sql.upper()]
    assert len(group_bys) == 3  # one statement per check, whatever the number of buckets


def test_bucketed_anomaly_on_an_empty_table_and_on_the_first_day(database, tmp_path):
    database.create_table("orders", {"id": "int", "email": "text", "created_at": "timestamp"})
    found = scan_suite(database, BUCKETED, tmp_path)
    count = found["orders.row_count"]
    assert count.status == "pass" and count.details["anomaly"]["reason"] == "no value to judge"
    database.insert("orders", ["id", "email", "created_at"], [(1, "a", _now() - timedelta(days=1))])
    found = scan_suite(database, BUCKETED, tmp_path)
    first = found["orders.row_count"].details["anomaly"]
    assert found["orders.row_count"].status == "pass"
    assert first["value"] == 1 and first["training_points"] == 0 and first["reason"].startswith("too little history")


def test_anomaly_options_are_checked_with_file_and_line(tmp_path):
    path = tmp_path / "suite.yaml"
    path.write_text("""\
tables:
  orders:
    - unique:
        column: id
        anomaly: {timestamp_column: created_at}
    - row_count:
        anomaly: {bucket: day}
    - not_null:
        column: email
        anomaly: {metric: value}
    - freshness: {column: created_at}
""")
    with pytest.raises(SuiteError) as info:
        load_suite(path)
    text = str(info.value)
    assert "suite.yaml:5: tables.orders[0].unique.anomaly: unique cannot be bucketed by timestamp_column" in text
    assert "suite.yaml:7: " in text and "`bucket` needs `timestamp_column`" in text
    assert "suite.yaml:10: " in text
    assert "anomaly metric 'value' is for row_count, freshness, metric and distribution" in text
    assert "missing required option 'max_age' (or `anomaly:`" in text


# ---- anomalies against the run history


def history_of(name: str, values: list[float], key: str = "rate") -> dict[str, list[dict[str, Any]]]:
    start = datetime.now(UTC) - timedelta(days=len(values))
    return {name: [{"run_id": f"r{i}", "started_at": (start + timedelta(days=i)).isoformat(),
                    "finding": {"name": name, "status": "pass", key: v}} for i, v in enumerate(values)]}


HISTORY_SUITE = """\
tables:
  orders:
    - not_null:
        column: email
        anomaly: {}
    - row_count:
        anomaly: {direction: drop}
"""


def test_history_anomaly_first_run_one_run_and_a_drift(database, tmp_path):
    rows = [(i, None if i <= 5 else f"u{i}", _now()) for i in range(1, 11)]  # null rate 0.5
    database.create_table("orders", {"id": "int", "email": "text", "created_at": "timestamp"}, rows)
    first = scan_suite(database, HISTORY_SUITE, tmp_path)["orders.email.not_null"]
    assert first.status == "pass" and first.failing == 5  # no threshold, no history: nothing to judge
    assert first.details["anomaly"]["reason"] == "too little history: 0 training point(s), 5 needed"
    one = scan_suite(database, HISTORY_SUITE, tmp_path, history_of("orders.email.not_null", [0.1]))
    assert one["orders.email.not_null"].status == "pass"
    assert one["orders.email.not_null"].details["anomaly"]["training_points"] == 1
    drift = scan_suite(database, HISTORY_SUITE, tmp_path, history_of("orders.email.not_null", [0.1] * 6))
    a = drift["orders.email.not_null"].details["anomaly"]
    assert drift["orders.email.not_null"].status == "fail"
    assert (a["source"], a["value"], a["expected"], a["low"], a["high"]) == ("history", 0.5, 0.1, 0.09, 0.11)
    assert [p["value"] for p in a["series"]] == [0.1] * 6 + [0.5]
    grown = scan_suite(database, HISTORY_SUITE, tmp_path, history_of("orders.row_count", [5.0] * 6, "observed"))
    assert grown["orders.row_count"].status == "pass"  # 10 rows after 5: a spike, but only drops were asked for
    assert grown["orders.row_count"].details["anomaly"]["reason"] == "outside the range, but direction is drop"


def test_explicit_thresholds_still_apply_with_an_anomaly(database, tmp_path):
    rows = [(i, None if i <= 5 else f"u{i}", _now()) for i in range(1, 11)]
    database.create_table("orders", {"id": "int", "email": "text", "created_at": "timestamp"}, rows)
    found = scan_suite(database, """\
tables:
  orders:
    - not_null: {column: email, max_rate: 0.2, anomaly: {}}
    - freshness: {column: created_at, anomaly: {}}
""", tmp_path, history_of("orders.email.not_null", [0.5] * 6))
    email = found["orders.email.not_null"]
    assert email.details["anomaly"]["anomalous"] is False and email.status == "fail"  # usual, but over max_rate
    fresh = found["orders.created_at.freshness"]
    assert fresh.status == "pass" and fresh.details["anomaly"]["metric"] == "value"


def test_anomalies_through_configured_audit_runs(tmp_path):
    """Six runs at a 10 % null rate, then 50 %: the history store feeds the detector; schema_changes
    compares with the previous run."""
    import sqlite3

    from watchdog.run.audit import execute_audit
    from watchdog.settings import load_settings

    root = tmp_path / "project"
    (root / "config").mkdir(parents=True)
    (root / "checks").mkdir()
    (root / "data").mkdir()
    (root / "checks" / "shop.yaml").write_text(
        "tables:\n  items:\n    - not_null: {column: sku, anomaly: {}}\n    - schema_changes: {}\n")
    config = root / "config" / "watchdog.yaml"
    config.write_text("""\
base_dir: ..
state_dir: state
databases:
  shop: {url: "sqlite:///data/shop.db"}
history: {url: "sqlite:///history.db"}
audits:
  shop:
    database: shop
    checks: [checks/shop.yaml]
    deliver:
      - file: {dir: reports}
""")
    db = root / "data" / "shop.db"

    def write(nulls: int, extra_column: bool = False) -> None:
        with sqlite3.connect(db) as conn:
            conn.execute("DROP TABLE IF EXISTS items")
            conn.execute("CREATE TABLE items (id INTEGER, sku TEXT" + (", note TEXT)" if extra_column else ")"))
            conn.executemany("INSERT INTO items (id, sku) VALUES (?, ?)",
                             [(i, None if i <= nulls else f"S{i}") for i in range(1, 21)])

    settings = load_settings(config)
    write(2)
    runs = [execute_audit(settings, "shop") for _ in range(6)]
    assert [r.status for r in runs] == ["passed"] * 6
    write(10, extra_column=True)
    last = execute_audit(settings, "shop")
    findings = {f.name: f for f in last.scan.doc.findings}  # type: ignore[union-attr]
    sku = findings["items.sku.not_null"]
    assert sku.status == "fail" and sku.details["anomaly"]["training_points"] == 6
    assert (sku.details["anomaly"]["expected"], sku.details["anomaly"]["value"]) == (0.1, 0.5)
    drift = findings["items.schema_changes"]
    assert drift.status == "fail" and drift.details["added"] == ["note"]
    assert drift.details["previous_run"] == runs[-1].run_id
    html = (last.run_dir / "report.html").read_text()
    assert "<svg" in html and "expected 9.00% to 11.00%" in html


def test_hour_and_week_buckets_and_bucketed_freshness(database, tmp_path):
    now = _now()
    hour = now.replace(minute=0, second=0, microsecond=0)
    week = now.replace(hour=0, minute=0, second=0, microsecond=0) - timedelta(days=now.weekday())
    hourly = [(h, hour - timedelta(hours=h) + timedelta(minutes=10)) for h in range(1, 31)
              for _ in range(20 if h == 1 else 5)]
    weekly = [(w, week - timedelta(weeks=w) + timedelta(days=2, hours=12)) for w in range(1, 11)
              for _ in range(30 if w == 1 else 7)]
    day = now.replace(hour=0, minute=0, second=0, microsecond=0)
    daily = [(d, day - timedelta(days=d) + timedelta(hours=6)) for d in range(2, 15)]  # nothing yesterday
    database.create_table("hourly", {"id": "int", "at": "timestamp"}, hourly + [(0, hour)])
    database.create_table("weekly", {"id": "int", "at": "timestamp"}, weekly + [(0, week)])
    database.create_table("daily", {"id": "int", "at": "timestamp"}, daily)
    found = scan_suite(database, """\
tables:
  hourly:
    - row_count: {anomaly: {timestamp_column: at, bucket: hour, training: 24h}}
  weekly:
    - row_count: {anomaly: {timestamp_column: at, bucket: week, training: 8w}}
  daily:
    - freshness: {column: at, anomaly: {timestamp_column: at, bucket: day, training: 14d}}
""", tmp_path)
    h = found["hourly.row_count"].details["anomaly"]
    assert found["hourly.row_count"].status == "fail"
    assert (h["value"], h["expected"], h["training_points"], len(h["series"])) == (20, 5, 24, 26)
    assert h["judged"][-1]["at"].startswith((hour - timedelta(hours=1)).strftime("%Y-%m-%dT%H:00"))
    w = found["weekly.row_count"].details["anomaly"]
    assert found["weekly.row_count"].status == "fail"
    assert (w["value"], w["expected"], w["training_points"]) == (30, 7, 8)
    assert w["judged"][-1]["at"][:10] == (week - timedelta(weeks=1)).date().isoformat()
    f = found["daily.at.freshness"].details["anomaly"]  # the newest row is 18 h old at each day's end; yesterday 42 h
    assert found["daily.at.freshness"].status == "fail"
    assert (f["value"], f["expected"], f["reason"]) == (42 * 3600, 18 * 3600, "above the expected range")


def test_trends_compare_an_anomalous_row_count_by_its_distance_from_the_expected_value():
    from watchdog.trends import mark

    def finding(value: float) -> dict[str, Any]:
        return {"name": "t.row_count", "check": "row_count", "status": "fail", "observed": value,
                "details": {"anomaly": {"value": value, "expected": 100.0}}}

    assert mark(finding(400), finding(300)) == "worse"
    assert mark(finding(20), finding(10)) == "better"
    assert mark(finding(100 + 50), finding(100 - 50)) == "unchanged"


def test_the_llm_sees_the_band_but_not_the_series():
    from watchdog.graph.prompts import findings_data

    finding = {"name": "t.row_count", "check": "row_count", "status": "fail", "observed": 40,
               "details": {"anomaly": {"value": 40, "expected": 10, "low": 9, "high": 11,
                                       "series": [{"at": "2026-01-01", "value": 10}] * 300}}}
    data = findings_data({"findings": [finding]})
    compact = data.replace(": ", ":")  # the findings block may be written compactly
    assert '"expected":10' in compact and '"high":11' in compact and "series" not in data
