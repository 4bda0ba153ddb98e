"""The ``reconcile`` check: in suites, scans and audits (history, trends) like any other finding."""

from __future__ import annotations

import json
import re
from decimal import Decimal
from pathlib import Path

import pytest

from tests.test_reconcile_diff import N, base_rows, load, planted
from watchdog.history import HistoryStore
from watchdog.run.audit import execute_audit
from watchdog.scan.suites import load_suites
from watchdog.settings import load_settings


def write_project(root: Path, source_url: str, target_url: str, suite: str) -> Path:
    (root / "config").mkdir(parents=True)
    (root / "checks").mkdir()
    (root / "checks" / "orders.yaml").write_text(suite)
    config = root / "config" / "watchdog.yaml"
    config.write_text(f"""\
base_dir: ..
state_dir: state
databases:
  shop: {{url: "{source_url}"}}
  warehouse: {{url: "{target_url}"}}
audits:
  orders:
    database: shop
    checks: [checks/orders.yaml]
    deliver:
      - file: {{dir: reports}}
""")
    return config


SUITE = """\
tables:
  orders:
    - reconcile: {with: warehouse, table: orders_copy, key: [id], timestamp_precision: ms}
    - reconcile: {with: warehouse, table: orders_copy, key: id, columns: [amount], max_count: 10, name: amount_lag}
    - reconcile: {with: warehouse, table: orders_copy, metrics: [count, sum(amount), max(created), count(note)]}
"""


def test_an_audit_records_reconcile_findings_with_trends(tmp_path: Path, make_database) -> None:
    src, tgt = make_database("sqlite"), make_database("postgresql")
    rows = base_rows()
    load(src, rows)
    load(tgt, planted(rows), "orders_copy")
    settings = load_settings(write_project(tmp_path / "p", src.url, tgt.url, SUITE))
    first = execute_audit(settings, "orders")
    by_name = {f.name: f for f in first.scan.doc.findings}
    full = by_name["orders.warehouse.reconcile"]
    assert (full.status, full.failing, full.total) == ("fail", 8, N)
    assert full.details["missing_in_target"] == 2 and full.details["changed"] == 5
    assert {row["difference"] for row in full.sample} == {"missing_in_target", "missing_in_source", "changed"}
    lag = by_name["amount_lag"]
    assert (lag.status, lag.failing) == ("pass", 4)       # 2 + 1 missing, 1 changed amount; under max_count 10
    metrics = by_name["orders.warehouse.metrics.reconcile"]
    # count and sum differ; max(created) is the same (the new row is not the latest), and so is count(note): one
    # note went NULL -> '' (counted now), one deleted row had a note
    assert (metrics.status, metrics.failing, metrics.total) == ("fail", 2, 4)
    assert {r["metric"] for r in metrics.sample} == {"count", "sum(amount)"}

    tgt.run("DELETE FROM orders_copy")
    tgt.insert("orders_copy", ["id", "line", "amount", "score", "status", "note", "created"],
               [[*r[:2], Decimal(r[2]), *r[3:]] for r in rows])
    second = execute_audit(settings, "orders")
    after = {f.name: f for f in second.scan.doc.findings}
    assert after["orders.warehouse.reconcile"].status == "pass"
    assert second.trends["orders.warehouse.reconcile"] == "resolved"
    store = HistoryStore(settings.history_url())
    try:
        assert [r.id for r in store.list_runs("orders")] == [second.run_id, first.run_id]
        recorded = {f["name"]: f for f in store.findings_of(second.run_id)}
    finally:
        store.close()
    assert recorded["orders.warehouse.reconcile"]["status"] == "pass"


def test_scan_with_config_resolves_with_names(tmp_path: Path, make_database, run_cli) -> None:
    src, tgt = make_database("sqlite"), make_database("duckdb")
    load(src, base_rows())
    load(tgt, planted(base_rows()), "orders_copy")
    config = write_project(tmp_path / "p", src.url, tgt.url, SUITE)
    p = run_cli("scan", "--config", str(config), "--db", "shop", "--checks", str(config.parent.parent / "checks"),
                "--out", str(tmp_path / "out"))
    assert p.returncode == 1, p.stderr
    doc = json.loads((tmp_path / "out" / "findings.json").read_text())
    statuses = {f["name"]: (f["status"], f["failing"]) for f in doc["findings"]}
    assert statuses["orders.warehouse.reconcile"] == ("fail", 8)


@pytest.mark.parametrize(("check", "message"), [
    ("{with: w, key: id, metrics: [count]}", "not both"),
    ("{with: w, metrics: [median(x)]}", "unknown metric 'median(x)'"),
    ("{key: id}", "missing required option 'with'"),
    ("{with: w, timestamp_precision: ns}", "timestamp_precision"),
])
def test_bad_options_name_the_line(tmp_path: Path, check: str, message: str) -> None:
    suite = tmp_path / "s.yaml"
    suite.write_text(f"tables:\n  orders:\n    - not_null: id\n    - reconcile: {check}\n")
    with pytest.raises(Exception, match=re.escape(message)) as info:
        load_suites([suite])
    assert "s.yaml:4" in str(info.value)


def test_an_unknown_database_is_the_checks_error_and_the_others_still_run(tmp_path: Path, make_database) -> None:
    src = make_database("sqlite")
    load(src, base_rows())
    suite = "tables:\n  orders:\n    - reconcile: {with: nowhere, key: id}\n    - not_null: id\n"
    settings = load_settings(write_project(tmp_path / "p", src.url, src.url, suite))
    run = execute_audit(settings, "orders")
    by_name = {f.name: f for f in run.scan.doc.findings}
    assert by_name["orders.nowhere.reconcile"].status == "error"
    assert "no database named 'nowhere'" in (by_name["orders.nowhere.reconcile"].error or "")
    assert by_name["orders.id.not_null"].status == "pass"
