"""Checksum bisection: compare two tables by segments of their keys, splitting only the segments that differ.

Rows sit on a number line: the integer key itself, or a 32-bit hash of the canonical key. The line is cut into
``fanout`` segments whose widths are powers of ``fanout`` (so every level's segments nest in the last's);
each side computes, in one statement per level, the row count and checksum of each segment inside the ranges
still in question. Equal segments are done. A differing segment is split again, unless it is small (at most
``leaf_rows`` rows on each side), when both sides return its keys and row hashes and Python compares them (small
segments close together are read by one range scan listing them: :func:`side.windows`).
Statements grow with the depth of the differences (a handful per level), never with the size of the table.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from watchdog.reconcile.side import LeafRow, Partition, Ranges, Side, Sums, both, windows


@dataclass
class Differences:
    """What bisection found, by canonical key."""

    missing_in_target: dict[tuple[str, ...], Any] = field(default_factory=dict)
    missing_in_source: dict[tuple[str, ...], Any] = field(default_factory=dict)
    changed: dict[tuple[str, ...], Any] = field(default_factory=dict)
    #: keys held by more than one row on a side: {key: (values, rows on source, rows on target)}
    duplicates: dict[tuple[str, ...], tuple[Any, int, int]] = field(default_factory=dict)
    levels: int = 0


#: segments of the first level at most (its statement returns one row per segment that holds rows)
MAX_FIRST_SEGMENTS = 4096


def first_width(span: int, rows: int, leaf_rows: int) -> int:
    """The first level's segment width: the smallest power of two that cuts ``span`` into segments of about
    ``leaf_rows`` rows (at most :data:`MAX_FIRST_SEGMENTS` of them), so a sparse difference is found at once."""
    segments = min(MAX_FIRST_SEGMENTS, max(1, -(-rows // max(1, leaf_rows))))
    width = 1
    while -(-span // width) > segments:
        width *= 2
    return width


def merge_ranges(buckets: list[int], lo: int, width: int) -> Ranges:
    """The value ranges of segments ``buckets`` (at ``width``), adjacent ones joined."""
    out: Ranges = []
    for b in sorted(buckets):
        start, end = lo + b * width, lo + (b + 1) * width - 1
        if out and out[-1][1] + 1 == start:
            out[-1] = (out[-1][0], end)
        else:
            out.append((start, end))
    return out


def bisect(source: Side, target: Side, partition: Partition, *, rows: int, fanout: int, leaf_rows: int,
           leaf_fetch_rows: int) -> Differences:
    """``rows``: the larger side's row count; ``fanout``: a power of two, the segments a segment splits into."""
    adaptive = not partition.by_hash and not ({source.dialect, target.dialect} & FULL_SCAN_ENGINES)
    if fanout < 2 or fanout & (fanout - 1):
        raise ValueError(f"fanout must be a power of two of at least 2, not {fanout}")
    found = Differences()
    width = first_width(partition.hi - partition.lo + 1, rows, leaf_rows)
    pending: Ranges = [(partition.lo, partition.hi)]
    while pending:
        found.levels += 1
        src, tgt = both(source.checksums, target.checksums, partition, pending, width)
        present = set(src) | set(tgt)
        differing = [b for b in sorted(present) if src.get(b) != tgt.get(b)]
        rows_of = _larger(src, tgt)
        sizes = {b: rows_of(b) for b in differing}
        lam = density(len(differing), len(present), sum(abs(_rows(src.get(b)) - _rows(tgt.get(b)))
                                                        for b in differing))
        split = fanout
        if not adaptive:
            lam = 0.0
        if lam >= DENSE and differing:
            most = (HASHED_LEVEL_SEGMENTS if partition.by_hash else LEVEL_SEGMENTS) // len(differing)
            split = dense_fanout(lam, sum(sizes.values()) / len(differing), min(width, most))
        leaves: list[tuple[int, int]] = []
        deeper: list[int] = []
        for b in differing:
            rows = sizes[b]
            small = rows <= leaf_rows and (lam < DENSE or rows <= split_cost(rows, lam, split))
            if width == 1 or small:
                leaves.append((b, rows))
            else:
                deeper.append(b)
        for chunk in _leaf_chunks(leaves, leaf_fetch_rows):
            runs = windows(chunk, partition.lo, width, rows_of)
            _compare_leaves(*both(source.leaf_rows, target.leaf_rows, partition, runs, width, leaf_fetch_rows + 1),
                            found)
        pending = merge_ranges(deeper, partition.lo, width)
        width = max(1, width // split)
    return found


#: engines whose every statement reads the whole table (no index range scans on a list of ranges): a dense
#: level's extra statements cost more than the rows they spare, so they keep the plain fan-out (as do hashed keys)
FULL_SCAN_ENGINES = frozenset({"duckdb"})
#: differences expected per segment from which a level counts as dense: then segments split into as many
#: parts as makes the fewest rows travel, and a small segment is still split when that sends fewer rows
DENSE = 0.5
#: segments a dense level asks for at most (in statements of :data:`side.SEGMENTS_PER_STATEMENT`); on a hashed
#: key, whose level is one statement reading the whole table, fewer, so its answer stays within the byte limit
LEVEL_SEGMENTS = 2**21
HASHED_LEVEL_SEGMENTS = 2**17


def density(differing: int, segments: int, count_gaps: int) -> float:
    """Differences expected per segment of a level, were they spread evenly: from the share of segments that
    differ (a Poisson estimate, bounded when every segment differs) and at least the rows the counts miss."""
    if not differing or not segments:
        return 0.0
    share = min(differing / segments, (differing + 0.5) / (segments + 1))
    return max(-math.log(1.0 - share), count_gaps / segments)


def split_cost(rows: float, lam: float, parts: int) -> float:
    """Rows that travel when a segment of ``rows`` holding about ``lam`` differences is split into ``parts``:
    one checksum row per part, then the rows of the parts that differ."""
    return min(parts, rows) + rows * (1.0 - math.exp(-lam / parts))


def dense_fanout(lam: float, rows: float, most: int) -> int:
    """The power of two (at most ``most``, at least 2) that a dense level's segments split into, fewest rows
    travelling."""
    best, parts = 2, 2
    while parts <= max(2, most):
        if split_cost(rows, lam, parts) < split_cost(rows, lam, best):
            best = parts
        parts *= 2
    return best


def _rows(sums: Sums | None) -> int:
    return 0 if sums is None else sums[0]


def _larger(src: dict[int, Sums], tgt: dict[int, Sums]) -> Callable[[int], int]:
    """A segment's rows on the side that holds more of them."""
    return lambda b: max(_rows(src.get(b)), _rows(tgt.get(b)))


def _leaf_chunks(leaves: list[tuple[int, int]], budget: int) -> list[list[int]]:
    """Segments grouped so each group's rows stay within ``budget`` (one statement per side each)."""
    chunks: list[list[int]] = []
    current: list[int] = []
    total = 0
    for b, rows in leaves:
        if current and total + rows > budget:
            chunks.append(current)
            current, total = [], 0
        current.append(b)
        total += rows
    if current:
        chunks.append(current)
    return chunks


def _compare_leaves(src_rows: list[LeafRow], tgt_rows: list[LeafRow], found: Differences) -> None:
    """Record the keys whose rows differ, in key order (only those are sorted: most keys of a leaf agree)."""
    src, src_n = _by_key(src_rows)
    tgt, tgt_n = _by_key(tgt_rows)
    odd = {k for k, (_, h) in src.items() if (t := tgt.get(k)) is None or t[1] != h}
    odd.update(k for k in tgt if k not in src)
    odd.update(src_n)
    odd.update(tgt_n)
    for key in sorted(odd, key=_order):
        s, t = src.get(key), tgt.get(key)
        rows_s = src_n.get(key, 0 if s is None else 1)
        rows_t = tgt_n.get(key, 0 if t is None else 1)
        if rows_s > 1 or rows_t > 1:
            found.duplicates[key] = ((s or t)[0], rows_s, rows_t)  # type: ignore[index]
        elif t is None:
            found.missing_in_target[key] = s[0]  # type: ignore[index]
        elif s is None:
            found.missing_in_source[key] = t[0]
        else:
            found.changed[key] = s[0]


def _order(key: tuple[str, ...]) -> tuple[tuple[int, int | float, str], ...]:
    """Keys in their natural order: numbers by value (canonical texts of integers), then texts."""
    out = []
    for part in key:
        try:
            out.append((0, int(part), ""))
        except (TypeError, ValueError):
            out.append((1, 0, "" if part is None else part))
    return tuple(out)


def _by_key(rows: list[LeafRow]) -> tuple[dict[tuple[str, ...], tuple[Any, Any]], dict[tuple[str, ...], int]]:
    """``({key: (values, row hash) of its first row}, {key: rows} for keys held by more than one row)``."""
    first: dict[tuple[str, ...], tuple[Any, Any]] = {}
    repeated: dict[tuple[str, ...], int] = {}
    for key, values, row_hash in rows:
        if key in first:
            repeated[key] = repeated.get(key, 1) + 1
        else:
            first[key] = (values, row_hash)
    return first, repeated
