"""``watchdog diff`` and :func:`diff_tables` on real databases with planted differences of every kind; the counts
are checked against the planted truth (and, where both tables are on one server, against a full join)."""

from __future__ import annotations

import json
import time
from decimal import Decimal

import pytest

from tests.dbs import TestDatabase
from watchdog.errors import QueryRefused
from watchdog.reconcile import DiffSpec, ReconcileError, ReconcileTimeout, diff_tables
from watchdog.sandbox import Sandbox

N = 1500

DDL = {
    "sqlite": "id INTEGER, line INTEGER, amount DECIMAL(12, 2), score DOUBLE, status TEXT, note TEXT, "
              "created TIMESTAMP",
    "postgresql": "id INTEGER, line INTEGER, amount NUMERIC(12, 2), score DOUBLE PRECISION, status TEXT, note TEXT, "
                  "created TIMESTAMP(3)",
    "mariadb": "id INT, line INT, amount DECIMAL(12, 2), score DOUBLE, status VARCHAR(20), note VARCHAR(20), "
               "created DATETIME(3)",
    "duckdb": "id INTEGER, line INTEGER, amount DECIMAL(12, 2), score DOUBLE, status VARCHAR, note VARCHAR, "
              "created TIMESTAMP",
}
COLUMNS = ["id", "line", "amount", "score", "status", "note", "created"]


def base_rows() -> list[list]:
    rows = []
    for i in range(1, N + 1):
        rows.append([i, i % 3, Decimal(f"{i % 97}.{i % 100:02d}"), 1.0 + i / 8, ("new", "paid", "sent")[i % 3],
                     None if i % 5 == 0 else f"n{i % 11}", f"2024-03-{1 + i % 28:02d} 10:{i % 60:02d}:00.250"])
    return rows


def planted(rows: list[list]) -> list[list]:
    """The target's rows: what the tests expect the diff to find."""
    by_id = {r[0]: list(r) for r in rows}
    for gone in (17, 400):
        del by_id[gone]
    by_id[N + 100] = [N + 100, 1, Decimal("1.00"), 1.0, "new", None, "2024-03-01 10:00:00.250"]
    by_id[42][2] = Decimal("10.51") if by_id[42][2] != Decimal("10.51") else Decimal("10.52")  # a changed amount
    by_id[7][4] = by_id[7][4].capitalize()                    # case only
    by_id[8][4] = by_id[8][4] + " "                           # a trailing space
    by_id[10][5] = ""                                         # NULL -> ''
    by_id[11][3] = by_id[11][3] + 1e-9                        # float noise under the 6-digit precision
    by_id[12][3] = by_id[12][3] + 1e-3                        # over it
    return [by_id[k] for k in sorted(by_id)]


CHANGED = {42, 7, 8, 10, 12}


def load(db: TestDatabase, rows: list[list], table: str = "orders") -> None:
    db.run(f"CREATE TABLE {db.quote(table)} ({DDL[db.kind]})")
    if db.kind == "sqlite":
        rows = [[float(v) if isinstance(v, Decimal) else v for v in r] for r in rows]
    db.insert(table, COLUMNS, rows)


PAIRS = [("sqlite", "duckdb"), ("postgresql", "postgresql"), ("postgresql", "mariadb"), ("sqlite", "postgresql"),
         ("mariadb", "sqlite")]


@pytest.mark.parametrize(("source_kind", "target_kind"), PAIRS)
def test_planted_differences_are_counted_exactly(make_database, source_kind: str, target_kind: str) -> None:
    src, tgt = make_database(source_kind), make_database(target_kind)
    rows = base_rows()
    load(src, rows)
    load(tgt, planted(rows))
    spec = DiffSpec(table="orders", key=["id"], leaf_rows=8, timestamp_precision=3, samples=10)
    with Sandbox(src.url) as a, Sandbox(tgt.url) as b:
        result = diff_tables(a, b, spec)
    assert (result.source_rows, result.target_rows) == (N, N - 1)
    assert (result.missing_in_target, result.missing_in_source, result.changed) == (2, 1, len(CHANGED))
    assert [s["id"] for s in result.samples["missing_in_target"]] == [17, 400]
    assert [s["id"] for s in result.samples["missing_in_source"]] == [N + 100]
    changed = {s["id"]: s["column"] for s in result.samples["changed"]}
    assert changed == {42: "amount", 7: "status", 8: "status", 10: "note", 12: "score"}
    assert result.levels > 1  # small segments: bisection went down more than one level
    assert not result.identical


@pytest.mark.parametrize(("source_kind", "target_kind"), [("sqlite", "postgresql"), ("postgresql", "mariadb")])
def test_identical_tables_take_two_statements_a_side(make_database, source_kind: str, target_kind: str) -> None:
    src, tgt = make_database(source_kind), make_database(target_kind)
    load(src, base_rows())
    load(tgt, base_rows())
    with Sandbox(src.url) as a, Sandbox(tgt.url) as b:
        result = diff_tables(a, b, DiffSpec(table="orders", key=["id"], timestamp_precision=3))
    assert result.identical and result.differences == 0
    assert result.statements == {"source": 2, "target": 2}


def test_compound_keys_are_hashed_and_duplicates_reported_apart(make_database) -> None:
    src, tgt = make_database("postgresql"), make_database("sqlite")
    rows = base_rows()
    load(src, rows)
    target = planted(rows)
    target.append(list(target[100]))        # one key twice on the target
    load(tgt, target)
    with Sandbox(src.url) as a, Sandbox(tgt.url) as b:
        result = diff_tables(a, b, DiffSpec(table="orders", key=["id", "line"], leaf_rows=16, timestamp_precision=3))
    assert result.duplicate_keys == 1
    assert result.samples["duplicate_keys"][0]["source_rows"] == 1
    assert result.samples["duplicate_keys"][0]["target_rows"] == 2
    assert (result.missing_in_target, result.missing_in_source, result.changed) == (2, 1, len(CHANGED))


def test_a_key_range_empty_on_one_side(make_database) -> None:
    src, tgt = make_database("sqlite"), make_database("duckdb")
    rows = base_rows()
    load(src, rows)
    load(tgt, [r for r in rows if not 300 <= r[0] < 700])
    with Sandbox(src.url) as a, Sandbox(tgt.url) as b:
        result = diff_tables(a, b, DiffSpec(table="orders", key=["id"], timestamp_precision=3))
    assert (result.missing_in_target, result.missing_in_source, result.changed) == (400, 0, 0)


def test_counts_match_a_full_join_on_one_server(make_database) -> None:
    db = make_database("postgresql")
    rows = base_rows()
    load(db, rows, "orders")
    load(db, planted(rows), "orders_copy")
    with Sandbox(db.url) as a, Sandbox(db.url) as b:
        result = diff_tables(a, b, DiffSpec(table="orders", target_table="orders_copy", key=["id"],
                                            timestamp_precision=3))
    join = db.scalar("""SELECT json_build_array(
        count(*) FILTER (WHERE t.id IS NULL), count(*) FILTER (WHERE s.id IS NULL),
        count(*) FILTER (WHERE s.id IS NOT NULL AND t.id IS NOT NULL AND (
            s.amount IS DISTINCT FROM t.amount OR round(s.score::numeric, 6) IS DISTINCT FROM round(t.score::numeric, 6)
            OR s.status IS DISTINCT FROM t.status OR s.note IS DISTINCT FROM t.note OR s.line IS DISTINCT FROM t.line
            OR s.created IS DISTINCT FROM t.created)))
        FROM orders s FULL JOIN orders_copy t ON s.id = t.id""")
    assert [result.missing_in_target, result.missing_in_source, result.changed] == list(join)


def test_columns_exclude_and_precision(make_database) -> None:
    src, tgt = make_database("sqlite"), make_database("postgresql")
    rows = base_rows()
    load(src, rows)
    load(tgt, planted(rows))
    with Sandbox(src.url) as a, Sandbox(tgt.url) as b:
        only = diff_tables(a, b, DiffSpec(table="orders", key=["id"], columns=["amount"]))
        coarse = diff_tables(a, b, DiffSpec(table="orders", key=["id"], exclude=["status", "note", "created"],
                                            column_precision={"score": 2}))
    assert only.columns == ["amount"] and only.changed == 1
    assert coarse.changed == 1  # only the amount: the score's 0.001 is under 2 decimal places


def test_types_that_cannot_be_compared_are_refused_by_name(make_database) -> None:
    src, tgt = make_database("postgresql"), make_database("postgresql")
    src.run("CREATE TABLE t (id INTEGER, v TEXT)", "INSERT INTO t VALUES (1, '1')")
    tgt.run("CREATE TABLE t (id INTEGER, v INTEGER)", "INSERT INTO t VALUES (1, 1)")
    with Sandbox(src.url) as a, Sandbox(tgt.url) as b, pytest.raises(ReconcileError, match="column 'v' is TEXT"):
        diff_tables(a, b, DiffSpec(table="t", key=["id"]))


def test_no_key_compares_the_tables_as_wholes(make_database) -> None:
    src, tgt = make_database("sqlite"), make_database("mariadb")
    load(src, base_rows())
    load(tgt, base_rows())
    with Sandbox(src.url) as a, Sandbox(tgt.url) as b:
        same = diff_tables(a, b, DiffSpec(table="orders", key=[], timestamp_precision=3))
    assert same.identical and "cannot be located" in (same.note or "")
    tgt.run("UPDATE orders SET status = 'x' WHERE id = 3")
    with Sandbox(src.url) as a, Sandbox(tgt.url) as b:
        other = diff_tables(a, b, DiffSpec(table="orders", key=[], timestamp_precision=3))
    assert not other.identical and other.changed is None


def test_a_deadline_mid_bisection_is_one_clear_error_and_nothing_keeps_running(make_database) -> None:
    src, tgt = make_database("postgresql"), make_database("postgresql")
    for db in (src, tgt):
        db.run("CREATE TABLE big AS SELECT g AS id, md5(g::text) AS v FROM generate_series(1, 300000) AS g")
    tgt.run("UPDATE big SET v = 'x' WHERE mod(id, 1000) = 0")
    with Sandbox(src.url) as a, Sandbox(tgt.url) as b, pytest.raises(ReconcileTimeout, match="deadline"):
        diff_tables(a, b, DiffSpec(table="big", key=["id"], deadline_s=0.3))
    time.sleep(0.5)
    running = src.scalar("SELECT count(*) FROM pg_stat_activity WHERE strpos(query, 'wd_m') > 0 "
                         "AND state = 'active' AND pid <> pg_backend_pid() "
                         "AND datname = current_database()")  # the server is shared with other work
    assert running == 0


@pytest.mark.parametrize("table", ['orders"; DROP TABLE orders; --', "orders; DELETE FROM orders", "pg_shadow"])
def test_hostile_table_names_are_identifiers(make_database, table: str) -> None:
    src = make_database("postgresql")
    load(src, base_rows())
    with Sandbox(src.url) as a, pytest.raises((ReconcileError, QueryRefused)):
        diff_tables(a, a, DiffSpec(table=table, key=["id"]))
    assert src.scalar("SELECT count(*) FROM orders") == N


@pytest.mark.parametrize("where", ["1=1; DELETE FROM orders", "id > 0) OR (1=1", "pg_sleep(10) IS NULL",
                                   "id IN (SELECT usename FROM pg_shadow)"])
def test_hostile_where_conditions_are_refused(make_database, where: str) -> None:
    src = make_database("postgresql")
    load(src, base_rows())
    with Sandbox(src.url) as a, pytest.raises(QueryRefused):
        diff_tables(a, a, DiffSpec(table="orders", key=["id"], where=where, timestamp_precision=3))
    assert src.scalar("SELECT count(*) FROM orders") == N


def test_the_command_prints_json_and_exits_by_the_result(make_database, run_cli) -> None:
    src, tgt = make_database("sqlite"), make_database("postgresql")
    rows = base_rows()
    load(src, rows)
    load(tgt, planted(rows))
    p = run_cli("diff", src.url, tgt.url, "--table", "orders", "--key", "id", "--json", "--timestamp-precision", "ms")
    assert p.returncode == 1, p.stderr
    doc = json.loads(p.stdout)
    for key in ("table", "target_table", "key", "columns", "source_rows", "target_rows", "missing_in_target",
                "missing_in_source", "changed", "samples", "statements", "seconds"):
        assert key in doc
    assert (doc["missing_in_target"], doc["missing_in_source"], doc["changed"]) == (2, 1, len(CHANGED))
    assert set(doc["statements"]) == {"source", "target"}
    same = run_cli("diff", src.url, src.url, "--table", "orders", "--key", "id", "--timestamp-precision", "ms")
    assert same.returncode == 0 and "identical" in same.stdout
    bad = run_cli("diff", src.url, tgt.url, "--table", "orders", "--key", "nope")
    assert bad.returncode == 3 and "key column 'nope'" in bad.stderr
    pw = run_cli("diff", src.url, "postgresql+psycopg://postgres:s3cr3t-pw@127.0.0.1:1/x", "--table", "orders",
                 "--key", "id")
    assert pw.returncode == 3 and "s3cr3t-pw" not in pw.stdout + pw.stderr


@pytest.mark.parametrize("column", ['amount"; DROP TABLE orders; --', "amount) FROM orders; --", "`id`"])
def test_hostile_column_names_are_not_columns(make_database, column: str) -> None:
    src = make_database("mariadb")
    load(src, base_rows())
    with Sandbox(src.url) as a, pytest.raises(ReconcileError, match="not a column"):
        diff_tables(a, a, DiffSpec(table="orders", key=["id"], columns=[column]))
    with Sandbox(src.url) as a, pytest.raises(ReconcileError, match="not a column"):
        diff_tables(a, a, DiffSpec(table="orders", key=[column]))
    assert src.scalar("SELECT count(*) FROM orders") == N
