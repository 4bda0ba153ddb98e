"""Configured audits end to end: history with trends over several runs, filing, and the review gate."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

import pytest

from watchdog.delivery.base import RunPackage
from watchdog.history import HistoryStore
from watchdog.run.audit import execute_audit
from watchdog.settings import load_settings

SUITE = """\
tables:
  items:
    - not_null: sku
    - unique: sku
    - range: {column: price, min: 0}
      severity: warn
    - not_null: qty
"""


def write_items(db: Path, rows: list[tuple]) -> None:
    with sqlite3.connect(db) as conn:
        conn.execute("DROP TABLE IF EXISTS items")
        conn.execute("CREATE TABLE items (id INTEGER PRIMARY KEY, sku TEXT, price REAL, qty INTEGER)")
        conn.executemany("INSERT INTO items VALUES (?, ?, ?, ?)", rows)


def rows(sku_nulls: int = 0, sku_dups: int = 0, negative_prices: int = 0, qty_nulls: int = 0) -> list[tuple]:
    out = []
    for i in range(1, 21):
        sku = None if i <= sku_nulls else ("DUP" if i - sku_nulls <= sku_dups else f"SKU-{i}")
        price = -1.0 if 10 < i <= 10 + negative_prices else 9.5
        qty = None if i > 20 - qty_nulls else i
        out.append((i, sku, price, qty))
    return out


@pytest.fixture
def project(tmp_path: Path):
    """A project folder with a config for the audit `shop`; returns a function writing it (review on/off)."""
    root = tmp_path / "project"
    (root / "config").mkdir(parents=True)
    (root / "checks").mkdir()
    (root / "checks" / "shop.yaml").write_text(SUITE)

    def make(review: bool = False) -> Path:
        config = root / "config" / "watchdog.yaml"
        config.write_text(f"""\
base_dir: ..
state_dir: state
databases:
  shop: {{url: "sqlite:///data/shop.db"}}
history: {{url: "sqlite:///history.db"}}
audits:
  shop:
    database: shop
    checks: [checks/shop.yaml]
    review: {str(review).lower()}
    deliver:
      - file: {{dir: reports}}
      - file: {{dir: published, on: always}}
""")
        (root / "data").mkdir(exist_ok=True)
        return config

    make.root = root  # type: ignore[attr-defined]
    return make


def test_history_marks_new_resolved_worse_better_and_unchanged_over_three_runs(project):
    config = project()
    settings = load_settings(config)
    db = project.root / "data" / "shop.db"
    write_items(db, rows(sku_nulls=2, negative_prices=1))
    first = execute_audit(settings, "shop")
    write_items(db, rows(sku_nulls=3, sku_dups=2, negative_prices=1))
    second = execute_audit(settings, "shop")
    write_items(db, rows(sku_nulls=1, qty_nulls=4))
    third = execute_audit(settings, "shop")

    assert first.trends == {}  # a first run has nothing to compare with (issue 11): no marks at all
    assert "there is no previous run to compare with" in (first.run_dir / "report.md").read_text()
    assert second.trends == {"items.sku.not_null": "worse", "items.sku.unique": "new",
                             "items.price.range": "unchanged", "items.qty.not_null": "unchanged"}
    assert third.trends == {"items.sku.not_null": "better", "items.sku.unique": "resolved",
                            "items.price.range": "resolved", "items.qty.not_null": "new"}

    store = HistoryStore(settings.history_url())
    runs = store.list_runs("shop")
    assert [r.id for r in runs] == [third.run_id, second.run_id, first.run_id]
    assert [r.status for r in runs] == ["failed", "failed", "failed"]
    assert runs[0].trends == third.trends and runs[0].summary == {"checks": 4, "passed": 2, "warned": 0,
                                                                    "failed": 2, "errors": 0}
    assert {f["name"]: f["failing"] for f in store.findings_of(second.run_id)} == {
        "items.sku.not_null": 3, "items.sku.unique": 2, "items.price.range": 1, "items.qty.not_null": 0}
    store.close()

    report = (third.run_dir / "report.md").read_text()
    assert "**Since the previous run:** 1 new, 2 resolved, 0 worse, 1 better, 0 unchanged." in report
    assert "| `items.sku.not_null` | FAIL | BETTER | 1 | 20 | 5.00% |" in report
    assert "| `items.sku.unique` | PASS | RESOLVED | 0 | 20 | 0% |" in report
    html = (third.run_dir / "report.html").read_text()
    assert ('<td><code>items.sku.unique</code></td><td class="status status-pass">PASS</td>'
            '<td class="mark mark-resolved">') in html
    package = RunPackage.load(third.run_dir)
    assert package.subject == "[watchdog] shop: 2 failed, 0 warned (1 new, 2 resolved, 1 better)"
    assert RunPackage.load(second.run_dir).subject == "[watchdog] shop: 2 failed, 1 warned (1 new, 1 worse)"


def test_a_run_is_filed_with_its_four_files_and_latest(project):
    settings = load_settings(project())
    write_items(project.root / "data" / "shop.db", rows(sku_nulls=1))
    run = execute_audit(settings, "shop")
    assert sorted(p.name for p in run.run_dir.iterdir()) == ["audit.json", "findings.json", "report.html", "report.md"]
    latest = project.root / "reports" / "shop" / "latest"
    assert latest.is_symlink() and latest.resolve() == run.run_dir.resolve()
    meta = json.loads((run.run_dir / "audit.json").read_text())
    assert meta["run_id"] == run.run_id and meta["status"] == "failed"
    # one schema whether or not the LLM ran (scans with --llm file the same keys, audit null)
    assert set(meta) == {"run_id", "audit", "status", "review_required", "summary", "trends", "llm"}
    assert meta["audit"] == "shop" and meta["llm"] is None
    assert not list(run.run_dir.glob(".*.tmp"))
    assert (project.root / "published" / "shop" / run.run_dir.name / "report.md").is_file()
    assert [(d["channel"], d["status"]) for d in run.deliveries] == [("file", "sent"), ("file", "sent")]


def test_an_unreachable_database_is_recorded_as_an_error_run(project):
    settings = load_settings(project())  # data/shop.db is never created
    run = execute_audit(settings, "shop")
    assert run.status == "error" and run.exit_code == 3
    store = HistoryStore(settings.history_url())
    [record] = store.list_runs("shop")
    assert record.status == "error"
    store.close()


def test_review_approve_delivers_from_a_second_process(project, run_cli):
    config = project(review=True)
    write_items(project.root / "data" / "shop.db", rows(sku_nulls=1))
    first = run_cli("run", "shop", "--config", str(config))
    assert first.returncode == 1, first.stderr  # the findings decide the exit code
    assert "awaiting review" in first.stderr
    settings = load_settings(config)
    store = HistoryStore(settings.history_url())
    [waiting] = store.list_runs("shop")
    assert waiting.status == "awaiting_review" and not (project.root / "published").exists()
    listed = run_cli("review", "--config", str(config))
    assert waiting.id in listed.stdout and "report.md" in listed.stdout

    approved = run_cli("review", "approve", waiting.id, "--config", str(config))
    assert approved.returncode == 0, approved.stderr
    run = store.get_run(waiting.id)
    assert run.status == "failed" and run.review["decision"] == "approved"
    assert (project.root / "published" / "shop" / Path(run.out_dir).name / "report.md").is_file()
    assert {d.status for d in run.deliveries} == {"sent"}
    again = run_cli("review", "approve", waiting.id, "--config", str(config))
    assert again.returncode == 3 and "not awaiting review" in again.stderr
    store.close()


def test_review_reject_records_why_and_delivers_nothing(project, run_cli):
    config = project(review=True)
    write_items(project.root / "data" / "shop.db", rows())
    assert run_cli("run", "shop", "--config", str(config)).returncode == 0
    store = HistoryStore(load_settings(config).history_url())
    [waiting] = store.list_runs("shop")
    rejected = run_cli("review", "reject", waiting.id, "--reason", "staging data", "--config", str(config))
    assert rejected.returncode == 0, rejected.stderr
    run = store.get_run(waiting.id)
    assert run.status == "passed" and run.review == {"decision": "rejected", "reason": "staging data", "by": "cli"}
    assert run.deliveries == [] and not (project.root / "published").exists()
    store.close()


def test_history_json_lists_runs_newest_first_with_deliveries(project, run_cli):
    config = project()
    write_items(project.root / "data" / "shop.db", rows(negative_prices=2))
    assert run_cli("run", "shop", "--config", str(config)).returncode == 2  # only a warning
    assert run_cli("run", "shop", "--config", str(config)).returncode == 2
    result = run_cli("history", "shop", "--json", "--config", str(config))
    runs = json.loads(result.stdout)
    assert [r["status"] for r in runs] == ["warned", "warned"] and runs[0]["started_at"] >= runs[1]["started_at"]
    assert set(runs[0]) == {"id", "audit", "status", "started_at", "finished_at", "summary", "deliveries",
                            "out_dir", "error", "review"}
    assert runs[0]["deliveries"][1] == {"channel": "file", "target": str(project.root / "reports"),
                                        "status": "sent", "attempts": 1, "last_error": None}


def test_the_history_can_live_in_postgresql(project, make_database):
    history_db = make_database("postgresql")
    config = project()
    config.write_text(config.read_text().replace('history: {url: "sqlite:///history.db"}',
                                                 f'history: {{url: "{history_db.url}"}}'))
    settings = load_settings(config)
    write_items(project.root / "data" / "shop.db", rows(sku_nulls=2))
    first = execute_audit(settings, "shop")
    write_items(project.root / "data" / "shop.db", rows(sku_nulls=5))
    second = execute_audit(settings, "shop")
    assert second.trends["items.sku.not_null"] == "worse"
    assert history_db.scalar("SELECT count(*) FROM wd_runs") == 2
    assert history_db.scalar(f"SELECT status FROM wd_runs WHERE id = '{first.run_id}'") == "failed"
    assert history_db.scalar("SELECT count(*) FROM wd_deliveries WHERE status = 'sent'") == 4
