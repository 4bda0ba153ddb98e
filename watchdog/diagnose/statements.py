"""The diagnosis's statements for one table, built with sqlglot; at most three, however many checks fail.

* the **probe** (only when the suite declares no ``segments:``): distinct values of the candidate columns
  over the first :data:`PROBE_ROWS` rows, to keep the low-cardinality ones;
* the **segments** statement: one pass over the table grouped by every segment column at once (a CTE),
  then one ``GROUP BY`` per column over those groups (``UNION ALL``), with every diagnosed check's failing
  rows as ``SUM(CASE …)`` columns, and the table's row count and timestamp range;
* the **failing-rows** statement: the rows failing any of the checks (a CTE of their flags, offending
  values and timestamps), then per check its most common offending values (with how many distinct ones
  there are), the first and last timestamp of its failing rows, and the rows it shares with each other check.

Every check's failing rows are its own :class:`~watchdog.scan.check_types.base.RowFlag` (the check type says
which rows fail; nothing is re-derived here). Counting happens in the database; only groups come back.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from sqlglot import exp

from watchdog.scan import sqlbuild
from watchdog.scan.check_types.base import ROW_ALIAS, RowFlag

#: rows the probe reads to tell low-cardinality columns
PROBE_ROWS = 10_000
#: a column with more distinct values than this is not a segment column
MAX_SEGMENT_VALUES = 50
#: offending values listed per check
TOP_VALUES = 5
#: checks of one table whose shared rows are counted pairwise
MAX_OVERLAP_CHECKS = 20


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


@dataclass
class SegmentsLayout:
    """How to read the segments statement's rows: ``wd_which`` is -1 for the totals row, else the column's index."""

    sql: str
    segments: list[Column]
    checks: int
    scoped: list[bool]
    timestamp: bool
    max_rows: int

    def value_at(self, j: int) -> int:
        return 1 + j

    def rows_at(self) -> int:
        return 1 + len(self.segments)

    def failing_at(self, i: int) -> int:
        return 2 + len(self.segments) + i

    def scope_at(self, i: int) -> int:
        return 2 + len(self.segments) + self.checks + i

    def time_at(self) -> int:
        return 2 + len(self.segments) + 2 * self.checks


def segments(table: str, flags: list[RowFlag], columns: list[Column], timestamp: str | None,
             dialect: str) -> SegmentsLayout:
    checks = len(flags)
    scoped = [f.scope is not None for f in flags]
    inner: list[exp.Expr] = []
    group: list[exp.Expr] = []
    for j, col in enumerate(columns):
        exact = col.exact(dialect)
        if exact is not None:
            inner.append(exp.alias_(exact.copy(), f"wd_e{j}", copy=False))
            inner.append(exp.alias_(exp.Min(this=col.raw()), f"wd_s{j}", copy=False))
            group.append(exact)
        else:
            inner.append(exp.alias_(col.raw(), f"wd_s{j}", copy=False))
            group.append(col.raw())
    inner.append(exp.alias_(sqlbuild.count_star(), "wd_n", copy=False))
    for i, flag in enumerate(flags):
        inner.append(exp.alias_(exp.Sum(this=_flag(flag.condition.copy())), f"wd_f{i}", copy=False))
    for i, flag in enumerate(flags):
        scope = flag.scope.copy() if flag.scope is not None else None
        inner.append(exp.alias_(exp.Sum(this=_flag(scope)) if scope is not None else _n(0), f"wd_in{i}", copy=False))
    if timestamp:
        ts = sqlbuild.column(timestamp, ROW_ALIAS)
        inner += [exp.alias_(exp.Min(this=ts.copy()), "wd_t0", copy=False),
                  exp.alias_(exp.Max(this=ts), "wd_t1", copy=False)]
    grouped = _from(table, flags).select(*inner, copy=False)
    if group:
        grouped = grouped.group_by(*group, copy=False)

    def sums() -> list[exp.Expr]:
        out: list[exp.Expr] = [exp.Sum(this=exp.column("wd_n"))]
        out += [exp.Sum(this=exp.column(f"wd_f{i}")) for i in range(checks)]
        out += [exp.Sum(this=exp.column(f"wd_in{i}")) for i in range(checks)]
        return out

    times = [exp.Min(this=exp.column("wd_t0")), exp.Max(this=exp.column("wd_t1"))] if timestamp else []
    totals = exp.select(*_named(_n(-1), *[_typed_null(f"wd_s{j}", "wd_g", dialect) for j in range(len(columns))],
                               *sums(), *times), copy=False).from_("wd_g", copy=False)
    branches: list[exp.Expr] = [totals]
    for j, col in enumerate(columns):
        shown: exp.Expr = exp.column(f"wd_s{j}")
        key: exp.Expr = exp.column(f"wd_s{j}")
        if col.exact(dialect) is not None:
            shown, key = exp.Min(this=shown), exp.column(f"wd_e{j}")
        values = [shown if k == j else _null() for k in range(len(columns))]
        branch = (exp.select(*_named(_n(j), *values, *sums(), *[_null() for _ in times]), copy=False)
                  .from_("wd_g", copy=False).group_by(key, copy=False).limit(MAX_SEGMENT_VALUES + 1, copy=False))
        branches.append(_wrap(branch, f"wd_b{j}", dialect))
    query = _union(branches)
    assert isinstance(query, (exp.Select, exp.Union))
    query = query.with_("wd_g", as_=grouped, copy=False)
    return SegmentsLayout(query.sql(dialect=dialect, copy=False), columns, checks, scoped, bool(timestamp),
                          1 + len(columns) * (MAX_SEGMENT_VALUES + 1))


@dataclass
class FailingLayout:
    """How to read the failing-rows statement: the totals row (``wd_which`` -1) holds every check's first/last
    timestamp and the shared rows of each pair; check ``i``'s value rows (``wd_which`` i) its values."""

    sql: str
    checks: int
    values: list[list[Column]]
    timestamp: bool
    pairs: list[tuple[int, int]] = field(default_factory=list)
    max_rows: int = 0

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


def _sort_key(expr: exp.Expr, col: Column, dialect: str) -> list[exp.Ordered]:
    """NULLs first, then the value compared by code point on every database."""
    nulls = exp.Ordered(this=_flag(exp.Not(this=exp.Is(this=expr.copy(), expression=exp.Null()))))
    if dialect == "postgres" and col.kind == "text":
        expr = exp.Collate(this=expr, expression=exp.Identifier(this="C", quoted=True))
    return [nulls, exp.Ordered(this=expr)]


def failing(table: str, flags: list[RowFlag], values: list[list[Column]], timestamp: str | None,
            dialect: str) -> FailingLayout:
    checks = len(flags)
    pairs = [(a, b) for a in range(min(checks, MAX_OVERLAP_CHECKS)) for b in range(a + 1, min(checks,
                                                                                            MAX_OVERLAP_CHECKS))]
    inner: list[exp.Expr] = [exp.alias_(_flag(f.condition.copy()), f"wd_f{i}", copy=False) for i, f in enumerate(flags)]
    for i, cols in enumerate(values):
        for p, col in enumerate(cols):
            inner.append(exp.alias_(col.raw(), f"wd_v{i}_{p}", copy=False))
            exact = col.exact(dialect)
            if exact is not None:
                inner.append(exp.alias_(exact, f"wd_x{i}_{p}", copy=False))
    if timestamp:
        inner.append(exp.alias_(sqlbuild.column(timestamp, ROW_ALIAS), "wd_ts", copy=False))
    any_fails = exp.or_(*[exp.Paren(this=f.condition.copy()) for f in flags], copy=False)
    rows = _from(table, flags).select(*inner, copy=False).where(any_fails, copy=False)
    width = sum(len(v) for v in values)

    def on(i: int) -> exp.Expr:
        return exp.EQ(this=exp.column(f"wd_f{i}"), expression=_n(1))

    times: list[exp.Expr] = []
    if timestamp:
        for i in range(checks):
            when = exp.Case(ifs=[exp.If(this=on(i), true=exp.column("wd_ts"))])
            times += [exp.Min(this=when), exp.Max(this=when.copy())]
    shared = [exp.Sum(this=_flag(exp.and_(on(a), on(b), copy=False))) for a, b in pairs]
    # COUNT(*) (rows failing any check) makes the totals one row, whatever else it holds
    slots = [_typed_null(f"wd_v{i}_{p}", "wd_rows", dialect) for i, cols in enumerate(values) for p in range(len(cols))]
    totals = exp.select(*_named(_n(-1), *slots, sqlbuild.count_star(), _null(), *times, *shared), copy=False
                        ).from_("wd_rows", copy=False)
    branches: list[exp.Expr] = [totals]
    at = 0
    for i, cols in enumerate(values):
        if not cols:
            continue
        shown: list[exp.Expr] = []
        keys: list[exp.Expr] = []
        order: list[exp.Ordered] = [exp.Ordered(this=sqlbuild.count_star(), desc=True)]
        for p, col in enumerate(cols):
            raw = exp.column(f"wd_v{i}_{p}")
            if col.exact(dialect) is not None:
                key = exp.column(f"wd_x{i}_{p}")
                shown.append(exp.Min(this=raw))
                keys.append(key)
                order += _sort_key(key.copy(), col, dialect)
            else:
                shown.append(raw)
                keys.append(raw.copy())
                order += _sort_key(raw.copy(), col, dialect)
        cells = [_null() for _ in range(at)] + shown + [_null() for _ in range(width - at - len(cols))]
        branch = (exp.select(*_named(_n(i), *cells, sqlbuild.count_star(), exp.Window(this=sqlbuild.count_star()),
                                    *[_null() for _ in times], *[_null() for _ in shared]), copy=False)
                  .from_("wd_rows", copy=False).where(on(i), copy=False).group_by(*keys, copy=False)
                  .order_by(*order, copy=False).limit(TOP_VALUES, copy=False))
        branches.append(_wrap(branch, f"wd_b{i}", dialect))
        at += len(cols)
    query = _union(branches)
    assert isinstance(query, (exp.Select, exp.Union))
    query = query.with_("wd_rows", as_=rows, copy=False)
    return FailingLayout(query.sql(dialect=dialect, copy=False), checks, values, bool(timestamp), pairs,
                         1 + TOP_VALUES * len(values))
