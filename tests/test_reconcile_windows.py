"""Dense differences read through windows: small segments close together are fetched by one range scan that lists
its segments, on real databases; every count is checked against a comparison of the rows in Python."""

from __future__ import annotations

import random
from decimal import Decimal

import pytest

from tests.test_reconcile_diff import load
from watchdog.reconcile import DiffSpec, diff_tables
from watchdog.reconcile.side import (
    RANGES_PER_STATEMENT,
    WINDOW_GAP,
    WINDOW_GAP_ROWS,
    WINDOW_SEGMENTS_PER_STATEMENT,
    _window_chunks,
    windows,
)
from watchdog.sandbox import Sandbox

N = 12_000


def source_rows() -> list[list]:
    return [[i, i % 4, Decimal(f"{i % 89}.{i % 100:02d}"), 0.5 + i / 16, ("new", "paid", "sent")[i % 3],
             None if i % 7 == 0 else f"n{i % 13}", f"2024-05-{1 + i % 28:02d} 08:{i % 60:02d}:00.500"]
            for i in range(1, N + 1)]


def dense_target(rows: list[list], seed: int = 7) -> list[list]:
    """About one row in nine differs at random (gone, amount or status changed), a run of 300 rows is gone, and
    rows past the source's last key are added."""
    rng = random.Random(seed)
    out = []
    for r in rows:
        r = list(r)
        roll = rng.random()
        if 4000 <= r[0] < 4300 or roll < 0.04:
            continue
        if roll < 0.08:
            r[2] = r[2] + Decimal("0.01")
        elif roll < 0.11:
            r[4] = "changed"
        out.append(r)
    out += [[n, 0, Decimal("1.00"), 1.0, "new", None, "2024-05-01 08:00:00.500"] for n in range(N + 1, N + 60)]
    return out


def truth(source: list[list], target: list[list], key: int = 1) -> tuple[int, int, int]:
    """(missing in target, missing in source, changed), by the first ``key`` columns, in Python."""
    s = {tuple(r[:key]): r for r in source}
    t = {tuple(r[:key]): r for r in target}
    return len(s.keys() - t.keys()), len(t.keys() - s.keys()), sum(1 for k in s.keys() & t.keys() if s[k] != t[k])


@pytest.mark.parametrize(("source_kind", "target_kind", "key"), [
    ("postgresql", "postgresql", ["id"]), ("sqlite", "sqlite", ["id"]), ("sqlite", "postgresql", ["id"]),
    ("postgresql", "sqlite", ["id", "line"])])
def test_dense_differences_through_windows_are_counted_exactly(make_database, source_kind: str, target_kind: str,
                                                               key: list[str]) -> None:
    src, tgt = make_database(source_kind), make_database(target_kind)
    rows, target = source_rows(), dense_target(source_rows())
    load(src, rows)
    load(tgt, target)
    seen: list[str] = []
    with Sandbox(src.url) as a, Sandbox(tgt.url) as b:
        a.on_execute(seen.append)
        result = diff_tables(a, b, DiffSpec(table="orders", key=key, leaf_rows=8, timestamp_precision=3))
    assert (result.missing_in_target, result.missing_in_source, result.changed) == truth(rows, target, len(key))
    assert result.source_rows == N and result.target_rows == len(target)
    leaves = [sql for sql in seen if sql.startswith("SELECT wd_m")]
    assert any(" IN (" in sql for sql in leaves)  # segments with gaps between them were read as windows
    # a few thousand small segments differ; their rows come in a handful of statements
    assert len(leaves) <= 6


def test_windows_join_segments_across_small_gaps_only() -> None:
    assert windows([3, 4, 5], 10, 4) == [(22, 33, None)]  # contiguous: a plain range
    gap = WINDOW_GAP + 1
    assert windows([0, gap, 2 * gap + 1], 0, 2) == [(0, 2 * gap + 1, (0, gap)), (4 * gap + 2, 4 * gap + 3, None)]
    assert windows([], 0, 8) == []
    # a segment that agrees but holds many rows is not read to save a range
    heavy = {1: WINDOW_GAP_ROWS + 1}
    assert windows([0, 2], 0, 8, lambda b: heavy.get(b, 0)) == [(0, 7, None), (16, 23, None)]
    assert windows([0, 2], 0, 8, lambda b: 3) == [(0, 23, (0, 2))]


def test_window_chunks_bound_ranges_and_listed_segments() -> None:
    segments = list(range(0, 3 * WINDOW_SEGMENTS_PER_STATEMENT, 2))  # one long run with a gap after each
    runs = windows(segments, 5, 16)
    assert len(runs) == 1
    chunks = _window_chunks(runs, 5, 16)
    listed = [b for chunk in chunks for _, _, part in chunk for b in (part or ())]
    assert listed == segments
    for chunk in chunks:
        assert len(chunk) <= RANGES_PER_STATEMENT
        assert sum(len(part or ()) for _, _, part in chunk) <= WINDOW_SEGMENTS_PER_STATEMENT
        for start, end, part in chunk:  # each piece's range covers exactly its own segments
            assert part is not None and (start, end) == (5 + part[0] * 16, 5 + (part[-1] + 1) * 16 - 1)
    far = windows(list(range(0, 1000 * (WINDOW_GAP + 2), WINDOW_GAP + 2)), 0, 1)  # sparse: one range each
    assert all(part is None for _, _, part in far)
    assert all(len(chunk) <= RANGES_PER_STATEMENT for chunk in _window_chunks(far, 0, 1))
