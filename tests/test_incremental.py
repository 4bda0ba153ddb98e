"""Incremental tables: row-level checks judge the rows past the mark (minus the lookback) and NULL-marked rows."""

from __future__ import annotations

from datetime import UTC, date, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest

from tests.dbs import TYPES, TestDatabase
from watchdog.errors import SandboxError
from watchdog.sandbox import Sandbox
from watchdog.scan.incremental import Window, high_water, narrow, window_start, windowed
from watchdog.scan.scanner import scan
from watchdog.scan.suites import load_suites

T0 = datetime(2026, 1, 1)
EVENTS = {"id": "int", "email": "text", "created_at": "timestamp"}
SUITE = """
tables:
  events:
    incremental: {column: created_at, lookback: 1h}
    checks:
      - not_null: email
      - unique: id
"""


def old_rows() -> list[tuple]:
    """Ten rows an hour apart; rows 2 and 3 have no email (failures a first run sees, an incremental one not)."""
    return [(i, None if i in (2, 3) else f"u{i}@x.io", T0 + timedelta(hours=i)) for i in range(1, 11)]


NEW_ROWS = [
    (11, None, T0 + timedelta(hours=12)),                 # new row, failing
    (12, None, T0 + timedelta(hours=9, minutes=30)),      # late, inside the 1h lookback: judged
    (13, None, T0 + timedelta(hours=5)),                  # late, outside the lookback: not in the window
    (14, None, None),                                     # no high-water value: judged on every run
]


@pytest.mark.parametrize("kind", ["sqlite", "postgresql", "mariadb", "duckdb"])
def test_window_judges_new_late_and_null_marked_rows(kind: str, make_database, tmp_path: Path) -> None:
    db: TestDatabase = make_database(kind)
    db.create_table("events", EVENTS, old_rows())
    path = tmp_path / "suite.yml"
    path.write_text(SUITE)
    checks = [c for s in load_suites([path]) for c in s.checks]
    options = checks[0].table_options["incremental"]
    assert (options.column, options.lookback) == ("created_at", 3600.0)
    with Sandbox(db.url) as sandbox:
        first = scan(sandbox, checks)  # first run: no mark, every row
        assert (first.findings[0].failing, first.findings[0].total) == (2, 10)
        mark = high_water(sandbox, "events", "created_at")
    db.insert("events", list(EVENTS), NEW_ROWS)  # (DuckDB: one writer at a time, so the sandbox closed first)
    with Sandbox(db.url) as sandbox:
        start = window_start(mark, options.lookback)
        window = Window("created_at", start, high_water(sandbox, "events", "created_at"))
        doc = scan(sandbox, [windowed(c, window, sandbox.dialect) for c in checks])
    # window: created_at >= T0+9h (rows 9, 10, 11, 12) or NULL (row 14); emails missing in 11, 12, 14
    assert (doc.findings[0].failing, doc.findings[0].total) == (3, 5)
    assert (doc.findings[1].failing, doc.findings[1].total) == (0, 5)  # unique: the window's ids, all new
    assert window.to_json() == {"column": "created_at", "from": "2026-01-01 09:00:00", "to": "2026-01-01 12:00:00"}


@pytest.mark.parametrize("kind", ["sqlite", "duckdb"])
def test_integer_high_water_column(kind: str, make_database, tmp_path: Path) -> None:
    db: TestDatabase = make_database(kind)
    db.create_table("events", EVENTS, old_rows() + NEW_ROWS)
    path = tmp_path / "suite.yml"
    path.write_text(SUITE.replace("created_at, lookback: 1h", "id"))
    checks = [c for s in load_suites([path]) for c in s.checks]
    with Sandbox(db.url) as sandbox:
        window = Window("id", window_start(10, checks[0].table_options["incremental"].lookback), 14)
        doc = scan(sandbox, [windowed(c, window, sandbox.dialect) for c in checks])
    assert (doc.findings[0].failing, doc.findings[0].total) == (4, 5)  # ids 10..14; 11..14 lack an email


def test_window_start_keeps_the_marks_type() -> None:
    assert window_start(date(2026, 1, 3), 86400) == date(2026, 1, 2)
    assert window_start("2026-01-03", 3600) == date(2026, 1, 3)  # less than a day back: the same date
    assert window_start("2026-01-03 10:00:00", 1800) == datetime(2026, 1, 3, 9, 30)
    assert window_start(100, 5) == 95
    assert window_start(None, 5) is None


def test_bad_incremental_option_is_a_clear_error(tmp_path: Path) -> None:
    path = tmp_path / "suite.yml"
    path.write_text(SUITE.replace("lookback: 1h", "lookbak: 1h"))
    with pytest.raises(Exception, match="lookbak"):
        load_suites([path])


def audit_project(tmp_path: Path, url: str) -> Path:
    root = tmp_path / "project"
    (root / "checks").mkdir(parents=True)
    (root / "checks" / "events.yaml").write_text(SUITE)
    config = root / "watchdog.yaml"
    config.write_text(f"""\
state_dir: state
databases:
  events: {{url: "{url}"}}
history: {{url: "sqlite:///{root / 'history.db'}"}}
audits:
  events:
    database: events
    checks: [checks/events.yaml]
    diagnose: false
    deliver:
      - file: {{dir: reports}}
""")
    return config


def not_null(run) -> tuple:
    finding = next(f for f in run.scan.doc.findings if f.check == "not_null")
    return finding.failing, finding.total, finding.window


@pytest.mark.parametrize("kind", ["sqlite", "postgresql", "mariadb", "duckdb"])
def test_audit_runs_advance_the_mark_only_when_findings_are_recorded(kind: str, make_database,
                                                                     tmp_path: Path) -> None:
    from watchdog.history.marks import marks_of
    from watchdog.history.store import HistoryStore
    from watchdog.run.audit import execute_audit
    from watchdog.settings import load_settings

    db: TestDatabase = make_database(kind)
    db.create_table("events", EVENTS, old_rows())
    settings = load_settings(audit_project(tmp_path, db.url))
    first = execute_audit(settings, "events")  # no mark yet: every row
    assert not_null(first) == (2, 10, {"column": "created_at", "from": None, "to": "2026-01-01 10:00:00"})
    db.insert("events", list(EVENTS), NEW_ROWS)
    db.run(f"ALTER TABLE {db.quote('events')} RENAME TO {db.quote('events_away')}")
    with pytest.raises(SandboxError):  # the high-water read fails: the run fails, nothing recorded
        execute_audit(settings, "events")
    db.run(f"ALTER TABLE {db.quote('events_away')} RENAME TO {db.quote('events')}")
    third = execute_audit(settings, "events")  # the failed run did not move the mark: from 10:00 - 1h
    assert not_null(third) == (3, 5, {"column": "created_at", "from": "2026-01-01 09:00:00",
                                      "to": "2026-01-01 12:00:00"})
    fourth = execute_audit(settings, "events")  # nothing new: 11:00.. holds row 11; row 14 (NULL) every run
    assert not_null(fourth)[:2] == (2, 2)
    full = execute_audit(settings, "events", full=True)  # rows 2, 3, 11, 12, 13 and 14 lack an email
    assert not_null(full) == (6, 14, {"column": "created_at", "from": None, "to": "2026-01-01 12:00:00"})
    store = HistoryStore(settings.history_url())
    try:
        assert marks_of(store, "events") == {"events": "2026-01-01 12:00:00"}
    finally:
        store.close()


ZONED = {"postgresql": "TIMESTAMPTZ", "duckdb": "TIMESTAMPTZ"}
#: (column type, the mark as the history records it, lookback): each window is days 7..10
HIGH_WATER_TYPES = {
    "int": ("8", "1"),
    "date": ("2026-01-08", "1d"),
    "timestamp": ("2026-01-08 00:00:00", "1d"),
    "timestamptz": ("2026-01-08 00:00:00+00:00", "1d"),
}


def typed_rows(kind: str, type_: str) -> list[tuple]:
    """Ten rows, one a day (or id 1..10); rows 2 and 9 have no email."""
    def mark(day: int) -> Any:
        if type_ == "int":
            return day
        if type_ == "date":
            return date(2026, 1, day).isoformat() if kind == "sqlite" else date(2026, 1, day)
        if type_ == "timestamptz":
            return datetime(2026, 1, day, tzinfo=UTC)
        return f"2026-01-{day:02d} 00:00:00" if kind == "sqlite" else datetime(2026, 1, day)
    return [(day, None if day in (2, 9) else f"u{day}@x.io", mark(day)) for day in range(1, 11)]


@pytest.mark.parametrize(("kind", "type_"), [(k, t) for k in ("sqlite", "postgresql", "mariadb", "duckdb")
                                             for t in HIGH_WATER_TYPES if t != "timestamptz" or k in ZONED])
def test_high_water_column_of_each_type(kind: str, type_: str, make_database, tmp_path: Path) -> None:
    db: TestDatabase = make_database(kind)
    q = db.quote
    ddl = ZONED[kind] if type_ == "timestamptz" else TYPES[type_][kind]
    db.run(f"CREATE TABLE {q('t')} ({q('id')} {TYPES['int'][kind]}, {q('email')} {TYPES['text'][kind]}, "
           f"{q('hw')} {ddl})")
    db.insert("t", ["id", "email", "hw"], typed_rows(kind, type_))
    mark, lookback = HIGH_WATER_TYPES[type_]
    path = tmp_path / "suite.yml"
    path.write_text(f"tables:\n  t:\n    incremental: {{column: hw, lookback: {lookback}}}\n"
                    "    checks:\n      - not_null: email\n")
    checks = [c for s in load_suites([path]) for c in s.checks]
    recorded = int(mark) if type_ == "int" else mark
    with Sandbox(db.url) as sandbox:
        narrowed, windows = narrow(sandbox, checks, {"t": recorded})
        doc = scan(sandbox, narrowed)
        # a mark above every value (the column moved backwards): every row is judged again
        again, moved = narrow(sandbox, checks, {"t": 20 if type_ == "int" else mark.replace("-08", "-20")})
        everything = scan(sandbox, again)
    assert (doc.findings[0].failing, doc.findings[0].total) == (1, 4)  # days 7..10; day 9 lacks an email
    assert (everything.findings[0].failing, everything.findings[0].total) == (2, 10)
    assert moved["t.email.not_null"].start is None
    assert windows["t.email.not_null"].to_json()["to"] is not None


@pytest.mark.parametrize("kind", ["sqlite", "postgresql", "mariadb", "duckdb"])
def test_foreign_key_judges_new_children_against_the_whole_parent(kind: str, make_database, tmp_path: Path) -> None:
    db: TestDatabase = make_database(kind)
    db.create_table("customers", {"id": "int"}, [(1,), (2,), (3,)])
    # ids 1..6; an old orphan (id 2, customer 9) and a new one (id 6, customer 8); new row 5 has an old parent
    db.create_table("orders", {"id": "int", "customer_id": "int"},
                    [(1, 1), (2, 9), (3, 2), (4, 3), (5, 1), (6, 8)])
    path = tmp_path / "suite.yml"
    path.write_text("tables:\n  orders:\n    incremental: {column: id}\n    checks:\n"
                    "      - foreign_key: {column: customer_id, references: customers.id}\n")
    checks = [c for s in load_suites([path]) for c in s.checks]
    with Sandbox(db.url) as sandbox:
        narrowed, windows = narrow(sandbox, checks, {"orders": 5})  # window: id >= 5 (the mark's own row again, and 6)
        doc = scan(sandbox, narrowed)
        whole = scan(sandbox, checks)
    assert (doc.findings[0].failing, doc.findings[0].total) == (1, 2)
    assert (whole.findings[0].failing, whole.findings[0].total) == (2, 6)
    assert windows["orders.customer_id.foreign_key"].to_json() == {"column": "id", "from": 5, "to": 6}


@pytest.mark.parametrize("kind", ["sqlite", "postgresql", "mariadb", "duckdb"])
def test_metric_judges_the_window_unless_told_otherwise(kind: str, make_database, tmp_path: Path) -> None:
    """A ``metric`` on an incremental table computes its value over the window's rows; ``window: false`` keeps the
    whole table."""
    db: TestDatabase = make_database(kind)
    db.create_table("events", EVENTS, old_rows() + NEW_ROWS)
    path = tmp_path / "suite.yml"
    path.write_text("tables:\n  events:\n    incremental: {column: created_at, lookback: 1h}\n    checks:\n"
                    "      - metric: {column: id, agg: avg, max: 10, name: new_ids}\n"
                    "      - metric: {column: id, agg: count, window: false, name: all_ids}\n")
    checks = [c for s in load_suites([path]) for c in s.checks]
    with Sandbox(db.url) as sandbox:
        narrowed, windows = narrow(sandbox, checks, {"events": T0 + timedelta(hours=10)})
        doc = scan(sandbox, narrowed)
    new_ids, all_ids = doc.findings
    # window: created_at >= 09:00 (rows 9, 10, 11, 12) or NULL (row 14): ids 9, 10, 11, 12, 14, average 11.2
    assert (new_ids.observed, new_ids.status) == (11.2, "fail")
    assert (all_ids.observed, all_ids.status) == (14, "pass")
    assert set(windows) == {new_ids.name}
