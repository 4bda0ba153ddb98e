"""Table monitors' figures on real databases: estimates labelled per engine, exact counts where declared,
volume anomalies and freshness over a history of runs (hand-computed), and the cost: a constant number of
catalogue statements, none reading a monitored table unless exact counts are asked for."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from types import SimpleNamespace
from typing import Any

import pytest
import sqlglot
from sqlglot import exp

from tests.dbs import TestDatabase
from watchdog.errors import ConfigError
from watchdog.findings import Finding
from watchdog.monitor.catalogue import MonitorUnsupported, read_catalogue
from watchdog.monitor.config import MonitorConfig
from watchdog.monitor.run import monitor_findings
from watchdog.sandbox import Sandbox
from watchdog.settings import load_settings

T0 = datetime(2026, 3, 2, 6, 0, tzinfo=UTC)


def flush(db: TestDatabase, *statements: str) -> None:
    """Run ``statements``; on PostgreSQL also make the server publish their row statistics at commit."""
    extra = ("SELECT pg_stat_force_next_flush()",) if db.kind == "postgresql" else ()
    db.run(*statements, *extra)


def name(db: TestDatabase, table: str) -> str:
    if db.kind == "mariadb":
        return f"{db.url.rsplit('/', 1)[-1]}.{table}"
    return {"sqlite": "", "postgresql": "public.", "duckdb": "main."}[db.kind] + table


class Runs:
    """Runs of the monitors at chosen times, each judged against the ones before (as an audit's history)."""

    def __init__(self, db: TestDatabase, config: MonitorConfig):
        self.db, self.config = db, config
        self.past: dict[str, list[dict[str, Any]]] = {}

    def run(self, at: datetime) -> dict[str, Finding]:
        with Sandbox(self.db.url) as box:
            found, _ = monitor_findings(box, self.config, self.past, now=at)
        run_id = f"run-{len(self.past and next(iter(self.past.values())))}-{at:%H%M%S%f}"
        for f in found:
            self.past.setdefault(f.name, []).append({"run_id": run_id, "started_at": at.isoformat(),
                                                     "finding": f.to_json_dict()})
        return {f.name: f for f in found}


@pytest.mark.parametrize("kind", ["sqlite", "postgresql", "mariadb", "duckdb"])
def test_volume_anomalies_over_a_history_of_runs(kind, make_database):
    db = make_database(kind)
    db.create_table("events", {"id": "int"}, [(i,) for i in range(100)])
    runs = Runs(db, MonitorConfig(exact_counts=True, freshness=False, schema_changes=False))
    key = f"{name(db, 'events')}.volume"
    for day in range(6):  # 100, 102, ... 110 rows on days 0..5; each judged only from day 5 (5 runs before)
        if day:
            db.insert("events", ["id"], [(1000 + 2 * day,), (1001 + 2 * day,)])
        f = runs.run(T0 + timedelta(days=day))[key]
        assert (f.observed, f.status, f.details["rows_exact"], f.details["rows_source"]) == (
            100 + 2 * day, "pass", True, "count(*)")
    # day 5: Theil-Sen through (0,100)..(4,108) is 100 + 2 d, expected 110 = observed, band +/- 10 % of 110
    assert f.details["anomaly"]["expected"] == 110 and f.details["anomaly"]["low"] == 99.0
    db.run(f"DELETE FROM {db.quote('events')} WHERE {db.quote('id')} >= 20")
    f = runs.run(T0 + timedelta(days=6))[key]
    # expected 112 (the line at day 6), band 112 +/- 11.2; 20 rows is below it
    anomaly = f.details["anomaly"]
    assert (f.observed, f.status, anomaly["anomalous"], anomaly["expected"], anomaly["low"], anomaly["high"]) == (
        20, "warn", True, 112.0, 100.8, 123.2)
    assert anomaly["reason"] == "below the expected range"
    assert f.details["since_previous_run"]["rows"] == -90


ESTIMATES = {
    "postgresql": ("pg_stat_user_tables.n_live_tup", 3, False),
    "mariadb": ("information_schema.tables.table_rows", 3, False),
    "duckdb": ("duckdb_tables().estimated_size", 3, False),
}


@pytest.mark.parametrize("kind", ["postgresql", "mariadb", "duckdb"])
def test_catalogue_estimates_are_labelled(kind, make_database):
    db = make_database(kind)
    db.create_table("orders", {"id": "int"})
    flush(db, *[f"INSERT INTO {db.quote('orders')} VALUES ({i})" for i in range(3)])
    if kind == "mariadb":
        db.run("ANALYZE TABLE orders")
    found = Runs(db, MonitorConfig()).run(T0)
    volume = found[f"{name(db, 'orders')}.volume"]
    source, rows, exact = ESTIMATES[kind]
    assert (volume.details["rows_source"], volume.observed, volume.details["rows_exact"]) == (source, rows, exact)
    assert "estimated" in (volume.description or "")
    counted = Runs(db, MonitorConfig(exact_counts=["orders"])).run(T0)[f"{name(db, 'orders')}.volume"]
    assert (counted.observed, counted.details["rows_exact"], counted.details["rows_source"],
            counted.details["catalogue_source"]) == (3, True, "count(*)", source)


def test_mariadb_aria_counts_are_exact_and_innodb_estimates_are_not(make_database):
    db = make_database("mariadb")
    db.run("CREATE TABLE exact_t (id INT) ENGINE=Aria", "INSERT INTO exact_t VALUES (1), (2)",
           "CREATE TABLE estimate_t (id INT) ENGINE=InnoDB")
    found = Runs(db, MonitorConfig()).run(T0)
    assert found[f"{name(db, 'exact_t')}.volume"].details["rows_exact"] is True
    assert found[f"{name(db, 'exact_t')}.volume"].observed == 2
    assert found[f"{name(db, 'estimate_t')}.volume"].details["rows_exact"] is False


def test_sqlite_has_a_row_count_only_after_analyze(make_database):
    db = make_database("sqlite")
    db.create_table("orders", {"id": "int"}, [(1,), (2,), (3,)])
    volume = Runs(db, MonitorConfig()).run(T0)["orders.volume"]
    assert (volume.observed, volume.status, volume.details["rows_source"]) == (None, "pass", "none")
    assert "exact_counts" in volume.details["note"]
    db.run("ANALYZE")
    volume = Runs(db, MonitorConfig()).run(T0)["orders.volume"]
    assert (volume.observed, volume.details["rows_exact"], volume.details["rows_source"]) == (
        3, False, "sqlite_stat1 (as of the last ANALYZE)")


@pytest.mark.parametrize("kind", ["sqlite", "postgresql", "duckdb"])
def test_freshness_is_the_time_since_a_change_was_seen(kind, make_database):
    db = make_database(kind)
    db.create_table("orders", {"id": "int"}, [(1,)])
    runs = Runs(db, MonitorConfig(exact_counts=kind == "sqlite", volume=False, schema_changes=False,
                                  freshness={"max_age": "1h"}))
    key = f"{name(db, 'orders')}.freshness"
    flush(db)
    first = runs.run(T0)[key]
    assert (first.observed, first.status, first.details["watching_since"]) == (None, "pass", T0.isoformat())
    flush(db, f"INSERT INTO {db.quote('orders')} VALUES (2)")
    second = runs.run(T0 + timedelta(minutes=30))[key]  # the change happened between T0 and now: age at least 0
    assert (second.observed, second.status, second.details["last_change_after"]) == (0, "pass", T0.isoformat())
    third = runs.run(T0 + timedelta(hours=2, minutes=30))[key]  # nothing since: at least 2 h, over max_age 1h
    assert (third.observed, third.status, third.details["age_is"]) == (7200, "warn", "at least")
    assert third.params["max_age_s"] == 3600
    if kind == "postgresql":  # an UPDATE moves PostgreSQL's write counters: a change without a new row
        flush(db, f"UPDATE {db.quote('orders')} SET {db.quote('id')} = 3 WHERE {db.quote('id')} = 2")
        fourth = runs.run(T0 + timedelta(hours=3))[key]
        assert (fourth.observed, fourth.status) == (0, "pass")


def test_mariadb_freshness_comes_from_update_time(make_database):
    db = make_database("mariadb")
    db.create_table("orders", {"id": "int"}, [(1,)])
    with Sandbox(db.url) as box:
        found, _ = monitor_findings(box, MonitorConfig(volume=False, schema_changes=False))
    f = found[0]
    assert f.details["basis"] == "information_schema.tables.update_time" and f.details["age_is"] == "exact"
    assert f.observed is not None and 0 <= f.observed < 120


def catalogue_relations(sql: str, dialect: str) -> set[str]:
    return {t.name.lower() for t in sqlglot.parse_one(sql, read=dialect).find_all(exp.Table)}


@pytest.mark.parametrize("kind", ["sqlite", "postgresql", "mariadb", "duckdb"])
def test_a_constant_number_of_catalogue_statements_and_no_table_read(kind, make_database):
    db = make_database(kind)
    counts = []
    for tables in (2, 12):
        for i in range(len(counts) * 2, tables):
            db.create_table(f"t{i}", {"id": "int"}, [(1,)])
        sent: list[str] = []
        with Sandbox(db.url) as box:
            box.on_execute(sent.append)
            found, statements = monitor_findings(box, MonitorConfig())
        assert len(sent) == statements
        assert len({f.table for f in found}) == tables
        counts.append(statements)
        for sql in sent:
            assert not {f"t{i}" for i in range(tables)} & catalogue_relations(sql, box.dialect), sql
    assert counts[0] == counts[1] == 2  # SQLite: tables with columns, then whether sqlite_stat1 exists


def test_exact_counts_add_one_statement_per_schema(make_database):
    db = make_database("postgresql")
    for i in range(5):
        db.create_table(f"t{i}", {"id": "int"}, [(1,)] * i)
    with Sandbox(db.url) as box:
        found, statements = monitor_findings(box, MonitorConfig(exact_counts=True, freshness=False,
                                                                schema_changes=False))
    assert statements == 3
    assert {f.table: f.observed for f in found} == {f"public.t{i}": i for i in range(5)}


def test_spark_and_other_catalogues_are_refused_with_a_reason():
    with pytest.raises(MonitorUnsupported, match="monitor: is not available on spark"):
        read_catalogue(SimpleNamespace(dialect="spark"), MonitorConfig())  # type: ignore[arg-type]


def test_sqlite_refuses_other_schemas(make_database):
    db = make_database("sqlite")
    with Sandbox(db.url) as box, pytest.raises(ConfigError, match="SQLite has one schema, main"):
        read_catalogue(box, MonitorConfig(schemas=["sales"]))


@pytest.mark.parametrize("audit, message", [
    ("{database: db}", "checks: give at least one suite (or monitor: to watch tables without one)"),
    ("{database: db, monitor: {volumes: true}}", "audits.a.monitor.volumes: unknown field"),
    ("{database: db, monitor: {freshness: {max_age: soon}}}", "'soon' is not a positive age like 30m, 6h or 1d"),
])
def test_configuration_errors_name_the_field(tmp_path, audit, message):
    config = tmp_path / "watchdog.yaml"
    config.write_text(f"databases:\n  db: {{url: 'sqlite:///x.db'}}\naudits:\n  a: {audit}\n")
    with pytest.raises(ConfigError, match="watchdog.yaml:4") as caught:
        load_settings(config)
    assert message in str(caught.value)


def test_a_catalogue_that_cannot_be_read_is_one_error_finding_not_a_crash():
    found, statements = monitor_findings(SimpleNamespace(dialect="spark"), MonitorConfig())  # type: ignore[arg-type]
    assert statements == 0 and [(f.name, f.status) for f in found] == [("monitor", "error")]
    assert found[0].error is not None and "monitor: is not available on spark" in found[0].error
