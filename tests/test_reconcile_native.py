"""Native row hashes on two PostgreSQL sides, and the adaptive bisection of dense differences, on real databases.

A native hash is only worth using if two values hash alike exactly when their canonical texts are equal: proven
here column by column on the edge corpus plus values that differ only below the compared precision."""

from __future__ import annotations

from datetime import datetime
from decimal import Decimal

import pytest

from tests.test_reconcile_canonical import DDL as EDGE_DDL
from tests.test_reconcile_canonical import forms
from tests.test_reconcile_canonical import load as load_edge
from tests.test_reconcile_diff import base_rows, load
from watchdog.reconcile import DiffSpec, diff_tables, native
from watchdog.reconcile import canonical as c
from watchdog.reconcile.bisect import dense_fanout, density, split_cost
from watchdog.reconcile.side import SEGMENTS_PER_STATEMENT, Partition, _segment_chunks
from watchdog.sandbox import Sandbox

#: rows equal to corpus rows below the compared precision (floats past 6 places, -0.0, timestamps past the
#: second or millisecond): their canonical texts are equal, so must their native values be
NEAR = [
    (101, 0, Decimal("0.00"), -0.0, "", None, datetime(2024, 1, 2, 3, 4, 5, 123999), True),
    (102, 1, Decimal("10.50"), 0.1 + 1e-9, "a ", None, datetime(2024, 1, 2, 3, 4, 5, 999), False),
    (103, -1, Decimal("-2.50"), 2.5000000004, "abc", None, datetime(1999, 12, 31, 23, 59, 59, 400), None),
]


@pytest.mark.parametrize("precision", [0, 3, 6])
def test_native_values_are_equal_exactly_when_canonical_texts_are(make_database, precision: int) -> None:
    db = make_database("postgresql")
    load_edge(db)
    db.insert("edge", list(EDGE_DDL["postgresql"]), NEAR)
    cols = forms(precision)
    d = "postgres"
    pieces = []
    for col in cols:
        pieces += [c.value_text(col, d), native.row_hash([col], d)]
    with Sandbox(db.url) as box:
        rows = box.query(f"SELECT {', '.join(pieces)} FROM edge", max_rows=1000).rows
    assert len(rows) > 20
    for i, col in enumerate(cols):
        by_text: dict[object, set[int]] = {}
        by_hash: dict[int, set[object]] = {}
        for row in rows:
            text, hashed = row[2 * i], int(row[2 * i + 1])
            by_text.setdefault(text, set()).add(hashed)
            by_hash.setdefault(hashed, set()).add(text)
        assert all(len(h) == 1 for h in by_text.values()), f"{col.name}: one canonical text, several hashes"
        assert all(len(t) == 1 for t in by_hash.values()), f"{col.name}: one hash, several canonical texts"
    # the near rows did meet their corpus twins (so the test compared something)
    assert len({row[4] for row in rows}) < len(rows)


def test_two_postgresql_databases_hash_natively_and_count_exactly(make_database) -> None:
    src, tgt = make_database("postgresql"), make_database("postgresql")
    rows = base_rows()
    load(src, rows)
    target = [list(r) for r in rows if r[0] != 17]
    target[99][4] = target[99][4].upper()
    load(tgt, target)
    with Sandbox(src.url) as a, Sandbox(tgt.url) as b:
        result = diff_tables(a, b, DiffSpec(table="orders", key=["id"], timestamp_precision=3))
        by_hash = diff_tables(a, b, DiffSpec(table="orders", key=["id", "line"], timestamp_precision=3))
    assert result.row_hash == "native" and result.to_json()["row_hash"] == "native"
    assert (result.missing_in_target, result.missing_in_source, result.changed) == (1, 0, 1)
    assert result.statements == {"source": 4, "target": 4}  # bounds (and probe), checksums, leaf, samples
    assert by_hash.row_hash == "native"
    assert (by_hash.missing_in_target, by_hash.missing_in_source, by_hash.changed) == (1, 0, 1)


def test_other_engine_pairs_keep_the_canonical_md5(make_database) -> None:
    src, tgt = make_database("postgresql"), make_database("mariadb")
    load(src, base_rows())
    load(tgt, base_rows())
    with Sandbox(src.url) as a, Sandbox(tgt.url) as b:
        result = diff_tables(a, b, DiffSpec(table="orders", key=["id"], timestamp_precision=3))
    assert result.identical and result.row_hash == "md5"


def test_native_hashes_need_the_same_version_encoding_and_probe() -> None:
    same = ("150020", "UTF8", -42)
    assert native.agree(same, ("150007", "UTF8", -42))
    assert not native.agree(same, ("160001", "UTF8", -42))
    assert not native.agree(same, ("150020", "LATIN1", -42))
    assert not native.agree(same, ("150020", "UTF8", 42))
    assert not native.agree(same, None)
    assert not native.agree(("x", "UTF8", 1), ("x", "UTF8", 1))
    assert native.probe_columns("mysql") == [] and len(native.probe_columns("postgres")) == 3


def dense(rows: list[list]) -> list[list]:
    """A target where about one row in five differs: gone, changed or added."""
    out = []
    for r in rows:
        r = list(r)
        if r[0] % 15 == 0:
            continue
        if r[0] % 15 == 5:
            r[2] = r[2] + Decimal("0.01")
        if r[0] % 15 == 10:
            r[4] = "changed"
        out.append(r)
    out += [[n, 0, Decimal("1.00"), 1.0, "new", None, "2024-03-01 10:00:00.250"] for n in range(5000, 5040)]
    return out


@pytest.mark.parametrize(("source_kind", "target_kind"), [("postgresql", "postgresql"), ("sqlite", "duckdb"),
                                                          ("postgresql", "mariadb")])
def test_dense_differences_are_counted_exactly(make_database, source_kind: str, target_kind: str) -> None:
    src, tgt = make_database(source_kind), make_database(target_kind)
    rows = base_rows()
    load(src, rows)
    load(tgt, dense(rows))
    gone = sum(1 for r in rows if r[0] % 15 == 0)
    changed = sum(1 for r in rows if r[0] % 15 in (5, 10))
    with Sandbox(src.url) as a, Sandbox(tgt.url) as b:
        result = diff_tables(a, b, DiffSpec(table="orders", key=["id"], leaf_rows=64, timestamp_precision=3))
    assert (result.missing_in_target, result.missing_in_source, result.changed) == (gone, 40, changed)
    assert result.levels >= 2


def test_dense_levels_split_into_more_parts_and_stay_bounded() -> None:
    assert density(0, 100, 0) == 0.0
    assert density(100, 100, 0) > 4  # every segment differs: bounded, not infinite
    assert density(10, 100, 50) == 0.5  # the rows the counts miss are a floor
    assert dense_fanout(0.5, 256, 4096) <= 16 < dense_fanout(20, 4096, 4096) <= 4096
    assert dense_fanout(20, 4096, 64) == 64
    assert split_cost(256, 2.5, 32) < 256 / 2


def test_checksum_statements_hold_a_bounded_number_of_segments() -> None:
    partition = Partition(by_hash=False, lo=1, hi=10_000_000)
    ranges = [(1, 10_000_000)]
    chunks = _segment_chunks(ranges, partition, 8)
    covered = [r for chunk in chunks for r in chunk]
    assert covered[0][0] == 1 and covered[-1][1] == 10_000_000
    assert all(a[1] + 1 == b[0] for a, b in zip(covered, covered[1:], strict=False))
    for chunk in chunks:
        assert sum(-(-(hi - lo + 1) // 8) for lo, hi in chunk) <= SEGMENTS_PER_STATEMENT
    assert _segment_chunks(ranges, Partition(by_hash=True), 8) == [ranges]
