"""The SQL of ``metric``'s aggregates, the same answer on every database (or a refusal).

Numbers are aggregated as doubles (``CAST(value AS DOUBLE)``) everywhere, so MySQL/MariaDB's DECIMAL averages and
PostgreSQL's NUMERIC sums do not round differently from the others. Percentiles (``median``, ``p01`` .. ``p99``) are
interpolated linearly between the two nearest ranks, as ``percentile_cont`` does: over the ``n`` values sorted
ascending, position ``h = (n - 1) * p`` (from 0), value ``x[floor h] + (h - floor h) * (x[ceil h] - x[floor h])``.
PostgreSQL (``percentile_cont``), DuckDB (``quantile_cont``) and Spark (``percentile``, exact) compute it in the
table's aggregate statement; SQLite and MySQL/MariaDB have no such aggregate, so a statement of its own ranks the
values with ``ROW_NUMBER()`` and returns the two values around ``h`` (exact integer ranks), which are interpolated
by the same formula. SQLite has no standard deviation either: there it is computed in two passes within the
statement (the mean from a scalar subquery over the same rows, then the squared deviations).
"""

from __future__ import annotations

from sqlglot import exp

from watchdog.errors import QueryRefused
from watchdog.scan import sqlbuild

#: every ``agg:`` a metric takes (percentiles: ``p01`` .. ``p99``, two digits)
PERCENTILES = tuple(f"p{n:02d}" for n in range(1, 100))
AGGS = ("count", "distinct", "sum", "avg", "min", "max", "stddev", "median", *PERCENTILES, "blank_rate", "null_rate")
#: the aggregates that read the values as numbers
NUMERIC = frozenset({"sum", "avg", "min", "max", "stddev", "median", *PERCENTILES})
#: the aggregates whose figure is a share of the rows
RATES = frozenset({"blank_rate", "null_rate"})
#: databases whose own aggregate interpolates a percentile (in the table's aggregate statement)
IN_BATCH = ("postgres", "duckdb", "spark")
#: databases where a statement of ranks returns the two values around the percentile
BY_RANKS = ("sqlite", "strictsqlite", "mysql")
#: a value of nothing but blanks, or nothing (ASCII space, tab, line feed, vertical tab, form feed, return)
BLANK_OR_EMPTY = r"^\s*$"


def hundredths(agg: str) -> int:
    """The percentile of ``median`` / ``pNN`` in hundredths (50 for the median)."""
    return 50 if agg == "median" else int(agg[1:])


def is_percentile(agg: str) -> bool:
    return agg == "median" or agg in PERCENTILES


def as_double(value: exp.Expr) -> exp.Expr:
    return exp.Cast(this=value, to=exp.DataType.build("double"))


def aggregate(agg: str, value: exp.Expr, dialect: str,
              source: tuple[str, exp.Expr | None] | None = None) -> exp.Expr:
    """The aggregate of ``value`` (a double for the numeric aggregates; NULL where the row does not count) over
    ``source`` (the table and the check's filter: SQLite's standard deviation reads its mean from it)."""
    if agg == "sum":
        return exp.Sum(this=value)
    if agg == "avg":
        return exp.Avg(this=value)
    if agg == "min":
        return exp.Min(this=value)
    if agg == "max":
        return exp.Max(this=value)
    if agg == "stddev":
        if dialect in ("sqlite", "strictsqlite"):
            return _two_pass_stddev(value, source)
        return exp.Anonymous(this="STDDEV_SAMP", expressions=[value])
    if agg == "distinct":
        return exp.Count(this=exp.Distinct(expressions=[value]))
    if is_percentile(agg):
        return _percentile(value, hundredths(agg), dialect)
    raise ValueError(f"no aggregate expression for {agg!r}")


def _two_pass_stddev(value: exp.Expr, source: tuple[str, exp.Expr | None] | None) -> exp.Expr:
    """SQLite has no STDDEV_SAMP: ``SQRT(SUM((v - mean)²) / (COUNT(v) - 1))``, the mean from a scalar subquery over
    the same rows (SQLite runs it once); NULL for fewer than two values (a division by 0 is NULL there)."""
    table, where = source or ("", None)
    if not table:
        raise ValueError("stddev on SQLite needs the table it reads")

    def mean() -> exp.Expr:
        query = (exp.select(exp.Avg(this=value.copy()), copy=False).from_(sqlbuild.table(table), copy=False)
                 .where(where.copy() if where is not None else None, copy=False))
        return exp.Subquery(this=query)

    deviation = exp.Paren(this=exp.Sub(this=value.copy(), expression=mean()))
    squares = exp.Sum(this=exp.Mul(this=deviation, expression=deviation.copy()))
    pairs = exp.Paren(this=exp.Sub(this=exp.Count(this=value.copy()), expression=exp.Literal.number(1)))
    return exp.Sqrt(this=exp.Div(this=squares, expression=pairs))


def _percentile(value: exp.Expr, hundredth: int, dialect: str) -> exp.Expr:
    fraction = exp.Literal.number(f"{hundredth / 100:.2f}")
    if dialect == "postgres":
        return exp.WithinGroup(this=exp.PercentileCont(this=fraction),
                               expression=exp.Order(expressions=[exp.Ordered(this=value)]))
    if dialect == "duckdb":
        return exp.Anonymous(this="QUANTILE_CONT", expressions=[value, fraction])
    if dialect == "spark":  # exact (not percentile_approx), linear between the closest ranks
        return exp.Anonymous(this="PERCENTILE", expressions=[value, fraction])
    raise QueryRefused(refusal(dialect))


def refusal(dialect: str) -> str:
    return (f"percentiles (median, p01..p99) run on SQLite, PostgreSQL, MySQL/MariaDB, DuckDB and Spark, not on "
            f"{dialect}: its percentile is not known to interpolate as they do")


def ranks_query(table: str, where: exp.Expr | None, value: exp.Expr, hundredths_: list[int],
                dialect: str) -> exp.Select:
    """One row: the number of values ``n``, then for each percentile the values at ranks ``floor(h) + 1`` and
    ``ceil(h) + 1`` (1-based; ``h = (n - 1) * p``); NULLs when there is no value.

    ``value`` is NULL where the row does not count. The ranks are computed from integers
    (``FLOOR((n - 1) * NN / 100.0)``): exact on every database, since a quotient that is not whole is at least
    a hundredth away from the nearest whole number."""
    if dialect not in BY_RANKS:
        raise QueryRefused(refusal(dialect))
    inner = (exp.select(exp.alias_(value, "wd_v", copy=False), copy=False)
             .from_(sqlbuild.table(table), copy=False).where(where, copy=False))
    v = exp.column("wd_v")
    present = exp.Not(this=exp.Is(this=v.copy(), expression=exp.Null()))
    ranked = (exp.select(
        v.copy(),
        exp.alias_(exp.Window(this=exp.RowNumber(), partition_by=[_null_flag(v.copy())],
                              order=exp.Order(expressions=[exp.Ordered(this=v.copy())])), "wd_rn", copy=False),
        exp.alias_(exp.Window(this=exp.Count(this=v.copy())), "wd_n", copy=False), copy=False)
        .from_(inner.subquery("wd_values", copy=False), copy=False))
    n, rn = exp.column("wd_n"), exp.column("wd_rn")
    columns: list[exp.Expr] = [exp.alias_(exp.Max(this=n.copy()), "wd_count", copy=False)]
    for i, hundredth in enumerate(hundredths_):
        position = exp.Div(this=exp.Mul(this=exp.Paren(this=exp.Sub(this=n.copy(), expression=exp.Literal.number(1))),
                                        expression=exp.Literal.number(hundredth)),
                           expression=exp.Literal.number("100.0"))
        for side, rounding in (("lo", exp.Floor), ("hi", exp.Ceil)):
            rank = exp.Add(this=rounding(this=position.copy()), expression=exp.Literal.number(1))
            hit = exp.and_(present.copy(), exp.EQ(this=rn.copy(), expression=rank), copy=False)
            columns.append(exp.alias_(exp.Max(this=exp.Case(ifs=[exp.If(this=hit, true=v.copy())])),
                                      f"wd_{side}{i}", copy=False))
    return exp.select(*columns, copy=False).from_(ranked.subquery("wd_ranked", copy=False), copy=False)


def _null_flag(value: exp.Expr) -> exp.Expr:
    """1 for NULL, 0 otherwise: ranks are numbered among the values only, wherever a database sorts NULL."""
    return exp.Case(ifs=[exp.If(this=exp.Is(this=value, expression=exp.Null()), true=exp.Literal.number(1))],
                    default=exp.Literal.number(0))


def interpolate(count: int, hundredth: int, low: float | None, high: float | None) -> float | None:
    """The percentile from the two values around it (see :func:`ranks_query`)."""
    if not count or low is None or high is None:
        return None
    whole, rest = divmod((count - 1) * hundredth, 100)
    del whole
    low, high = float(low), float(high)
    return low + (high - low) * (rest / 100) if rest else low


def blank(value: exp.Expr, dialect: str) -> exp.Expr:
    """True where ``value`` is text of nothing or only blanks."""
    return sqlbuild.regex_search(value, BLANK_OR_EMPTY, dialect)
