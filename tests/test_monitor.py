"""Table monitors (``monitor:`` on an audit) on real SQLite, PostgreSQL, MariaDB and DuckDB databases:
tables created and dropped between runs, columns added, removed and retyped, estimates labelled as such,
a constant number of catalogue statements, and the audit path (history, findings.json, report.md)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.dbs import TestDatabase
from watchdog.history import HistoryStore
from watchdog.run.audit import execute_audit
from watchdog.settings import load_settings

ENGINES = ("sqlite", "postgresql", "mariadb", "duckdb")
#: how each engine's default schema shows in finding names (MariaDB: the database, filled in per test)
PREFIX = {"sqlite": "", "postgresql": "public.", "duckdb": "main."}
#: the declared type each engine reports for text before and after the retype below
RETYPE = {"sqlite": ("TEXT", "INTEGER"), "postgresql": ("text", "bigint"), "mariadb": ("varchar(255)", "bigint(20)"),
          "duckdb": ("VARCHAR", "BIGINT")}


def prefix(db: TestDatabase) -> str:
    return f"{db.url.rsplit('/', 1)[-1]}." if db.kind == "mariadb" else PREFIX[db.kind]


def project(tmp_path: Path, db: TestDatabase, monitor: str = "{}") -> Path:
    config = tmp_path / "watchdog.yaml"
    config.write_text(f"""\
databases:
  warehouse: {{url: "{db.url}"}}
history: {{url: "sqlite:///{tmp_path / 'history.db'}"}}
audits:
  tables:
    database: warehouse
    monitor: {monitor}
    deliver:
      - file: {{dir: {tmp_path / 'reports'}}}
""")
    return config


def by_name(run) -> dict[str, dict]:
    return {f.name: f.to_json_dict() for f in run.scan.doc.findings}


def retype(db: TestDatabase, table: str, column: str) -> None:
    q = db.quote
    if db.kind == "sqlite":  # SQLite cannot change a column's type: the table is rebuilt under the same name
        db.run(f"CREATE TABLE wd_new (id INTEGER, {q(column)} INTEGER)",
               f"INSERT INTO wd_new SELECT id, 0 FROM {q(table)}", f"DROP TABLE {q(table)}",
               f"ALTER TABLE wd_new RENAME TO {q(table)}")
    elif db.kind == "mariadb":
        db.run(f"UPDATE {q(table)} SET {q(column)} = '0'", f"ALTER TABLE {q(table)} MODIFY {q(column)} BIGINT")
    else:
        db.run(f"ALTER TABLE {q(table)} ALTER COLUMN {q(column)} TYPE BIGINT USING 0")


@pytest.mark.parametrize("kind", ENGINES)
def test_tables_created_dropped_and_columns_changed_between_runs(kind, make_database, tmp_path):
    db = make_database(kind)
    db.create_table("orders", {"id": "int", "status": "text"}, [(1, "new"), (2, "paid")])
    db.create_table("customers", {"id": "int", "name": "text"}, [(1, "Ada")])
    settings = load_settings(project(tmp_path, db))
    p = prefix(db)

    first_run = execute_audit(settings, "tables")
    first = by_name(first_run)
    assert sorted(first) == sorted(f"{p}{t}.{k}" for t in ("orders", "customers")
                                   for k in ("volume", "freshness", "schema_changes"))
    assert first[f"{p}orders.schema_changes"]["details"]["note"] == "no previous run to compare with"
    assert [c["name"] for c in first[f"{p}orders.schema_changes"]["details"]["columns"]] == ["id", "status"]
    assert all(f["status"] == "pass" for f in first.values())

    db.create_table("events", {"id": "int", "at": "timestamp"})
    db.run(f"DROP TABLE {db.quote('customers')}")
    retype(db, "orders", "status")
    second_run = execute_audit(settings, "tables")
    second = by_name(second_run)
    new = second[f"{p}events.schema_changes"]
    assert (new["status"], new["failing"], new["details"]["new_table"], new["details"]["added"]) == (
        "warn", 1, True, ["id", "at"])
    gone = second[f"{p}customers.schema_changes"]
    assert (gone["status"], gone["details"]["dropped"], gone["details"]["previous_run"]) == (
        "warn", True, first_run.run_id)
    assert f"{p}customers.volume" not in second
    changed = second[f"{p}orders.schema_changes"]["details"]
    before, after = RETYPE[kind]
    assert changed["type_changed"] == [{"column": "status", "old": "text", "new": "integer",
                                        "old_type": before, "new_type": after}]
    assert (changed["added"], changed["removed"]) == ([], [])
    assert second_run.status == "warned"
    filed = json.loads((second_run.run_dir / "findings.json").read_text())
    assert {f["name"] for f in filed["findings"]} == set(second) and filed["schema_version"] == 1
    report = (second_run.run_dir / "report.md").read_text()
    assert f"New table since run {first_run.run_id}, with columns: id, at." in report
    assert f"Table dropped: it was there in run {first_run.run_id}, it is gone." in report
    assert f"Column status changed type: text ({before}) to integer ({after})." in report
    assert "Table dropped" in (second_run.run_dir / "report.html").read_text()

    text = "VARCHAR(20)" if kind == "mariadb" else "TEXT"
    db.run(f"ALTER TABLE {db.quote('events')} ADD COLUMN {db.quote('kind')} {text}")
    third = by_name(execute_audit(settings, "tables"))
    assert f"{p}customers.schema_changes" not in third  # a dropped table is reported once
    assert third[f"{p}events.schema_changes"]["details"]["added"] == ["kind"]
    assert third[f"{p}orders.schema_changes"]["status"] == "pass"

    store = HistoryStore(settings.history_url())
    try:  # recorded in the history like any finding
        names = {f["name"] for f in store.findings_of(store.previous_run("tables", "none").id)}
        assert f"{p}events.schema_changes" in names
    finally:
        store.close()
