"""One side of a comparison: its sandbox, table and filter, and the statements bisection asks of it.

Every statement goes through the side's read-only sandbox (its policy, limits and deadline). A side never
returns table rows to count them: it returns per-segment counts and checksums, and only for the small
segments that differ the keys and row hashes of their rows.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import Any, TypeVar

from watchdog.errors import QueryError, QueryRefused, QueryTimeout
from watchdog.reconcile import canonical as c
from watchdog.reconcile import native
from watchdog.reconcile.canonical import ColumnForm
from watchdog.reconcile.errors import ReconcileError, ReconcileTimeout
from watchdog.sandbox import Sandbox
from watchdog.sandbox.fetching import row_size
from watchdog.scan import sqlbuild

T = TypeVar("T")
#: a segment's figures: rows, and the sum of its 60-bit row hashes (exact)
Sums = tuple[int, int]
#: inclusive ranges of the partition value
Ranges = list[tuple[int, int]]
#: a row of a small segment: (canonical key, key values, row hash)
LeafRow = tuple[tuple[str, ...], Any, int]
#: ranges per statement, so no statement grows without bound: each row a statement reads is checked against
#: its ranges one by one (1,000 ranges cost PostgreSQL three times what five statements of 200 do), and
#: SQLite caps the depth of ``a OR b OR ...`` at 1,000
RANGES_PER_STATEMENT = 200
#: a run of small segments one range scan reads: (first value, last value, the run's segments of ``width`` when
#: it has gaps, None when it is whole); see :func:`windows`
Window = tuple[int, int, tuple[int, ...] | None]
#: empty segments a window may pass over: a range scan reading them and dropping their rows by a segment list
#: costs less than another range (PostgreSQL, 200 segments of 16 rows a sixth of the rows apart: 7-10 ms as 200
#: ranges, 4 ms as one range and a list)
WINDOW_GAP = 15
#: rows a window may pass over between two of its segments (a segment that agrees may still be large)
WINDOW_GAP_ROWS = 256
#: segments one leaf statement lists at most (an ``IN`` list: PostgreSQL hashes it, MySQL binary-searches it)
WINDOW_SEGMENTS_PER_STATEMENT = 4096
#: segments one checksum statement returns at most: its grouping stays in PostgreSQL's default work_mem
#: (a larger one spills to disk) and its answer well within the byte limit
SEGMENTS_PER_STATEMENT = 32768


@dataclass
class Partition:
    """How rows are placed on the number line bisection cuts: the integer key itself, or a 32-bit hash of the
    canonical key (text and compound keys: collations and binary order then never matter)."""

    by_hash: bool
    lo: int = 0
    hi: int = 2**32 - 1


@dataclass
class Side:
    sandbox: Sandbox
    table: str
    where: str | None
    key: list[ColumnForm]
    columns: list[ColumnForm]
    deadline: float = float("inf")
    statements: int = 0
    bytes_fetched: int = 0
    rows_fetched: int = 0
    #: rows of a hash-partitioned side, summed from the first level's segments
    counted: int = 0
    null_keys: int = 0
    log: list[str] = field(default_factory=list)
    #: the first statement also reads :mod:`native`'s probe (both sides are PostgreSQL); what it read
    probe: bool = False
    probed: tuple[Any, ...] | None = None
    #: rows hashed with the server's own hash (:mod:`native`) rather than the MD5 of their canonical text
    native: bool = False

    @property
    def dialect(self) -> str:
        return c.engine(self.sandbox.dialect)

    # ---- SQL pieces
    def _from(self) -> str:
        return c.ident(self.table, self.dialect)

    def _filter(self) -> str | None:
        if not self.where:
            return None
        return sqlbuild.condition(self.where, self.dialect).sql(dialect=self.dialect)

    def partition_value(self, partition: Partition) -> str:
        if partition.by_hash and self.native:
            return native.partition_hash(self.key, self.dialect)
        if partition.by_hash:
            return c.partition_hash(c.row_text(self.key, self.dialect), self.dialect)
        return c.ident(self.key[0].name, self.dialect)

    def _ranges_sql(self, value: str, ranges: Ranges) -> str:
        return "(" + " OR ".join(f"{value} BETWEEN {lo} AND {hi}" for lo, hi in ranges) + ")"

    def _hashed(self, partition: Partition, ranges: Ranges | None, extra: tuple[str, ...] = (),
                where: str | None = None) -> str:
        """``SELECT wd_p, wd_m[, extra] FROM table WHERE filter AND ranges [AND where]``: partition value and row
        hash."""
        d = self.dialect
        p = self.partition_value(partition)
        conditions = [x for x in (self._filter(), where) if x]
        if ranges is not None and not partition.by_hash:
            conditions.append(self._ranges_sql(p, ranges))
        if self.native:
            row = native.row_hash(self.key + self.columns, d)
        else:
            row = c.row_hash(c.row_text(self.key + self.columns, d), d)
        sql = f"SELECT {p} AS wd_p, {row} AS wd_m{''.join(', ' + e for e in extra)} FROM {self._from()}"
        if conditions:
            sql += " WHERE " + " AND ".join(f"({x})" for x in conditions)
        if ranges is not None and partition.by_hash:
            sql = f"SELECT * FROM ({sql}) AS wd_r WHERE {self._ranges_sql('wd_p', ranges)}"
        return sql

    def _once(self, hashed: str) -> str:
        """The subquery of row hashes, kept apart so PostgreSQL computes each row's hash once: merged into the
        outer query, it would compute it again for each of the checksum's two sums."""
        return f"{hashed} OFFSET 0" if self.dialect == "postgres" else hashed

    # ---- statements
    def run(self, sql: str, *, max_rows: int, parallel: bool = True) -> list[tuple[Any, ...]]:
        """Run one statement within the deadline (``parallel``: PostgreSQL may plan it with parallel workers)."""
        remaining = self.deadline - time.monotonic()
        if remaining <= 0:
            raise ReconcileTimeout(f"the comparison passed its deadline after {self.statements} statements on "
                                   f"{self.sandbox.display_url}")
        self.statements += 1
        try:
            result = self.sandbox.query(sql, max_rows=max_rows, timeout_s=min(self.sandbox.timeout_s, remaining),
                                        parallel=parallel)
        except QueryTimeout as exc:
            raise ReconcileTimeout(f"a statement on {self.sandbox.display_url} passed the deadline and was "
                                   f"cancelled: {exc}") from None
        if result.truncated:
            raise ReconcileError(f"a segment of {self.table} returned more than {max_rows} rows or "
                                 "the byte limit; give a larger max_rows to the database or a smaller --leaf-rows")
        self.rows_fetched += len(result.rows)
        self.bytes_fetched += sum(map(row_size, result.rows))
        return result.rows

    def bounds(self) -> tuple[int, int | None, int | None]:
        """(rows, smallest key, largest key) of an integer-keyed side."""
        k = c.ident(self.key[0].name, self.dialect)
        n, lo, hi, nulls = self._first(f"COUNT(*), MIN({k}), MAX({k}), SUM(CASE WHEN {k} IS NULL THEN 1 ELSE 0 END)")
        self.null_keys = int(nulls or 0)
        return int(n or 0), (None if lo is None else int(lo)), (None if hi is None else int(hi))

    def count(self) -> int:
        return int(self._first("COUNT(*)")[0] or 0)

    def _first(self, select: str) -> tuple[Any, ...]:
        """The first statement, ``SELECT select FROM table WHERE filter``, with the native-hash probe when asked
        (a server without the probe's function answers again without it, and keeps MD5)."""
        where = self._filter()
        tail = f" FROM {self._from()}" + (f" WHERE {where}" if where else "")
        extra = native.probe_columns(self.dialect) if self.probe else []
        if extra:
            try:
                row = self.run(f"SELECT {select}, {', '.join(extra)}{tail}", max_rows=2)[0]
            except (QueryError, QueryRefused):  # no hash_record_extended (before 14): the canonical MD5 then
                self.probed = None
            else:
                self.probed = tuple(row[-len(extra):])
                return tuple(row[:-len(extra)])
        return tuple(self.run(f"SELECT {select}{tail}", max_rows=2)[0])

    def whole(self) -> Sums:
        """Rows and checksum of the whole (filtered) table."""
        sums = ", ".join(c.checksum_sums("wd_m", self.dialect))
        sql = f"SELECT COUNT(*), {sums} FROM ({self._once(self._hashed(Partition(by_hash=True), None))}) AS wd_s"
        n, *parts = self.run(sql, max_rows=2)[0]
        return int(n or 0), c.checksum_value(parts)

    def checksums(self, partition: Partition, ranges: Ranges, width: int) -> dict[int, Sums]:
        """``{segment: (rows, sum1, sum2)}`` for the segments of ``width`` inside ``ranges``."""
        d = self.dialect
        out: dict[int, Sums] = {}
        for chunk in _segment_chunks(ranges, partition, width):
            bucket = c.int_div(f"wd_p - {partition.lo}", width, d)
            sums = ", ".join(c.checksum_sums("wd_m", d))
            sql = (f"SELECT {bucket} AS wd_b, COUNT(*), {sums} FROM ({self._once(self._hashed(partition, chunk))}) "
                   f"AS wd_s GROUP BY {bucket}")
            segments = sum((hi - partition.lo) // width - (lo - partition.lo) // width + 1 for lo, hi in chunk)
            for b, n, *parts in self.run(sql, max_rows=segments + 1):
                out[int(b)] = (int(n), c.checksum_value(parts))
        return out

    def leaf_rows(self, partition: Partition, runs: list[Window], width: int, max_rows: int) -> list[LeafRow]:
        """``(canonical key, key values, row hash)`` of every row of the segments of ``width`` in ``runs``."""
        d = self.dialect
        keys = [f"{c.value_text(k, d)} AS wd_k{i}" for i, k in enumerate(self.key)]
        raw = [f"{c.ident(k.name, d)} AS wd_v{i}" for i, k in enumerate(self.key)]
        names = ", ".join([f"wd_k{i}" for i in range(len(self.key))] + [f"wd_v{i}" for i in range(len(self.key))])
        n = len(self.key)
        out = []
        for chunk in _window_chunks(runs, partition.lo, width):
            if partition.by_hash:  # the hash is known only once computed: the runs are read from the subquery
                where = self._windows_sql("wd_p", chunk, partition.lo, width)
                sql = f"SELECT wd_m, {names} FROM ({self._hashed(partition, None, tuple(keys + raw))}) AS wd_s " \
                      f"WHERE {where}"
            else:
                where = self._windows_sql(self.partition_value(partition), chunk, partition.lo, width)
                sql = f"SELECT wd_m, {names} FROM ({self._hashed(partition, None, tuple(keys + raw), where)}) AS wd_s"
            for row in self.run(sql, max_rows=max_rows):
                out.append((tuple(row[1:1 + n]), row[1 + n:1 + 2 * n], int(row[0])))
        return out

    def _windows_sql(self, value: str, runs: list[Window], lo: int, width: int) -> str:
        """Rows of ``runs``: each a range, and when it has gaps, its segments' list as well."""
        parts = []
        for start, end, segments in runs:
            cond = f"{value} BETWEEN {start} AND {end}"
            if segments is not None:
                listed = ", ".join(map(str, segments))
                cond = f"({cond} AND {c.int_div(f'{value} - {lo}', width, self.dialect)} IN ({listed}))"
            parts.append(cond)
        return "(" + " OR ".join(parts) + ")"

    def values(self, keys: list[tuple[str, ...]]) -> dict[tuple[str, ...], tuple[list[str | None], list[Any]]]:
        """``{canonical key: (canonical texts, raw values)}`` of the compared columns, for a few keys."""
        if not keys:
            return {}
        d = self.dialect
        texts = [f"{c.value_text(col, d)} AS wd_t{i}" for i, col in enumerate(self.columns)]
        raws = [f"{c.ident(col.name, d)} AS wd_r{i}" for i, col in enumerate(self.columns)]
        ktexts = [f"{c.value_text(k, d)} AS wd_k{i}" for i, k in enumerate(self.key)]
        match = " OR ".join(
            "(" + " AND ".join(f"{c.value_text(k, d)} = {c.literal(v, d)}" for k, v in zip(self.key, key, strict=True))
            + ")" for key in keys)
        conditions = [x for x in (self._filter(), match) if x]
        sql = (f"SELECT {', '.join(ktexts + texts + raws)} FROM {self._from()} WHERE "
               + " AND ".join(f"({x})" for x in conditions))
        n, m = len(self.key), len(self.columns)
        out = {}
        for row in self.run(sql, max_rows=4 * len(keys) + 2):
            out[tuple(row[:n])] = (list(row[n:n + m]), list(row[n + m:n + 2 * m]))
        return out


def both(source: Callable[..., T], target: Callable[..., T], *args: Any) -> tuple[T, T]:
    """``source(*args), target(*args)`` at once (each side is its own database session): the source's in a
    thread."""
    with ThreadPoolExecutor(max_workers=1, thread_name_prefix="wd-reconcile") as pool:
        pending = pool.submit(source, *args)
        try:
            theirs = target(*args)
        finally:
            ours = pending.result()
    return ours, theirs


def _segment_chunks(ranges: Ranges, partition: Partition, width: int,
                    per_statement: int = RANGES_PER_STATEMENT) -> list[Ranges]:
    """``ranges`` grouped into statements of at most ``per_statement`` ranges and, on a key's own
    values (each statement an index range scan), :data:`SEGMENTS_PER_STATEMENT` segments of ``width`` (ranges
    start and end on segment bounds). A hashed key's ranges stay whole: each statement reads the whole table."""
    if partition.by_hash:
        return _chunks(ranges, per_statement)
    step = SEGMENTS_PER_STATEMENT * width
    chunks: list[Ranges] = [[]]
    room = SEGMENTS_PER_STATEMENT
    for start, end in ranges:
        while start <= end:
            if len(chunks[-1]) >= per_statement or room <= 0:
                chunks.append([])
                room = SEGMENTS_PER_STATEMENT
            stop = min(end, start + min(room, SEGMENTS_PER_STATEMENT) * width - 1, start + step - 1)
            chunks[-1].append((start, stop))
            room -= (stop - start + 1 + width - 1) // width
            start = stop + 1
    return chunks


def windows(segments: list[int], lo: int, width: int, rows: Callable[[int], int] = lambda b: 0,
            gap: int = WINDOW_GAP) -> list[Window]:
    """Segments (of ``width`` from ``lo``) gathered into runs that skip at most ``gap`` segments at a time,
    holding at most :data:`WINDOW_GAP_ROWS` rows in all (``rows(segment)``: its rows on the larger side)."""
    runs: list[list[int]] = []
    for b in sorted(segments):
        if runs and b - runs[-1][-1] <= gap + 1 and sum(map(rows, range(runs[-1][-1] + 1, b))) <= WINDOW_GAP_ROWS:
            runs[-1].append(b)
        else:
            runs.append([b])
    return [(lo + run[0] * width, lo + (run[-1] + 1) * width - 1,
             None if run[-1] - run[0] + 1 == len(run) else tuple(run)) for run in runs]


def _window_chunks(runs: list[Window], lo: int, width: int) -> list[list[Window]]:
    """Runs grouped into statements of at most :data:`RANGES_PER_STATEMENT` runs and
    :data:`WINDOW_SEGMENTS_PER_STATEMENT` listed segments (a longer run is cut)."""
    chunks: list[list[Window]] = [[]]
    listed = 0
    for start, end, segments in runs:
        pieces: list[Window] = [(start, end, None)]
        if segments is not None:
            step = WINDOW_SEGMENTS_PER_STATEMENT
            pieces = [(lo + part[0] * width, lo + (part[-1] + 1) * width - 1, part)
                      for part in (segments[i:i + step] for i in range(0, len(segments), step))]
        for piece in pieces:
            size = len(piece[2] or ())
            full = len(chunks[-1]) >= RANGES_PER_STATEMENT or listed + size > WINDOW_SEGMENTS_PER_STATEMENT
            if chunks[-1] and full:
                chunks.append([])
                listed = 0
            chunks[-1].append(piece)
            listed += size
    return chunks


def _chunks(ranges: Ranges, size: int) -> list[Ranges]:
    return [ranges[i:i + size] for i in range(0, len(ranges), size)] or [[]]
