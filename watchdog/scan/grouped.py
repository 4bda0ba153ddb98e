"""``group_by``: a row-level check judged per group of rows, in one GROUP BY statement per table and group columns.

A check with ``group_by: [region]`` counts its failing rows and its rows in every group (a NULL is a group of its
own, as GROUP BY makes it on every database) and judges each group against its thresholds: a group fails above
``max_count`` / ``max_rate`` (any failing row when none is given), warns above ``warn:``. The check fails when any
group fails. The checks of a table that share the same group columns share one statement: their ``where`` is
folded into their counts, so the statement reads the table once for all of them.

The statement returns, per check, the first :data:`GROUP_LIMIT` groups over a threshold (failing groups before
warning ones, then most failing rows first, then by group value: NULL first, then in byte order) and, riding on
every row, the check's table-wide figures and how many groups failed or warned: the rows read back are bounded
whatever the number of groups, and only the groups over a threshold are sorted. A group's rate is compared with
``max_rate`` exactly (``failing * q > total * p`` for ``max_rate = p/q``, q at most a million), the same on every
database.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from fractions import Fraction
from typing import Any

from sqlglot import exp

from watchdog.scan import sqlbuild

#: the groups over a threshold listed per check in ``details.groups`` (the rest are counted)
GROUP_LIMIT = 20


def group_columns(value: Any) -> Any:
    """``group_by: region`` or ``group_by: [region, country]``: column names, each once."""
    if isinstance(value, str):
        value = [value]
    if isinstance(value, list):
        if not all(isinstance(v, str) and v.strip() for v in value):
            raise ValueError("expected column names, e.g. `group_by: [region]`")
        if len(set(value)) != len(value):
            raise ValueError("a column is listed twice in group_by")
    return value


@dataclass(frozen=True)
class Level:
    """The thresholds a group is judged against: over ``max_count``, over ``max_rate`` (as the exact fraction
    ``rate``), or any failing row (``any_row``)."""

    max_count: int | None = None
    rate: tuple[int, int] | None = None
    any_row: bool = False

    @classmethod
    def of(cls, max_count: int | None, max_rate: float | None) -> Level:
        rate = None
        if max_rate is not None:
            exact = Fraction(str(max_rate)).limit_denominator(10**6)
            rate = (exact.numerator, exact.denominator)
        return cls(max_count=max_count, rate=rate)

    def over(self, failing: exp.Expr, total: exp.Expr) -> exp.Expr:
        """True where a group's ``failing`` of ``total`` rows is over these thresholds."""
        if self.any_row:
            return exp.GT(this=failing, expression=exp.Literal.number(0))
        parts: list[exp.Expr] = []
        if self.max_count is not None:
            parts.append(exp.GT(this=failing.copy(), expression=exp.Literal.number(self.max_count)))
        if self.rate is not None:
            p, q = self.rate
            parts.append(exp.GT(this=exp.Mul(this=failing.copy(), expression=exp.Literal.number(q)),
                                expression=exp.Mul(this=total.copy(), expression=exp.Literal.number(p))))
        return exp.Paren(this=exp.or_(*parts, copy=False)) if len(parts) > 1 else parts[0]


@dataclass(frozen=True)
class Bounds:
    """A metric's bounds: a group's value outside them (or no value at all) is over them."""

    min: float | None = None
    max: float | None = None

    def over(self, value: exp.Expr, total: exp.Expr) -> exp.Expr:
        parts: list[exp.Expr] = [exp.Is(this=value.copy(), expression=exp.Null())]
        if self.min is not None:
            parts.append(exp.LT(this=value.copy(), expression=exp.Literal.number(self.min)))
        if self.max is not None:
            parts.append(exp.GT(this=value.copy(), expression=exp.Literal.number(self.max)))
        return exp.and_(exp.GT(this=total.copy(), expression=exp.Literal.number(0)),  # a group without rows in
                        exp.Paren(this=exp.or_(*parts, copy=False)), copy=False)   # scope is not judged


@dataclass(frozen=True)
class GroupedCount:
    """One check's failing and total rows per group of ``group_by`` over ``table``; batched by the planner into one
    statement per table and group columns. ``failing`` and ``total`` already hold the check's ``where``."""

    table: str
    group_by: tuple[str, ...]
    key: str
    failing: exp.Expr = field(compare=False, hash=False, repr=False)
    total: exp.Expr = field(compare=False, hash=False, repr=False)
    fail: Level | Bounds | None = field(compare=False, default=None)
    warn: Level | Bounds | None = field(compare=False, default=None)
    #: the group columns as grouped (compared exactly: see ``sqlbuild.exact``), and as ordered
    exact_keys: tuple[exp.Expr, ...] = field(compare=False, hash=False, repr=False, default=())
    order_keys: tuple[exp.Expr, ...] = field(compare=False, hash=False, repr=False, default=())

    @classmethod
    def of(cls, table: str, group_by: tuple[str, ...], failing: exp.Expr, total: exp.Expr,
           fail: Level | Bounds | None, warn: Level | Bounds | None, exact_keys: tuple[exp.Expr, ...],
           order_keys: tuple[exp.Expr, ...]) -> GroupedCount:
        key = f"grouped:{table}:{group_by}:{failing.sql()}:{total.sql()}:{fail}:{warn}"
        return cls(table, group_by, key, failing, total, fail, warn, exact_keys, order_keys)

    def over_any(self, failing: exp.Expr, total: exp.Expr) -> exp.Expr:
        """True where a group is over the fail or the warn thresholds."""
        parts = [lv.over(failing, total) for lv in (self.fail, self.warn) if lv is not None]
        return exp.or_(*parts, copy=False) if parts else exp.false()

    def level(self, failing: exp.Expr, total: exp.Expr) -> exp.Expr:
        """2 where a group fails, 1 where it warns, else 0."""
        ifs = []
        if self.fail is not None:
            ifs.append(exp.If(this=self.fail.over(failing, total), true=exp.Literal.number(2)))
        if self.warn is not None:
            ifs.append(exp.If(this=self.warn.over(failing, total), true=exp.Literal.number(1)))
        if not ifs:
            return exp.Literal.number(0)
        return exp.Case(ifs=ifs, default=exp.Literal.number(0))


@dataclass
class Grouped:
    """What a check's grouped statement measured: table-wide figures, groups over a threshold, the first listed."""

    failing: int = 0
    total: int = 0
    groups_failing: int = 0
    groups_warning: int = 0
    groups_checked: int = 0
    groups: list[dict[str, Any]] = field(default_factory=list)

    def details(self) -> dict[str, Any]:
        listed = len(self.groups)
        return {"groups": self.groups, "groups_failing": self.groups_failing,
                "groups_warning": self.groups_warning, "groups_checked": self.groups_checked,
                "groups_omitted": self.groups_failing + self.groups_warning - listed}


def _col(name: str) -> exp.Column:
    return exp.column(name)


def _nulls_first(keys: list[exp.Expr]) -> list[exp.Ordered]:
    out = []
    for key in keys:
        is_null = exp.Case(ifs=[exp.If(this=exp.Is(this=key.copy(), expression=exp.Null()),
                                       true=exp.Literal.number(0))], default=exp.Literal.number(1))
        out += [exp.Ordered(this=is_null), exp.Ordered(this=key.copy())]
    return out


def statement(table: str, metrics: list[GroupedCount], dialect: str, limit: int = GROUP_LIMIT) -> str:
    """The one statement of ``metrics`` (same table and group columns): see the module's notes for its rows."""
    first = metrics[0]
    n = len(first.group_by)
    raw = [sqlbuild.column(g) for g in first.group_by]
    grouping: list[exp.Expr] = list(raw)
    grouping += [e.copy() for e, r in zip(first.exact_keys, raw, strict=True) if e.sql() != r.sql()]
    inner_cols: list[exp.Expr] = [exp.alias_(r.copy(), f"wd_g{i}", copy=False) for i, r in enumerate(raw)]
    inner_cols += [exp.alias_(o.copy(), f"wd_o{i}", copy=False) for i, o in enumerate(first.order_keys)]
    for j, m in enumerate(metrics):
        inner_cols += [exp.alias_(m.failing.copy(), f"wd_f{j}", copy=False),
                       exp.alias_(m.total.copy(), f"wd_t{j}", copy=False)]
    counted = (exp.select(*inner_cols, copy=False).from_(sqlbuild.table(table), copy=False)
               .group_by(*grouping, copy=False))
    levels: list[exp.Expr] = [exp.Star()]
    for j, m in enumerate(metrics):
        levels.append(exp.alias_(m.level(_col(f"wd_f{j}"), _col(f"wd_t{j}")), f"wd_l{j}", copy=False))
    judged = exp.select(*levels, copy=False).from_(counted.subquery("wd_counted", copy=False), copy=False)
    # the totals ride on every row (windows over all groups, no sort); one row is kept whatever happens
    # (wd_any), so an empty result means no group at all
    totals: list[exp.Expr] = [exp.Star(), exp.alias_(_any_row(dialect), "wd_any", copy=False)]
    breaching: list[exp.Expr] = [exp.EQ(this=_col("wd_any"), expression=exp.Literal.number(1))]
    for j in range(len(metrics)):
        f, t, lvl = _col(f"wd_f{j}"), _col(f"wd_t{j}"), _col(f"wd_l{j}")
        totals += [
            exp.alias_(exp.Window(this=exp.Sum(this=f.copy())), f"wd_ff{j}", copy=False),
            exp.alias_(exp.Window(this=exp.Sum(this=t.copy())), f"wd_tt{j}", copy=False),
            exp.alias_(exp.Window(this=_count_where(exp.EQ(this=lvl.copy(), expression=exp.Literal.number(2)))),
                       f"wd_nf{j}", copy=False),
            exp.alias_(exp.Window(this=_count_where(exp.EQ(this=lvl.copy(), expression=exp.Literal.number(1)))),
                       f"wd_nw{j}", copy=False),
            exp.alias_(exp.Window(this=_count_where(exp.GT(this=t.copy(), expression=exp.Literal.number(0)))),
                       f"wd_ng{j}", copy=False),
        ]
        breaching.append(exp.GT(this=lvl.copy(), expression=exp.Literal.number(0)))
    summed = exp.select(*totals, copy=False).from_(judged.subquery("wd_judged", copy=False), copy=False)
    # only the groups over a threshold (and the one kept row) are ranked: the sort is as small as they are few
    kept = (exp.select(exp.Star(), copy=False).from_(summed.subquery("wd_summed", copy=False), copy=False)
            .where(exp.or_(*breaching, copy=False), copy=False))
    order_keys: list[exp.Expr] = [_col(f"wd_o{i}") for i in range(n)]
    ranks: list[exp.Expr] = [exp.Star()]
    for j in range(len(metrics)):
        f, t, lvl = _col(f"wd_f{j}"), _col(f"wd_t{j}"), _col(f"wd_l{j}")
        ranks.append(exp.alias_(exp.Window(this=exp.RowNumber(), order=exp.Order(expressions=[
            exp.Ordered(this=lvl, desc=True), exp.Ordered(this=f, desc=True, nulls_first=False),
            exp.Ordered(this=t, desc=True),
            *_nulls_first(order_keys)])), f"wd_r{j}", copy=False))
    ranked = exp.select(*ranks, copy=False).from_(kept.subquery("wd_kept", copy=False), copy=False)
    keep: list[exp.Expr] = [exp.EQ(this=_col("wd_any"), expression=exp.Literal.number(1))]
    for j in range(len(metrics)):
        keep.append(exp.Paren(this=exp.and_(
            exp.GT(this=_col(f"wd_l{j}"), expression=exp.Literal.number(0)),
            exp.LTE(this=_col(f"wd_r{j}"), expression=exp.Literal.number(limit)), copy=False)))
    out = [_col(f"wd_g{i}") for i in range(n)]
    for j in range(len(metrics)):
        out += [_col(f"wd_{part}{j}") for part in ("f", "t", "l", "r", "ff", "tt", "nf", "nw", "ng")]
    query = (exp.select(*out, copy=False).from_(ranked.subquery("wd_ranked", copy=False), copy=False)
             .where(exp.or_(*keep, copy=False), copy=False))
    return query.sql(dialect=dialect, copy=False)


def _any_row(dialect: str) -> exp.Expr:
    """1 on exactly one row (any), numbered without a sort where the database allows (Spark wants an order)."""
    if dialect == "spark":
        return exp.Window(this=exp.RowNumber(), order=exp.Order(expressions=[exp.Ordered(this=_col("wd_t0"))]))
    return exp.Window(this=exp.RowNumber())


def _count_where(cond: exp.Expr) -> exp.Expr:
    return sqlbuild.case_count(cond)


def max_rows(metrics: int, limit: int = GROUP_LIMIT) -> int:
    return metrics * limit + 1


def read(metrics: list[GroupedCount], columns: list[str], rows: list[tuple[Any, ...]],
         limit: int = GROUP_LIMIT) -> dict[GroupedCount, Grouped]:
    """Each metric's :class:`Grouped` from the statement's rows (no row at all: an empty table)."""
    n = len(metrics[0].group_by)
    out: dict[GroupedCount, Grouped] = {}
    for j, m in enumerate(metrics):
        base = n + 9 * j
        found = Grouped()
        listed: list[tuple[Any, ...]] = []
        for row in rows:
            f, t, lvl, rank, ff, tt, nf, nw, ng = row[base:base + 9]
            found = Grouped(0 if isinstance(m.fail or m.warn, Bounds) else _int(ff), _int(tt), _int(nf), _int(nw),
                            _int(ng), found.groups)
            if _int(lvl) > 0 and _int(rank) <= limit:
                listed.append(row)
        listed.sort(key=lambda r: (-_int(r[base + 2]), -_num(r[base]), -_int(r[base + 1]),
                                   [_order(v) for v in r[:n]]))
        if isinstance(m.fail or m.warn, Bounds):  # a metric: ``failing`` holds the group's value
            found.groups = [_value_entry(m.group_by, r[:n], r[base], _int(r[base + 1]), _int(r[base + 2]))
                            for r in listed]
        else:
            found.groups = [_entry(m.group_by, r[:n], _int(r[base]), _int(r[base + 1]), _int(r[base + 2]))
                            for r in listed]
        out[m] = found
    return out


def _entry(names: tuple[str, ...], values: tuple[Any, ...], failing: int, total: int, level: int) -> dict[str, Any]:
    return {"group": dict(zip(names, values, strict=True)), "failing": failing, "total": total,
            "rate": failing / total if total else None, "status": "fail" if level == 2 else "warn"}


def _value_entry(names: tuple[str, ...], values: tuple[Any, ...], value: Any, rows: int,
                 level: int) -> dict[str, Any]:
    figure = None if value is None else float(f"{float(value):.12g}")
    return {"group": dict(zip(names, values, strict=True)), "value": figure, "rows": rows,
            "status": "fail" if level == 2 else "warn"}


def _int(value: Any) -> int:
    return 0 if value is None else int(value)


def _num(value: Any) -> Any:
    """A count as an int; a metric's value (or sum of values) as it is (NULL: lowest)."""
    if value is None:
        return float("-inf")
    number = float(value)
    return int(number) if number == int(number) and abs(number) < 2**53 else number


def _order(value: Any) -> tuple[int, Any]:
    """Group values in the statement's order: NULL first, then numbers, then text by code point, then the rest."""
    if value is None:
        return (0, 0)
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        return (1, value)
    if isinstance(value, str):
        return (2, value)
    try:
        return (1, float(value))
    except (TypeError, ValueError):
        return (3, str(value))
