"""The diagnosis's statements for one table, built with sqlglot; at most three, however many checks fail.

* the **probe**: distinct values of the segment columns (declared, or candidates from the catalogue) over
  the first :data:`PROBE_ROWS` rows, to keep the low-cardinality ones and know how many segments are tried;
* the **failing-rows** statement: the rows failing any of the checks (a CTE of their flags, offending
  values, segment columns and timestamps), then per check its most common offending values (with how many
  distinct ones there are), the first and last timestamp of its failing rows, the combinations of checks
  the rows fail together (the overlap), and one ``GROUP BY`` per segment column giving every check's
  failing rows per value as ``SUM`` columns (all over the failing rows only);
* the **rows** statement: one pass over the table without GROUP BY, counting the rows of just the segments
  that could be reported (``SUM(CASE …)``; none is needed for a segment without enough failing rows), the
  rows each check's ``where`` keeps, and the table's timestamp range (two index lookups where an index leads
  with the timestamp column).

Every check's failing rows are its own :class:`~watchdog.scan.check_types.base.RowFlag` (the check type says
which rows fail; nothing is re-derived here). Counting happens in the database; only groups come back.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import date, datetime
from decimal import Decimal
from typing import Any

from sqlglot import exp

from watchdog.scan import sqlbuild
from watchdog.scan.check_types.base import ROW_ALIAS, RowFlag

#: rows the probe reads to tell low-cardinality columns
PROBE_ROWS = 10_000
#: a column with more distinct values than this is not a segment column
MAX_SEGMENT_VALUES = 50
#: offending values listed per check
TOP_VALUES = 5
#: ``wd_which`` of the rows giving each combination of failing checks and its rows (for the overlap)
PATTERNS = -1000
#: combinations of failing checks read, at most (beyond: no overlap is said)
MAX_PATTERNS = 2000


def _n(value: int) -> exp.Expr:
    return exp.Literal.number(value)


def _flag(cond: exp.Expr) -> exp.Expr:
    return exp.Case(ifs=[exp.If(this=cond, true=_n(1))], default=_n(0))


def _null() -> exp.Expr:
    return exp.Null()


def _named(*items: exp.Expr) -> list[exp.Expr]:
    """Union members' columns named wd_c0, wd_c1, ... (a derived table's columns need distinct names on MySQL)."""
    return [exp.alias_(item, f"wd_c{k}", copy=False) for k, item in enumerate(items)]


def _typed_null(name: str, cte: str, dialect: str) -> exp.Expr:
    """NULL of the type of ``cte``'s column ``name`` in the first union member: PostgreSQL types a union's
    columns member by member, so a column NULL in the first two members would be text for the third."""
    if dialect != "postgres":
        return _null()
    return exp.select(exp.column(name), copy=False).from_(cte, copy=False).limit(0, copy=False).subquery(copy=False)


def _wrap(select: exp.Select, name: str, dialect: str) -> exp.Expr:
    """A union member with its own ORDER BY/LIMIT. PostgreSQL: in parentheses, so that its NULL columns take
    their type from the other members (in a derived table they would become text); SQLite has no
    parenthesized members, hence a derived table elsewhere (where NULL takes any type)."""
    if dialect == "postgres":
        return select.subquery(copy=False)
    return exp.select("*", copy=False).from_(select.subquery(name, copy=False), copy=False)


def _union(branches: list[exp.Expr]) -> exp.Expr:
    query: exp.Expr = branches[0]
    for more in branches[1:]:
        query = exp.union(query, more, distinct=False, copy=False)
    return query


@dataclass
class Column:
    """A column of the table the statements group by: its name and whether it is compared as bytes."""

    name: str
    kind: str = "unknown"

    def raw(self) -> exp.Expr:
        return sqlbuild.column(self.name, ROW_ALIAS)

    def exact(self, dialect: str) -> exp.Expr | None:
        """The column compared exactly, when that differs from the column itself (MySQL/MariaDB text)."""
        if dialect == "mysql" and self.kind in ("text", "unknown", "other"):
            return sqlbuild.exact(self.raw(), dialect, self.kind)
        return None


def _from(table: str, flags: list[RowFlag]) -> exp.Select:
    query = exp.select(copy=False).from_(sqlbuild.table(table, alias=ROW_ALIAS), copy=False)
    for flag in flags:
        for joined, on in flag.joins:
            query = query.join(joined.copy(), on=on.copy(), join_type="left", copy=False)
    return query


def probe(table: str, columns: list[str], dialect: str) -> str:
    """Distinct non-NULL values of each column among the first :data:`PROBE_ROWS` rows, and those rows' number."""
    first = (exp.select(*[sqlbuild.column(c) for c in columns], copy=False)
             .from_(sqlbuild.table(table), copy=False).limit(PROBE_ROWS, copy=False))
    query = exp.select(*[exp.alias_(exp.Count(this=exp.Distinct(expressions=[sqlbuild.column(c)])), f"wd_d{i}",
                                    copy=False) for i, c in enumerate(columns)],
                       exp.alias_(sqlbuild.count_star(), "wd_rows", copy=False), copy=False
                       ).from_(first.subquery("wd_probe", copy=False), copy=False)
    return query.sql(dialect=dialect, copy=False)


def _equals(col: Column, value: Any, dialect: str) -> exp.Expr:
    """The column holds ``value`` (a value the database returned), compared as the grouping compared it."""
    if value is None:
        return exp.Is(this=col.raw(), expression=exp.Null())
    if isinstance(value, (datetime, date)):
        literal: exp.Expr = exp.Literal.string(value.isoformat(sep=" ") if isinstance(value, datetime)
                                               else value.isoformat())
    elif isinstance(value, Decimal):
        literal = exp.Literal.number(str(value))
    else:
        literal = sqlbuild.literal(value)
    exact = col.exact(dialect)
    if exact is not None:
        return exp.EQ(this=exact, expression=sqlbuild.exact(literal, dialect, col.kind))
    return exp.EQ(this=col.raw(), expression=literal)


#: the dialects that count the rows where a condition holds as ``COUNT(*) FILTER (WHERE c)``
FILTERING = frozenset({"sqlite", "strictsqlite", "postgres", "duckdb"})


def _count_if(cond: exp.Expr, dialect: str) -> exp.Expr:
    """The rows where ``cond`` holds: ``COUNT(*) FILTER (WHERE cond)`` where the engine has it (about twice as fast
    as the ``SUM(CASE …)`` used elsewhere on SQLite; 0 rather than NULL over no rows, read as 0 either way)."""
    if dialect in FILTERING:
        return exp.Filter(this=sqlbuild.count_star(), expression=exp.Where(this=cond))
    return exp.Sum(this=_flag(cond))


@dataclass
class RowsLayout:
    """The denominators statement: its one row holds, in order, the table's rows, each scoped check's rows, each
    segment's rows, each (scoped check, segment)'s rows, then the first and last timestamp."""

    sql: str
    scoped: list[int]
    segments: list[tuple[int, Any]]

    def scope_at(self, i: int) -> int:
        return 1 + self.scoped.index(i)

    def segment_at(self, k: int, i: int | None = None) -> int:
        base = 1 + len(self.scoped) + len(self.segments)
        if i is None or i not in self.scoped:
            return 1 + len(self.scoped) + k
        return base + self.scoped.index(i) * len(self.segments) + k

    def time_at(self) -> int:
        return 1 + len(self.scoped) + len(self.segments) * (1 + len(self.scoped))


#: the dialects whose planner reads ``SELECT MIN(c) FROM t`` (and MAX) from an index leading with ``c``
RANGE_BY_INDEX = frozenset({"sqlite", "strictsqlite", "postgres", "mysql"})


def _time_range(table: str, timestamp: str, indexed: bool) -> list[exp.Expr]:
    """The table's first and last timestamp: aggregates of the pass, or, where an index leads with the column, two
    subqueries each its own index lookup (reading every row's timestamp is most of the pass's time otherwise)."""
    if not indexed:
        ts = sqlbuild.column(timestamp, ROW_ALIAS)
        return [exp.Min(this=ts.copy()), exp.Max(this=ts)]
    return [exp.select(agg(this=sqlbuild.column(timestamp)), copy=False)
            .from_(sqlbuild.table(table), copy=False).subquery(copy=False) for agg in (exp.Min, exp.Max)]


def rows(table: str, flags: list[RowFlag], columns: list[Column], segments: list[tuple[int, Any]],
         timestamp: str | None, dialect: str, indexed: bool = False) -> RowsLayout:
    """One pass over the table, no GROUP BY (conditional counts only): its rows, the rows each scoped check
    looks at, the rows of each segment (``(column index, value)``), alone and within each scope, its time range
    (``indexed``: the timestamp column leads an index and the dialect is one of :data:`RANGE_BY_INDEX`)."""
    scoped = [i for i, f in enumerate(flags) if f.scope is not None]
    items: list[exp.Expr] = [sqlbuild.count_star()]
    items += [_count_if(flags[i].scope.copy(), dialect) for i in scoped]  # type: ignore[union-attr]
    items += [_count_if(_equals(columns[j], v, dialect), dialect) for j, v in segments]
    for i in scoped:
        items += [_count_if(exp.and_(exp.Paren(this=flags[i].scope.copy()),  # type: ignore[union-attr]
                                     _equals(columns[j], v, dialect), copy=False), dialect) for j, v in segments]
    if timestamp:
        items += _time_range(table, timestamp, indexed)
    query = (exp.select(*_named(*items), copy=False)
             .from_(sqlbuild.table(table, alias=ROW_ALIAS), copy=False))
    return RowsLayout(query.sql(dialect=dialect, copy=False), scoped, segments)


@dataclass
class FailingLayout:
    """How to read the failing-rows statement: the totals row (``wd_which`` -1) holds every check's first/last
    timestamp and each check's failing rows; check ``i``'s value rows (``wd_which`` i) its values; segment
    column ``j``'s rows (``wd_which`` -2 - j) each check's failing rows per value of the column; the pattern
    rows (``wd_which`` :data:`PATTERNS`) each combination of failing checks (0/1 in the failing slots) and
    its rows."""

    sql: str
    checks: int
    values: list[list[Column]]
    timestamp: bool
    pairs: list[tuple[int, int]] = field(default_factory=list)
    max_rows: int = 0
    segments: list[Column] = field(default_factory=list)

    def value_slots(self) -> list[list[int]]:
        slots, at = [], 1
        for cols in self.values:
            slots.append(list(range(at, at + len(cols))))
            at += len(cols)
        return slots

    @property
    def width_values(self) -> int:
        return sum(len(v) for v in self.values)

    def count_at(self) -> int:
        return 1 + self.width_values

    def time_at(self, i: int) -> int:
        return 3 + self.width_values + 2 * i

    def pair_at(self, p: int) -> int:
        return 3 + self.width_values + (2 * self.checks if self.timestamp else 0) + p

    def segment_value_at(self, j: int) -> int:
        return 3 + self.width_values + (2 * self.checks if self.timestamp else 0) + len(self.pairs) + j

    def segment_failing_at(self, i: int) -> int:
        """Check ``i``'s failing rows: in the totals row all of them, in a segment row those of the segment."""
        return self.segment_value_at(len(self.segments)) + i


def _sort_key(expr: exp.Expr, col: Column, dialect: str) -> list[exp.Ordered]:
    """NULLs first, then the value compared by code point on every database."""
    nulls = exp.Ordered(this=_flag(exp.Not(this=exp.Is(this=expr.copy(), expression=exp.Null()))))
    if dialect == "postgres" and col.kind == "text":
        expr = exp.Collate(this=expr, expression=exp.Identifier(this="C", quoted=True))
    return [nulls, exp.Ordered(this=expr)]


def _grouped(name: str, exact_name: str, col: Column, dialect: str) -> tuple[exp.Expr, exp.Expr]:
    """(the value shown, the grouping key) of a CTE column: MySQL groups text by its bytes and shows one value."""
    if col.exact(dialect) is not None:
        return exp.Min(this=exp.column(name)), exp.column(exact_name)
    return exp.column(name), exp.column(name)


def _rows_cte(table: str, flags: list[RowFlag], values: list[list[Column]], timestamp: str | None,
              segments: list[Column], dialect: str) -> exp.Select:
    """The rows failing any check: each check's flag, offending values, segment columns and timestamp."""
    inner: list[exp.Expr] = [exp.alias_(_flag(f.condition.copy()), f"wd_f{i}", copy=False) for i, f in enumerate(flags)]
    named = [(f"wd_v{i}_{p}", f"wd_x{i}_{p}", col) for i, cols in enumerate(values) for p, col in enumerate(cols)]
    named += [(f"wd_s{j}", f"wd_e{j}", col) for j, col in enumerate(segments)]
    for name, exact_name, col in named:
        inner.append(exp.alias_(col.raw(), name, copy=False))
        exact = col.exact(dialect)
        if exact is not None:
            inner.append(exp.alias_(exact, exact_name, copy=False))
    if timestamp:
        inner.append(exp.alias_(sqlbuild.column(timestamp, ROW_ALIAS), "wd_ts", copy=False))
    any_fails = exp.or_(*[exp.Paren(this=f.condition.copy()) for f in flags], copy=False)
    return _from(table, flags).select(*inner, copy=False).where(any_fails, copy=False)


def _on(i: int) -> exp.Expr:
    return exp.EQ(this=exp.column(f"wd_f{i}"), expression=_n(1))


def _nulls(n: int) -> list[exp.Expr]:
    return [_null() for _ in range(n)]


def failing(table: str, flags: list[RowFlag], values: list[list[Column]], timestamp: str | None,
            dialect: str, segments: list[Column] | None = None) -> FailingLayout:
    checks = len(flags)
    segments = segments or []
    pairs: list[tuple[int, int]] = []  # shared rows come from the flag patterns (see below)
    width = sum(len(v) for v in values)
    times: list[exp.Expr] = []
    if timestamp:
        for i in range(checks):
            when = exp.Case(ifs=[exp.If(this=_on(i), true=exp.column("wd_ts"))])
            times += [exp.Min(this=when), exp.Max(this=when.copy())]
    shared = [exp.Sum(this=_flag(exp.and_(_on(a), _on(b), copy=False))) for a, b in pairs]

    def fails() -> list[exp.Expr]:
        return [exp.Sum(this=exp.column(f"wd_f{i}")) for i in range(checks)]

    # COUNT(*) (rows failing any check) makes the totals one row, whatever else it holds
    slots = [_typed_null(f"wd_v{i}_{p}", "wd_rows", dialect) for i, cols in enumerate(values) for p in range(len(cols))]
    seg_slots = [_typed_null(f"wd_s{j}", "wd_rows", dialect) for j in range(len(segments))]
    totals = exp.select(*_named(_n(-1), *slots, sqlbuild.count_star(), _null(), *times, *shared, *seg_slots, *fails()),
                        copy=False).from_("wd_rows", copy=False)
    branches: list[exp.Expr] = [totals]
    at = 0
    for i, cols in enumerate(values):
        if not cols:
            continue
        grouped = [_grouped(f"wd_v{i}_{p}", f"wd_x{i}_{p}", col, dialect) for p, col in enumerate(cols)]
        # by the count's output name: Spark refuses COUNT(*) in the ORDER BY of a query with a window
        order: list[exp.Ordered] = [exp.Ordered(this=exp.column(f"wd_c{1 + width}"), desc=True)]
        for (_, key), col in zip(grouped, cols, strict=True):
            order += _sort_key(key.copy(), col, dialect)
        cells = _nulls(at) + [shown for shown, _ in grouped] + _nulls(width - at - len(cols))
        branch = (exp.select(*_named(_n(i), *cells, sqlbuild.count_star(), exp.Window(this=sqlbuild.count_star()),
                                    *_nulls(len(times) + len(shared) + len(segments) + checks)), copy=False)
                  .from_("wd_rows", copy=False).where(_on(i), copy=False)
                  .group_by(*[key for _, key in grouped], copy=False)
                  .order_by(*order, copy=False).limit(TOP_VALUES, copy=False))
        branches.append(_wrap(branch, f"wd_b{i}", dialect))
        at += len(cols)
    for j, col in enumerate(segments):
        shown, key = _grouped(f"wd_s{j}", f"wd_e{j}", col, dialect)
        cells = [shown if k == j else _null() for k in range(len(segments))]
        branch = (exp.select(*_named(_n(-2 - j), *_nulls(width + 2 + len(times) + len(shared)), *cells, *fails()),
                             copy=False)
                  .from_("wd_rows", copy=False).group_by(key, copy=False).limit(MAX_SEGMENT_VALUES + 1, copy=False))
        branches.append(_wrap(branch, f"wd_g{j}", dialect))
    if checks > 1:  # one row per combination of failing checks, with its rows: the overlap of every pair
        flags_now = [exp.column(f"wd_f{i}") for i in range(checks)]
        branch = (exp.select(*_named(_n(PATTERNS), *_nulls(width), sqlbuild.count_star(), _null(),
                                    *_nulls(len(times) + len(shared) + len(segments)), *flags_now), copy=False)
                  .from_("wd_rows", copy=False).group_by(*[f.copy() for f in flags_now], copy=False)
                  .limit(MAX_PATTERNS + 1, copy=False))
        branches.append(_wrap(branch, "wd_p", dialect))
    query = _union(branches)
    assert isinstance(query, (exp.Select, exp.Union))
    rows_cte = _rows_cte(table, flags, values, timestamp, segments, dialect)
    materialized = True if dialect in ("sqlite", "strictsqlite", "postgres") else None  # read by every member
    query = query.with_("wd_rows", as_=rows_cte, materialized=materialized, copy=False)
    return FailingLayout(query.sql(dialect=dialect, copy=False), checks, values, bool(timestamp), pairs,
                         2 + TOP_VALUES * len(values) + (MAX_SEGMENT_VALUES + 1) * len(segments) + MAX_PATTERNS,
                         segments)
