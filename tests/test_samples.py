"""Sample rows cost at most one extra read of a table, however many checks breach and however sparse.

Every test runs on SQLite, PostgreSQL and MariaDB and asserts the same rows on each. On SQLite the counting pass
also returns the keys of the rows failing each sparse condition, so their samples are read by key: no extra read
of the table at all.
"""

from __future__ import annotations

from pathlib import Path

import pytest
import sqlglot
from sqlglot import exp

from tests.dbs import TestDatabase
from watchdog.errors import QueryError, QueryTimeout
from watchdog.findings import FindingsDoc
from watchdog.sandbox import Sandbox
from watchdog.scan.parallel import split_for
from watchdog.scan.planner import SPLIT_MIN_KEYS, plan
from watchdog.scan.samples import KEYED_DIALECTS
from watchdog.scan.scanner import scan
from watchdog.scan.suites import load_suites

ROWS = 300
COLUMNS = 12
#: check k (1-based) on column v<k> fails at these ids: 1 or 2 rows, spread over the table
SPARSE = {k: sorted({(k * 53) % ROWS + 1, (k * 131 + 97) % ROWS + 1} if k % 2 else {(k * 71) % ROWS + 1})
          for k in range(1, COLUMNS + 1)}
DIGITS = "0, 1, 2, 3, 4, 5, 6, 7, 8, 9"
KINDS_BY_K = ("not_null", "range", "accepted_values")


def kind(k: int) -> str:
    return KINDS_BY_K[k % 3]


def bad_value(k: int) -> int | None:
    return {"not_null": None, "range": 5000, "accepted_values": 42}[kind(k)]


def load(db: TestDatabase, *, dense_ids: range = range(0)) -> None:
    """``wide``: ids 1..ROWS, v1..v12 in 0..9 except the planted defects; ``code`` NULL for ``dense_ids``;
    ``email`` duplicated for ids 10/11 and 20/21/22; ``parent`` points at ``parents`` except ids 7 and 250."""
    columns = {"id": "int", **{f"v{k}": "int" for k in range(1, COLUMNS + 1)}, "code": "text", "email": "text",
               "parent": "int"}
    rows = []
    for i in range(1, ROWS + 1):
        values = [bad_value(k) if i in SPARSE[k] else (i * (k + 3)) % 10 for k in range(1, COLUMNS + 1)]
        email = "a@x.io" if i in (10, 11) else "b@x.io" if i in (20, 21, 22) else f"u{i}@x.io"
        parent = 9999 if i in (7, 250) else 1 + i % 5
        rows.append((i, *values, None if i in dense_ids else f"C{i}", email, parent))
    db.create_table("wide", columns, rows)
    db.create_table("parents", {"id": "int"}, [(p,) for p in range(1, 6)])


def suite(tmp_path: Path, extra: str = "") -> Path:
    lines = ["tables:", "  wide:"]
    for k in range(1, COLUMNS + 1):
        lines.append({"not_null": f"    - not_null: v{k}",
                      "range": f"    - range: {{column: v{k}, min: 0, max: 1000}}",
                      "accepted_values": f"    - accepted_values: {{column: v{k}, values: [{DIGITS}]}}"}
                     [kind(k)])
    path = tmp_path / "suite.yaml"
    path.write_text("\n".join(lines) + "\n" + extra, encoding="utf-8")
    return path


def run(db: TestDatabase, path: Path, sample: int = 5) -> tuple[FindingsDoc, list[str], str]:
    checks = [c for s in load_suites([path]) for c in s.checks]
    sent: list[str] = []
    with Sandbox(db.url) as box:
        box.on_execute(sent.append)
        doc = scan(box, checks, sample=sample)
        planned = len(plan(checks, box.dialect, sample=sample, split=split_for(box)).statements)
        return doc, sent[planned:], box.dialect


def reads_of(sql: str, dialect: str) -> list[exp.Select]:
    """The SELECTs of a statement that read a table directly."""
    tree = sqlglot.parse_one(sql, read=dialect)
    return [s for s in tree.find_all(exp.Select) if isinstance(s.args["from_"].this, exp.Table)]


def test_sparse_failures_of_many_checks_are_sampled_in_one_read(database, tmp_path):
    load(database)
    doc, extra, dialect = run(database, suite(tmp_path))
    assert {f.name: f.failing for f in doc.findings} == {
        f"wide.v{k}.{kind(k)}": len(SPARSE[k]) for k in range(1, COLUMNS + 1)}
    # 12 breaching checks, one statement for all their samples: a single read of `wide`, stopped by a
    # LIMIT of exactly the failing rows the counts found; where the counting pass returned the failing rows'
    # keys, that statement reads those rows by key (a rowid IN list of exactly them) and not the table
    assert len(extra) == 1
    (read,) = reads_of(extra[0], dialect)
    if dialect in KEYED_DIALECTS:
        wanted = read.args["where"].this
        assert isinstance(wanted, exp.In) and wanted.this.name.lower() == "rowid"
        assert sorted(int(k.name) for k in wanted.expressions) == sorted(i for ids in SPARSE.values() for i in ids)
    else:
        assert int(read.args["limit"].expression.name) == sum(len(ids) for ids in SPARSE.values())
    for k in range(1, COLUMNS + 1):
        finding = doc.findings[k - 1]
        assert sorted(row["id"] for row in finding.sample) == SPARSE[k]  # every failing row, and only those
        assert all(row[f"v{k}"] == bad_value(k) for row in finding.sample)


def test_dense_checks_get_a_capped_read_each_and_sparse_ones_share_one(database, tmp_path):
    load(database, dense_ids=range(1, 201))  # code is NULL on 200 of 300 rows
    doc, extra, dialect = run(database, suite(tmp_path, "    - not_null: code\n"), sample=3)
    dense = doc.findings[-1]
    assert (dense.name, dense.failing) == ("wide.code.not_null", 200)
    if dialect in KEYED_DIALECTS:  # the sparse ones by key, the dense one by its own capped read
        assert len(extra) == 2
        assert [int(s.args["limit"].expression.name) for s in reads_of(extra[1], dialect)] == [3]
    else:
        assert len(extra) == 1  # still one statement: a UNION ALL of the shared read and the dense LIMIT
        limits = sorted(int(s.args["limit"].expression.name) for s in reads_of(extra[0], dialect))
        assert limits == sorted([3, sum(len(ids) for ids in SPARSE.values())])
    assert len(dense.sample) == 3 and all(row["code"] is None for row in dense.sample)
    for k in range(1, COLUMNS + 1):  # the sparse ones still get all their rows (at most 3)
        assert sorted(row["id"] for row in doc.findings[k - 1].sample) == SPARSE[k][:3]


def test_unique_and_foreign_key_samples_come_from_their_own_statements(database, tmp_path):
    load(database)
    path = tmp_path / "keys.yaml"
    path.write_text("tables:\n  wide:\n    - unique: email\n"
                    "    - foreign_key: {column: parent, references: parents.id}\n", encoding="utf-8")
    doc, extra, dialect = run(database, path)
    unique, fk = doc.findings
    assert (unique.failing, unique.details["duplicate_values"]) == (5, 2)
    assert fk.failing == 2
    # the orphans came with the anti-join; the duplicated keys came with the GROUP BY, and their rows
    # with the table's one sample read (no second GROUP BY)
    assert sorted(row["id"] for row in fk.sample) == [7, 250]
    assert sorted((row["email"], row["id"]) for row in unique.sample) == [
        ("a@x.io", 10), ("a@x.io", 11), ("b@x.io", 20), ("b@x.io", 21), ("b@x.io", 22)]
    assert len(extra) == 1 and not sqlglot.parse_one(extra[0], read=dialect).find(exp.Group)


def test_without_samples_the_plain_counts_run(database, tmp_path):
    load(database)
    path = suite(tmp_path, "    - unique: email\n    - foreign_key: {column: parent, references: parents.id}\n")
    doc, extra, _ = run(database, path, sample=0)
    assert extra == [] and all(f.sample == [] for f in doc.findings)
    assert [f.failing for f in doc.findings[-2:]] == [5, 2]


@pytest.mark.parametrize("kind", ["postgresql"])
def test_postgres_statements_without_a_cursor_keep_the_caps_and_refusals(make_database, kind):
    db = make_database(kind)
    db.create_table("n", {"i": "int"}, [(i,) for i in range(50)])
    from watchdog.sandbox.sessions import open_session

    session = open_session(db.url)
    try:
        rows = session.run("SELECT i FROM n ORDER BY i", max_rows=10, max_bytes=10**6, timeout_s=10, parallel=True)
        assert rows.rows == [(i,) for i in range(10)] and rows.truncated and rows.columns == ["i"]
        # the extended protocol takes exactly one statement, as the server-side cursor did
        with pytest.raises(QueryError):
            session.run("SELECT 1; SELECT 2", max_rows=5, max_bytes=10**6, timeout_s=10, parallel=True)
        with pytest.raises(QueryTimeout):
            session.run("SELECT pg_sleep(5)", max_rows=5, max_bytes=10**6, timeout_s=0.5, parallel=True)
        # the connection is still good afterwards
        again = session.run("SELECT count(*) FROM n", max_rows=5, max_bytes=10**6, timeout_s=10, parallel=True)
        assert again.rows == [(50,)]
    finally:
        session.close()


def test_postgres_connection_dropped_while_idle_is_replaced(make_database, monkeypatch):
    import psycopg

    from watchdog.sandbox import direct

    db = make_database("postgresql")
    monkeypatch.setattr(direct, "PING_AFTER_S", 0.0)
    with Sandbox(db.url) as box:
        assert box.query("SELECT 1").rows == [(1,)]
        idle = box._session._engine._idle  # type: ignore[attr-defined]  # noqa: SLF001
        admin = db.url.replace("postgresql+psycopg://", "postgresql://")
        with psycopg.connect(admin, autocommit=True) as other:
            other.execute("SELECT pg_terminate_backend(%s)", (idle.info.backend_pid,))
        # pinged, found dead, replaced: the next statement runs, still read-only
        assert box.query("SELECT current_setting('transaction_read_only')", parallel=True).rows == [("on",)]


def test_postgres_reads_sparse_samples_in_physical_order_and_views_unordered(make_database, tmp_path):
    """The shared read of sparse conditions is ordered by ctid on PostgreSQL (parallel workers may read it, and
    a synchronized scan starting mid-table changes nothing): the samples are the first failing rows in the
    table's physical order. A view has no ctid: it is read unordered, with the same rows."""
    db = make_database("postgresql")
    load(db)
    k = next(k for k in range(1, COLUMNS + 1) if len(SPARSE[k]) == 2)
    first, second = SPARSE[k]
    db.run(f"UPDATE wide SET id = id WHERE id = {first}")  # its new version is written after the other one
    with db.engine.connect() as conn:
        order = [row[0] for row in conn.exec_driver_sql(
            f"SELECT id FROM wide WHERE id IN ({first}, {second}) ORDER BY ctid").fetchall()]
    assert order == [second, first]
    doc, extra, dialect = run(db, suite(tmp_path), sample=1)
    (read,) = reads_of(extra[0], dialect)
    assert read.args["order"].expressions[0].this.name == "ctid"
    assert [row["id"] for row in doc.findings[k - 1].sample] == [second]  # the first in physical order
    db.run("CREATE VIEW wide_v AS SELECT * FROM wide")
    view = tmp_path / "view.yaml"
    view.write_text(suite(tmp_path).read_text().replace("  wide:", "  wide_v:"), encoding="utf-8")
    doc, extra, dialect = run(db, view)
    assert len(extra) == 2 and "ORDER BY" not in extra[1]  # the ordered read failed (no ctid); unordered
    for j in range(1, COLUMNS + 1):
        assert sorted(row["id"] for row in doc.findings[j - 1].sample) == SPARSE[j]


def test_sqlite_cuts_a_keyed_pass_of_many_conditions_for_two_sandboxes(make_database, tmp_path):
    """With two sandboxes allowed (the default), SQLite's keyed pass over the 12 conditions of ``wide`` is two
    passes of 6 conditions each (a second worker takes one when it is slow): the same counts and samples as
    one pass on one sandbox, and each condition is evaluated in one of them only."""
    db = make_database("sqlite")
    load(db)
    checks = [c for s in load_suites([suite(tmp_path)]) for c in s.checks]
    assert COLUMNS >= SPLIT_MIN_KEYS
    found = {}
    for parallel in (1, 2):
        sent: list[str] = []
        with Sandbox(db.url) as box:
            box.on_execute(sent.append)
            doc = scan(box, checks, sample=5, parallel=parallel)
        counting = [sql for sql in sent if "GROUP_CONCAT" in sql]
        assert len(counting) == parallel
        for k in range(1, COLUMNS + 1):  # each condition in exactly one pass
            column = f"`v{k}`"
            assert sum(column in sql for sql in counting) == 1
        found[parallel] = [(f.name, f.failing, f.sample) for f in doc.findings]
    assert found[1] == found[2]
    assert [len(sample) for _, _, sample in found[2]] == [len(SPARSE[k]) for k in range(1, COLUMNS + 1)]
