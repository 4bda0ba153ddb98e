"""``--export-failures``: every failing row of each breaching check, in batches, capped, with a companion JSON."""

from __future__ import annotations

import csv
import json
from pathlib import Path

import pytest

from watchdog.run.export_failures import ExportRequest, batch_sql, file_stem
from watchdog.run.scan_run import run_scan

SUITE = """tables:
  people:
    - not_null: email
    - range: {column: age, min: 0, max: 120}
    - unique: id
"""
# id, email, age: emails NULL at ids 2, 4, 6, 7 (4 rows); ages out of range at ids 3 and 7 (2 rows); ids unique
ROWS = [(1, "a@x.org", 30), (2, None, 40), (3, "c@x.org", 130), (4, None, 50), (5, "e@x.org", 60),
        (6, None, 70), (7, None, -1), (8, "h@x.org", 80)]


def _people(kind: str, make_database):
    db = make_database(kind)
    q = db.quote
    text = "VARCHAR(64)" if kind == "mariadb" else "TEXT"
    db.run(f"CREATE TABLE {q('people')} ({q('id')} INTEGER PRIMARY KEY, {q('email')} {text}, {q('age')} INTEGER)")
    db.insert("people", ["id", "email", "age"], list(reversed(ROWS)))  # inserted backwards: the key orders
    return db


def _read(path: Path) -> list[list[str]]:
    with path.open(newline="", encoding="utf-8") as handle:
        return list(csv.reader(handle))


@pytest.mark.parametrize("kind", ["sqlite", "postgresql", "mariadb", "duckdb"])
def test_every_failing_row_in_key_order_in_small_batches(kind: str, make_database, tmp_path: Path) -> None:
    db = _people(kind, make_database)
    folder = tmp_path / "failed"
    suite = tmp_path / "people.yaml"
    suite.write_text(SUITE, encoding="utf-8")
    outcome = run_scan(db.url, [suite], out_dir=tmp_path / "run", sample=1,
                       export=ExportRequest(folder, batch=3, limit=100))
    emails = _read(folder / "people.email.not_null.csv")
    assert emails[0] == ["id", "email", "age"]
    # all 4 (the sample held 1), 2 batches of 3, in key order; DuckDB's catalog reader gives no key: its
    # insertion order (which DuckDB keeps), the rows were inserted backwards
    keyed = kind != "duckdb"
    assert [row[0] for row in emails[1:]] == (["2", "4", "6", "7"] if keyed else ["7", "6", "4", "2"])
    assert [row[0] for row in _read(folder / "people.age.range.csv")[1:]] == (["3", "7"] if keyed else ["7", "3"])
    assert not (folder / "people.id.unique.csv").exists()  # passed: nothing to export
    meta = json.loads((folder / "people.email.not_null.json").read_text())
    assert (meta["rows"], meta["limit"], meta["capped"], meta["batches"]) == (4, 100, False, 2)
    assert meta["order"] == (["id"] if keyed else None)
    assert meta["failing"] == 4 and "email" in meta["sql"] and meta["file"] == "people.email.not_null.csv"
    doc = json.loads(outcome.findings_path.read_text())
    listed = {f["name"]: f["details"].get("export") for f in doc["findings"]}
    assert listed["people.email.not_null"]["rows"] == 4 and listed["people.age.range"]["capped"] is False
    assert listed["people.id.unique"] is None and doc["schema_version"] == 1


@pytest.mark.parametrize("kind", ["sqlite", "postgresql"])
def test_the_cap_is_stated_and_hit_only_when_more_rows_fail(kind: str, make_database, tmp_path: Path) -> None:
    db = _people(kind, make_database)
    suite = tmp_path / "people.yaml"
    suite.write_text(SUITE, encoding="utf-8")
    folder = tmp_path / "failed"
    run_scan(db.url, [suite], out_dir=tmp_path / "run", export=ExportRequest(folder, batch=2, limit=2))
    capped = json.loads((folder / "people.email.not_null.json").read_text())
    exact = json.loads((folder / "people.age.range.json").read_text())  # 2 failing rows, cap 2: not hit
    assert (capped["rows"], capped["capped"]) == (2, True)
    assert (exact["rows"], exact["capped"]) == (2, False)
    assert [row[0] for row in _read(folder / "people.email.not_null.csv")[1:]] == ["2", "4"]


def test_cli_exports_parquet_and_states_the_default_cap(make_database, run_cli, tmp_path: Path) -> None:
    import duckdb

    db = _people("sqlite", make_database)
    (tmp_path / "people.yaml").write_text(SUITE, encoding="utf-8")
    done = run_cli("scan", "--db", db.url, "--checks", "people.yaml", "--out", "run",
                   "--export-failures", "failed", "--format", "parquet")
    assert done.returncode == 1, done.stderr
    got = duckdb.sql(f"SELECT id FROM read_parquet('{tmp_path / 'failed' / 'people.email.not_null.parquet'}') "
                     "ORDER BY id").fetchall()
    assert [r[0] for r in got] == [2, 4, 6, 7]
    meta = json.loads((tmp_path / "failed" / "people.email.not_null.json").read_text())
    assert (meta["format"], meta["limit"], meta["capped"]) == ("parquet", 100_000, False)
    bad = run_cli("scan", "--db", db.url, "--checks", "people.yaml", "--export-failures", "f", "--export-limit", "0")
    assert bad.returncode == 3 and "--export-limit" in bad.stderr


def test_file_names_and_batches() -> None:
    assert file_stem("orders.e-mail x/y") == "orders.e-mail_x_y"
    sql = batch_sql("SELECT * FROM t WHERE a IS NULL", "postgres", ["id"], 10, 20)
    assert sql == ('SELECT * FROM (SELECT * FROM t WHERE a IS NULL) AS wd_failing ORDER BY wd_failing."id" '
                   'LIMIT 10 OFFSET 20')


def test_an_audit_files_its_exports_with_the_run(make_database, tmp_path: Path) -> None:
    from watchdog.history import HistoryStore
    from watchdog.run.audit import execute_audit
    from watchdog.settings import load_settings

    db = _people("sqlite", make_database)
    root = tmp_path / "project"
    (root / "checks").mkdir(parents=True)
    (root / "checks" / "people.yaml").write_text(SUITE, encoding="utf-8")
    config = root / "watchdog.yaml"
    config.write_text(f"""\
databases:
  crm: {{url: "{db.url}"}}
history: {{url: "sqlite:///history.db"}}
audits:
  people:
    database: crm
    checks: [checks/people.yaml]
    export_failures: {{limit: 3}}
""", encoding="utf-8")
    settings = load_settings(config)
    run = execute_audit(settings, "people")
    meta = json.loads((run.run_dir / "failures" / "people.email.not_null.json").read_text())
    assert (meta["rows"], meta["limit"], meta["capped"]) == (3, 3, True)
    assert [row[0] for row in _read(run.run_dir / "failures" / "people.email.not_null.csv")[1:]] == ["2", "4", "6"]
    store = HistoryStore(settings.history_url())
    try:
        kept = {f["name"]: f["details"].get("export") for f in store.findings_of(run.run_id)}
    finally:
        store.close()
    assert kept["people.email.not_null"]["file"] == "people.email.not_null.csv"
    bad = config.read_text().replace("{limit: 3}", "{limit: 0}")
    config.write_text(bad, encoding="utf-8")
    with pytest.raises(Exception, match="export_failures"):
        load_settings(config)
