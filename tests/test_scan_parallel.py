"""A scan's slow statements run on a second SQLite sandbox (watchdog/scan/parallel.py): the same findings as one
statement at a time, no second sandbox for a quick scan, and Ctrl-C still stops everything and keeps what finished."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import threading
import time
from datetime import UTC, datetime
from pathlib import Path

import pytest

from tests.procs import children, gone
from watchdog.run.demo_data import build_demo_database
from watchdog.sandbox import Sandbox
from watchdog.scan import parallel
from watchdog.scan.scanner import scan
from watchdog.scan.suites import load_suites

ROOT = Path(__file__).resolve().parent.parent


@pytest.fixture(scope="module")
def demo_db(tmp_path_factory) -> Path:
    path = tmp_path_factory.mktemp("demo") / "crm.db"
    build_demo_database(path, now=datetime(2026, 11, 29, tzinfo=UTC))
    return path


def _scan(db: Path, parallel_n: int, slow_main: float = 0.0) -> tuple[dict, list[str]]:
    checks = [c for s in load_suites([ROOT / "checks" / "demo_crm.yaml"]) for c in s.checks]
    threads: list[str] = []
    main = threading.main_thread()

    def listen(sql: str) -> None:
        threads.append(threading.current_thread().name)
        if slow_main and threading.current_thread() is main:  # a slow database, as seen from the main sandbox
            time.sleep(slow_main)

    with Sandbox(f"sqlite:///{db}") as box:
        box.on_execute(listen)
        doc = scan(box, checks, sample=5, parallel=parallel_n)
    data = doc.to_json() if hasattr(doc, "to_json") else ""
    out = json.loads(data)
    for key in ("started_at", "duration_s"):
        out.pop(key)
    return out, threads


def _ages(doc: dict) -> dict[str, float]:
    """Freshness ages, taken out of ``doc``: they grow with the clock between two scans, so compared apart."""
    ages = {}
    for finding in doc["findings"]:
        if finding["check"] == "freshness" and finding["observed"] is not None:
            ages[finding["name"]] = finding.pop("observed")
    return ages


def test_statements_on_a_second_sandbox_give_the_same_findings(demo_db, monkeypatch):
    alone, threads_alone = _scan(demo_db, 1)
    assert set(threads_alone) == {"MainThread"}
    monkeypatch.setattr(parallel, "HELPER_AFTER_S", 0.0)  # open the helper at once
    shared, threads = _scan(demo_db, 2, slow_main=0.15)
    assert "watchdog-scan-1" in threads, threads  # the helper really ran statements
    assert len(threads) == len(threads_alone)  # and none ran twice
    ages_alone, ages = _ages(alone), _ages(shared)
    assert ages.keys() == ages_alone.keys() and all(0 <= ages[k] - ages_alone[k] < 60 for k in ages)
    assert shared == alone


def test_a_quick_scan_opens_no_second_sandbox(demo_db, monkeypatch):
    opened = []
    real = Sandbox.sibling

    def sibling(self: Sandbox) -> Sandbox | None:
        opened.append(1)
        return real(self)

    monkeypatch.setattr(Sandbox, "sibling", sibling)
    _, threads = _scan(demo_db, 2)
    assert opened == [] and set(threads) == {"MainThread"}


def test_postgres_and_given_sessions_run_one_statement_at_a_time():
    assert "postgres" not in parallel.PARALLEL_DIALECTS and "duckdb" not in parallel.PARALLEL_DIALECTS

    class Given:
        dialect_name = "sqlite"

        def close(self) -> None:
            pass

    given = Sandbox("sqlite:///x.db", session=Given())  # type: ignore[arg-type]
    assert given.sibling() is None and not given.can_open_sibling()


def test_ctrl_c_stops_the_helpers_statement_too(tmp_path):
    import sqlite3

    db = tmp_path / "two.db"
    with sqlite3.connect(db) as conn:
        conn.execute("CREATE TABLE people (id INTEGER, email TEXT)")
        conn.executemany("INSERT INTO people VALUES (?, ?)", [(1, "a@x.io"), (2, None)])
    slow = ("WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 400000000) "
            "SELECT count(*) - count(*) FROM n")
    # joins and custom queries start before the tables' batches: the quick query, then two queries of a minute
    # each (the second on a helper); the batch of people waits behind them
    suite = tmp_path / "suite.yaml"
    suite.write_text(f"tables:\n  people:\n    - not_null: email\ncustom_sql:\n"
                     f"  - name: quick\n    sql: SELECT count(*) FROM people WHERE email IS NULL\n"
                     f"  - name: slow_a\n    sql: \"{slow}\"\n"
                     f"  - name: slow_b\n    sql: \"{slow} WHERE 1 = 1\"\n", encoding="utf-8")
    out = tmp_path / "out"
    proc = subprocess.Popen([sys.executable, "-m", "watchdog", "scan", "--db", f"sqlite:///{db}", "--checks",
                             str(suite), "--out", str(out), "--timeout", "120"], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, cwd=tmp_path)
    try:
        time.sleep(6)
        assert proc.poll() is None, proc.communicate()
        workers = children(proc.pid)
        assert len(workers) >= 2, workers  # both slow queries are running, each in its own worker
        os.kill(proc.pid, signal.SIGINT)
        _, err = proc.communicate(timeout=30)
    finally:
        if proc.poll() is None:
            proc.kill()
    assert proc.returncode == 130, err
    doc = json.loads((out / "findings.json").read_text())
    by_name = {f["name"]: f for f in doc["findings"]}
    assert by_name["quick"]["status"] == "fail" and by_name["quick"]["failing"] == 1
    for name in ("slow_a", "slow_b", "people.email.not_null"):
        assert by_name[name]["status"] == "error" and by_name[name]["error"].startswith("not run"), by_name[name]
    assert gone(workers)

