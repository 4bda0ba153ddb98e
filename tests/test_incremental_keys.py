"""Incremental tables: ``unique`` judges the window's keys against the whole table, ``foreign_key`` the window's
children against the whole parent, both through the key's index; ``row_count: {window: true}`` counts the window."""

from __future__ import annotations

import re
from datetime import datetime, timedelta
from pathlib import Path

import pytest

from tests.dbs import TestDatabase
from watchdog.sandbox import Sandbox
from watchdog.scan.incremental import narrow
from watchdog.scan.scanner import scan, with_column_types
from watchdog.scan.suites import load_suites

T0 = datetime(2026, 1, 1)
EVENTS = {"id": "int", "email": "text", "created_at": "timestamp"}
ENGINES = ["sqlite", "postgresql", "mariadb", "duckdb"]


def hour(h: int) -> datetime:
    return T0 + timedelta(hours=h)


#: old rows: ids 1..10, an hour apart, and an old duplicate of id 5 (not judged by a windowed run)
OLD = [(i, f"u{i}@x.io", hour(i)) for i in range(1, 11)] + [(5, "again@x.io", hour(5))]
NEW = [
    (3, "n3@x.io", hour(11)),      # duplicates an old row: fails
    (11, "a@x.io", hour(12)),      # id 11 twice among the new rows: both fail
    (11, "b@x.io", hour(12)),
    (12, "c@x.io", hour(13)),      # new and unique: passes
    (None, "d@x.io", hour(14)),    # no key: never a duplicate
    (10, "e@x.io", None),          # no high-water value (judged every run); duplicates row 10, inside the window
]


def checks_of(tmp_path: Path, text: str) -> list:
    path = tmp_path / "suite.yml"
    path.write_text(text)
    return [c for s in load_suites([path]) for c in s.checks]


@pytest.mark.parametrize("kind", ENGINES)
def test_unique_judges_new_rows_against_the_whole_table(kind: str, make_database, tmp_path: Path) -> None:
    db: TestDatabase = make_database(kind)
    db.create_table("events", EVENTS, OLD + NEW)
    checks = checks_of(tmp_path, "tables:\n  events:\n    incremental: {column: created_at}\n    checks:\n"
                                 "      - unique: id\n      - row_count: {window: true, min: 7}\n"
                                 "      - row_count: {min: 1, name: all_rows}\n")
    with Sandbox(db.url) as sandbox:
        narrowed, windows = narrow(sandbox, checks, {"events": "2026-01-01 10:00:00"})
        doc = scan(sandbox, narrowed)
        whole = scan(sandbox, checks)
        dup = doc.findings[0]
        # the finding's SQL selects the failing rows: the window's rows whose id repeats anywhere
        failing = sorted((r[0], r[1]) for r in sandbox.query(dup.sql).rows)
    # window: created_at >= 10:00 (row 10 and the five new rows with a value) or NULL (the row 10 without one)
    # failing: id 10 (twice in the window), id 3 (an old row has it), id 11 (twice); id 12 and the NULL id pass
    assert (dup.failing, dup.total) == (5, 7)
    assert dup.details["duplicate_values"] == 3
    assert failing == [(3, "n3@x.io"), (10, "e@x.io"), (10, "u10@x.io"), (11, "a@x.io"), (11, "b@x.io")]
    assert sorted(r["id"] for r in dup.sample) == [3, 10, 10, 11, 11]
    assert windows["events.id.unique"].to_json()["from"] == "2026-01-01 10:00:00"
    # row_count with window: the window's 7 rows; without: the table's 17
    assert (doc.findings[1].observed, doc.findings[1].status) == (7, "pass")
    assert doc.findings[2].observed == 17
    # a full scan: ids 3, 5, 10 and 11 repeat, two rows each
    assert (whole.findings[0].failing, whole.findings[0].total) == (8, 17)
    assert whole.findings[1].observed == 17


@pytest.mark.parametrize("kind", ENGINES)
def test_unique_compound_key_in_the_window(kind: str, make_database, tmp_path: Path) -> None:
    db: TestDatabase = make_database(kind)
    db.create_table("m", {"a": "int", "b": "text", "seq": "int"},
                    [(1, "x", 1), (1, None, 2), (2, "y", 3),           # old rows
                     (1, "x", 4), (1, None, 5), (2, "z", 6), (3, "Y", 7)])  # new: two repeat old keys
    checks = checks_of(tmp_path, "tables:\n  m:\n    incremental: {column: seq}\n    checks:\n"
                                 "      - unique: {columns: [a, b]}\n")
    with Sandbox(db.url) as sandbox:
        narrowed, _ = narrow(sandbox, checks, {"m": 4})
        doc = scan(sandbox, narrowed)
    # window seq >= 4: (1, x) repeats row 1, (1, NULL) repeats row 2 (NULL parts group together); others new
    assert (doc.findings[0].failing, doc.findings[0].total) == (2, 4)


@pytest.mark.parametrize("kind", ["mariadb", "sqlite"])
def test_unique_window_compares_text_keys_exactly(kind: str, make_database, tmp_path: Path) -> None:
    db: TestDatabase = make_database(kind)
    db.create_table("u", {"code": "text", "seq": "int"}, [("abc", 1), ("Abc", 2), ("abc ", 3), ("abc", 4)])
    checks = checks_of(tmp_path, "tables:\n  u:\n    incremental: {column: seq}\n    checks:\n      - unique: code\n")
    with Sandbox(db.url) as sandbox:
        narrowed, _ = narrow(sandbox, checks, {"u": 2})
        doc = scan(sandbox, narrowed)
    # window seq >= 2: 'Abc' and 'abc ' are new values (case and trailing space count); 'abc' repeats row 1
    assert (doc.findings[0].failing, doc.findings[0].total) == (1, 3)


@pytest.mark.parametrize("kind", ENGINES)
def test_index_prefixes_from_the_catalogue(kind: str, make_database) -> None:
    from watchdog.scan.indexes import covered, index_prefixes

    db: TestDatabase = make_database(kind)
    q = db.quote
    pk = "INTEGER PRIMARY KEY" if kind == "sqlite" else "INT PRIMARY KEY"
    db.run(f"CREATE TABLE {q('t')} ({q('id')} {pk}, {q('a')} INT, {q('b')} INT, {q('c')} INT)",
           f"CREATE INDEX {q('t_ab')} ON {q('t')} ({q('a')}, {q('b')})")
    with Sandbox(db.url) as sandbox:
        found = index_prefixes(sandbox, "t")
    assert covered(found, ["id"]) and covered(found, ["a"]) and covered(found, ["b", "a"])
    assert covered(found, ["b"]) is False and covered(found, ["c"]) is False


@pytest.mark.parametrize("kind", ["postgresql", "mariadb", "sqlite"])
def test_windowed_keys_are_probed_through_the_index(kind: str, make_database, tmp_path: Path) -> None:
    """The window's keys are looked up in the older rows (and the parent) by index, never by a scan of them."""
    db: TestDatabase = make_database(kind)
    q = db.quote
    pk = "INTEGER PRIMARY KEY" if kind == "sqlite" else "INT PRIMARY KEY"
    db.run(f"CREATE TABLE {q('parents')} ({q('id')} {pk})",
           f"CREATE TABLE {q('ev')} ({q('id')} {pk}, {q('parent_id')} INT, {q('seq')} INT)",
           f"CREATE INDEX {q('ev_seq')} ON {q('ev')} ({q('seq')})")
    db.insert("parents", ["id"], [(i,) for i in range(1, 20001)])
    db.insert("ev", ["id", "parent_id", "seq"], [(i, i, i) for i in range(1, 20001)])
    db.run(*(["ANALYZE parents", "ANALYZE ev"] if kind == "postgresql" else
             ["ANALYZE TABLE parents, ev"] if kind == "mariadb" else ["ANALYZE"]))
    checks = checks_of(tmp_path, "tables:\n  ev:\n    incremental: {column: seq}\n    checks:\n      - unique: id\n"
                                 "      - foreign_key: {column: parent_id, references: parents.id}\n")
    with Sandbox(db.url) as sandbox:
        narrowed, _ = narrow(sandbox, checks, {"ev": 19990})
        narrowed = with_column_types(sandbox, narrowed)  # as the scanner does (how keys compare)
        statements = [m.sql for c in narrowed for m in c.metrics(sandbox.dialect) if hasattr(m, "sql") and m.rows == 1]
    assert len(statements) == 2
    with db.engine.connect() as conn:
        for sql in statements:
            if kind == "postgresql":
                plan = "\n".join(r[0] for r in conn.exec_driver_sql("EXPLAIN " + sql))
                assert "Seq Scan on ev wd_old" not in plan and "Seq Scan on parents" not in plan, plan
                assert "Index" in plan, plan
            elif kind == "sqlite":
                plan = "\n".join(str(r[-1]) for r in conn.exec_driver_sql("EXPLAIN QUERY PLAN " + sql))
                assert "SCAN wd_old" not in plan and "SCAN wd_parent" not in plan, plan
                assert "SCAN ev" not in plan.splitlines() and "SCAN wd_child" not in plan, plan  # the window too
            else:  # MariaDB: the older rows and the parent are reached by key (eq_ref/ref), never ALL or index
                rows = conn.exec_driver_sql("EXPLAIN " + sql).mappings().all()
                probes = [r for r in rows if r["table"] in ("wd_old", "wd_parent")]
                assert probes and all(r["type"] in ("eq_ref", "ref", "unique_subquery") for r in probes), rows


@pytest.mark.parametrize("kind", ENGINES)
def test_check_config_warns_about_lookups_no_index_serves(kind: str, make_database, run_cli, tmp_path: Path) -> None:
    db: TestDatabase = make_database(kind)
    q = db.quote
    pk = "INTEGER PRIMARY KEY" if kind == "sqlite" else "INT PRIMARY KEY"
    db.run(f"CREATE TABLE {q('parents')} ({q('id')} INT, {q('code')} INT)",
           f"CREATE TABLE {q('ev')} ({q('id')} {pk}, {q('ref')} INT, {q('parent_id')} INT, {q('seq')} INT)",
           f"CREATE INDEX {q('parents_code')} ON {q('parents')} ({q('code')})")
    (tmp_path / "ev.yaml").write_text(
        "tables:\n  ev:\n    incremental: {column: seq}\n    checks:\n      - unique: id\n      - unique: ref\n"
        "      - foreign_key: {column: parent_id, references: parents.id}\n"
        "      - foreign_key: {column: ref, references: parents.code}\n")
    (tmp_path / "watchdog.yaml").write_text(
        f'databases:\n  main: {{url: "{db.url}"}}\naudits:\n  ev:\n    database: main\n    checks: [ev.yaml]\n'
        "    deliver:\n      - file: {dir: reports}\n")
    done = run_cli("check-config", "--config", str(tmp_path / "watchdog.yaml"))
    assert done.returncode == 0, done.stderr
    warned = sorted(re.findall(r"database main: (\S+): no index", done.stderr))
    # ev.id (the primary key) and parents.code are indexed; the high-water column, ev.ref and parents.id are not
    assert warned == ["ev.ref", "ev.seq", "parents.id"], done.stderr
    db.run(f"CREATE INDEX {q('ev_seq')} ON {q('ev')} ({q('seq')})")
    again = run_cli("check-config", "--config", str(tmp_path / "watchdog.yaml"))
    assert "ev.seq" not in again.stderr and "ev.ref" in again.stderr
    if kind == "sqlite":  # window: true on a table that is not incremental
        (tmp_path / "plain.yaml").write_text("tables:\n  parents:\n    - row_count: {window: true, min: 1}\n")
        plain = run_cli("check-config", "--checks", str(tmp_path / "plain.yaml"))
        assert plain.returncode == 0 and "plain.yaml:3: parents.row_count: `window: true`" in plain.stderr, plain.stderr


def test_windows_are_compared_with_windows(make_database, tmp_path: Path) -> None:
    """Trends and the run-history anomaly of a windowed check compare a run's window only with earlier windows,
    never with a first or full run's figure over every row."""
    from watchdog.run.audit import execute_audit
    from watchdog.settings import load_settings

    db: TestDatabase = make_database("sqlite")
    db.create_table("ev", {"id": "int", "email": "text"}, [(i, None if i <= 5 else "x") for i in range(1, 101)])
    (tmp_path / "ev.yaml").write_text(
        "tables:\n  ev:\n    incremental: {column: id}\n    checks:\n      - not_null: email\n"
        "      - row_count: {window: true, anomaly: {min_training: 1}}\n")
    (tmp_path / "watchdog.yaml").write_text(
        f'state_dir: state\ndatabases:\n  main: {{url: "{db.url}"}}\nhistory: {{url: "sqlite:///{tmp_path}/h.db"}}\n'
        "audits:\n  ev:\n    database: main\n    checks: [ev.yaml]\n    diagnose: false\n"
        "    deliver:\n      - file: {dir: reports}\n")
    settings = load_settings(tmp_path / "watchdog.yaml")

    def found(run, check: str):
        return next(f for f in run.scan.doc.findings if f.check == check)

    first = execute_audit(settings, "ev")  # every row: 5 of 100 lack an email; 100 rows
    assert (found(first, "not_null").failing, found(first, "row_count").observed) == (5, 100)
    db.insert("ev", ["id", "email"], [(i, None if i <= 108 else "x") for i in range(101, 111)])
    second = execute_audit(settings, "ev")  # window id >= 100: 11 rows, 8 without an email
    assert (found(second, "not_null").failing, found(second, "row_count").observed) == (8, 11)
    assert second.trends["ev.email.not_null"] == "unchanged"  # 8 of a window is not "worse" than 5 of every row
    # no earlier window yet: the 100 of the first run is not training for the window's count
    assert found(second, "row_count").details["anomaly"]["training_points"] == 0
    db.insert("ev", ["id", "email"], [(i, None if i == 111 else "x") for i in range(111, 121)])
    third = execute_audit(settings, "ev")  # window id >= 110: 11 rows; ids 111 lacks an email (110 has one)
    assert (found(third, "not_null").failing, found(third, "row_count").observed) == (1, 11)
    assert third.trends["ev.email.not_null"] == "better"  # a window against a window
    anomaly = found(third, "row_count").details["anomaly"]
    assert (anomaly["training_points"], anomaly["expected"], anomaly["anomalous"]) == (1, 11, False)


def test_incremental_window_on_spark(spark_admin_url: str, tmp_path: Path) -> None:
    """The same window, unique and row_count numbers on Spark (no index catalogue: the EXISTS form)."""
    from tests.spark_server import create_spark_database

    db = create_spark_database(spark_admin_url, prefix="incr_spark")
    try:
        db.create_table("events", EVENTS, OLD + NEW)
        checks = checks_of(tmp_path, "tables:\n  events:\n    incremental: {column: created_at}\n    checks:\n"
                                     "      - unique: id\n      - row_count: {window: true, min: 7}\n"
                                     "      - not_null: id\n")
        with Sandbox(db.url) as sandbox:
            narrowed, _ = narrow(sandbox, checks, {"events": "2026-01-01 10:00:00"})
            doc = scan(sandbox, narrowed)
    finally:
        db.close()
    assert (doc.findings[0].failing, doc.findings[0].total) == (5, 7)  # as on the other four engines
    assert doc.findings[1].observed == 7
    assert (doc.findings[2].failing, doc.findings[2].total) == (1, 7)  # the window's one row without an id


@pytest.mark.parametrize("kind", ENGINES)
def test_an_indexed_high_water_column_without_nulls_is_a_plain_range(kind: str, make_database, tmp_path: Path) -> None:
    db: TestDatabase = make_database(kind)
    db.create_table("ev", {"id": "int", "email": "text", "seq": "int"}, [(i, None, i) for i in range(1, 11)])
    db.run(f"CREATE INDEX {db.quote('ev_seq')} ON {db.quote('ev')} ({db.quote('seq')})")
    checks = checks_of(tmp_path, "tables:\n  ev:\n    incremental: {column: seq}\n    checks:\n"
                                 "      - not_null: email\n")
    with Sandbox(db.url) as sandbox:
        narrowed, windows = narrow(sandbox, checks, {"ev": 8})
        doc = scan(sandbox, narrowed)
    assert windows["ev.email.not_null"].nulls is False and "NULL" not in narrowed[0].options.where.upper()
    assert (doc.findings[0].failing, doc.findings[0].total) == (3, 3)  # seq 8, 9, 10
    db.insert("ev", ["id", "email", "seq"], [(11, None, None)])  # a row without a high-water value appears
    with Sandbox(db.url) as sandbox:
        narrowed, windows = narrow(sandbox, checks, {"ev": 8})
        doc = scan(sandbox, narrowed)
    assert windows["ev.email.not_null"].nulls is True
    assert (doc.findings[0].failing, doc.findings[0].total) == (4, 4)  # and it is judged


def test_windowed_unique_runs_without_jit_on_postgresql(make_database, tmp_path: Path, monkeypatch) -> None:
    """The windowed ``unique`` statement (one index probe per new key) asks PostgreSQL for no JIT compilation;
    a full run's GROUP BY keeps the server's setting. The findings are the same either way."""
    db: TestDatabase = make_database("postgresql")
    db.create_table("events", EVENTS, OLD + NEW)
    checks = checks_of(tmp_path, "tables:\n  events:\n    incremental: {column: created_at}\n    checks:\n"
                                 "      - unique: id\n")
    asked: list[tuple[str, bool]] = []
    real = Sandbox.query

    def recording(self: Sandbox, sql: str, **kwargs: object) -> object:
        asked.append((sql, bool(kwargs.get("jit", True))))
        return real(self, sql, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(Sandbox, "query", recording)
    with Sandbox(db.url) as sandbox:
        narrowed, _ = narrow(sandbox, checks, {"events": "2026-01-01 10:00:00"})
        windowed = scan(sandbox, narrowed).findings[0]
        probes = [jit for sql, jit in asked if "wd_old" in sql]
        asked.clear()
        scan(sandbox, checks)
        grouped = [jit for sql, jit in asked if "GROUP BY" in sql]
    assert probes == [False]
    assert grouped and all(grouped)
    assert (windowed.failing, windowed.total, windowed.details["duplicate_values"]) == (5, 7, 3)


def test_compound_keys_are_probed_through_the_index_on_postgresql(make_database, tmp_path: Path) -> None:
    """A compound key without NULL parts is looked up by plain equality, which the key's index answers; a key
    with a NULL part still matches an older row with the same NULL part."""
    db: TestDatabase = make_database("postgresql")
    db.run("CREATE TABLE m (a INT, b INT, seq INT)", "CREATE INDEX m_ab ON m (a, b)", "CREATE INDEX m_seq ON m (seq)")
    db.insert("m", ["a", "b", "seq"], [(i, i % 7, i) for i in range(1, 20001)] + [(5, None, 20001)])
    # new rows: (3, 3) repeats an old row, (20002, NULL) twice among the new, (5, NULL) repeats the old (5, NULL)
    db.insert("m", ["a", "b", "seq"], [(3, 3, 20010), (20002, None, 20011), (20002, None, 20012),
                                       (5, None, 20013), (20003, 1, 20014)])
    db.run("ANALYZE m")
    checks = checks_of(tmp_path, "tables:\n  m:\n    incremental: {column: seq}\n    checks:\n"
                                 "      - unique: {columns: [a, b]}\n")
    with Sandbox(db.url) as sandbox:
        narrowed, _ = narrow(sandbox, checks, {"m": 20010})
        sql = [m.sql for m in narrowed[0].metrics(sandbox.dialect) if hasattr(m, "sql")][0]
        doc = scan(sandbox, narrowed)
    assert (doc.findings[0].failing, doc.findings[0].total) == (4, 5)
    assert doc.findings[0].details["duplicate_values"] == 3
    with db.engine.connect() as conn:
        plan = "\n".join(r[0] for r in conn.exec_driver_sql("EXPLAIN " + sql))
    # keys without a NULL part (SubPlan 1): through the index; only keys with one take the NULL-safe form
    assert "Index Scan using m_ab on m wd_old  " in plan and "(a = wd_new.k0) AND (b = wd_new.k1)" in plan, plan
    assert "Seq Scan on m wd_old " not in plan, plan


def test_appended_keys_are_read_as_one_range_on_postgresql(make_database, tmp_path: Path) -> None:
    """Where the window's integer keys lie close together (ids appended in order), the older rows of their range
    are read through the key's index in one statement instead of one probe per new key: the same findings as the
    probes, and a window whose keys are spread out keeps the probes."""
    db: TestDatabase = make_database("postgresql")
    db.run("CREATE TABLE ev (id INT, seq INT)", "CREATE INDEX ev_id ON ev (id)", "CREATE INDEX ev_seq ON ev (seq)")
    # old rows 1..999 (seq = id) and an old row (seq 5) carrying id 1003, which a new row reuses
    db.insert("ev", ["id", "seq"], [(i, i) for i in range(1, 1000)] + [(1003, 5)])
    # the window (seq >= 1000): ids 1000..1010, 1007 again, and a row without an id
    db.insert("ev", ["id", "seq"], [(i, i) for i in range(1000, 1011)] + [(1007, 1011), (None, 1012)])
    checks = checks_of(tmp_path, "tables:\n  ev:\n    incremental: {column: seq}\n    checks:\n      - unique: id\n")

    def judged(sandbox: Sandbox, span: bool) -> tuple[int, int, int, str]:
        narrowed, _ = narrow(sandbox, checks, {"ev": 1000})
        if not span:
            narrowed[0].span = None
        found = scan(sandbox, narrowed).findings[0]
        return found.failing, found.total, found.details["duplicate_values"], narrowed[0].metrics("postgres")[1].sql

    with Sandbox(db.url) as sandbox:
        *ranged, sql = judged(sandbox, span=True)
        *probed, probe_sql = judged(sandbox, span=False)
    # 1003 (an older row has it) and 1007 (twice in the window): 3 window rows fail, of 13
    assert ranged == probed == [3, 13, 2]
    assert "BETWEEN 1000 AND 1010" in sql and "wd_old" not in sql and "wd_old" in probe_sql
    db.insert("ev", ["id", "seq"], [(3, 1013)])  # a new row reusing an old id far below: the keys spread out
    with Sandbox(db.url) as sandbox:
        *spread, sql = judged(sandbox, span=True)
    assert spread == [4, 14, 3] and "BETWEEN" not in sql
