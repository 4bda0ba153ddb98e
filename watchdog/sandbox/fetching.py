"""Fetching rows under a row cap and a byte cap (no imports: the SQLite worker uses it too)."""

from __future__ import annotations

TYPE_CHECKING = False  # not typing.TYPE_CHECKING: importing typing would slow the worker's start
if TYPE_CHECKING:
    from collections.abc import Callable
    from typing import Any

def fetch_capped(cursor: Any, max_rows: int, max_bytes: int, *, max_batch: int = 500,
                 before_batch: Callable[[], None] | None = None) -> tuple[list[tuple[Any, ...]], bool]:
    """Fetch at most ``max_rows`` rows and ``max_bytes`` bytes from a DB-API cursor; say whether more were left.

    The first batch is one row; later batches grow (x4, up to ``max_batch``) only as far as the byte
    budget left divided by the largest row so far, so huge rows are never fetched many at a time.
    ``before_batch()`` is called before every batch but the first.
    """
    rows: list[tuple[Any, ...]] = []
    size = 0
    largest = 1
    batch = 1
    first = True
    while True:
        if not first and before_batch is not None:
            before_batch()
        first = False
        fetched = cursor.fetchmany(min(batch, max_rows + 1 - len(rows)))
        if not fetched:
            return rows, False
        for row in fetched:
            if len(rows) >= max_rows:
                return rows, True
            row = tuple(row)
            n = row_size(row)
            size += n
            if size > max_bytes:
                return rows, True
            rows.append(row)
            largest = max(largest, n)
        batch = max(1, min(max_batch, batch * 4, (max_bytes - size) // largest))


def row_size(row: tuple[Any, ...]) -> int:
    """A cheap estimate of a row's size in bytes, for the byte cap."""
    total = 0
    for value in row:
        if isinstance(value, (str, bytes, bytearray, memoryview)):
            total += len(value)
        else:
            total += 16
    return total
