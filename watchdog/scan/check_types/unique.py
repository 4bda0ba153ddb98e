"""``unique``: rows whose value (or combination of values) occurs more than once.

Every row of a duplicated group counts (Great Expectations' rule). NULLs are skipped; for a
compound key, rows whose columns are all NULL are skipped and the rest group as SQL GROUP BY
groups them. ``details`` also gives ``duplicate_values`` (distinct values that repeat: dbt's
and Soda 3's figure) and ``excess_rows`` (rows beyond the first of each group: Soda 4's).
One GROUP BY statement per check.

On an incremental table's windowed run (:mod:`watchdog.scan.incremental` sets :attr:`Unique.older`), the check
judges the window's rows against the whole table: the window's keys are grouped, and a key fails when it
repeats inside the window or when an older row (before the window) carries it too: an ``EXISTS`` per new key
that the key's index answers or, where the window's integer keys lie close together (:attr:`Unique.span`), the
older rows of their key range read through the index in one statement. ``failing`` and ``total`` then count the
window's rows only.
"""

from __future__ import annotations

import math
from datetime import date, datetime, time
from decimal import Decimal
from typing import Any
from uuid import UUID

from sqlglot import exp

from watchdog.scan import sqlbuild
from watchdog.scan.check_types.base import (
    ROW_ALIAS,
    Check,
    Measurement,
    Metric,
    RowCheckOptions,
    RowFlag,
    SampleSpec,
    Standalone,
    as_int,
    register,
)
from watchdog.scan.check_types.fields import option, options_class

GROUP_ROWS = "wd_group_rows"


@options_class
class UniqueOptions(RowCheckOptions):
    """``column: a``, ``column: [a, b]`` or ``columns: [a, b]`` (findings call a compound key ``columns``)."""

    column: str | list[str] | None = option(None, min_length=1)
    columns: list[str] | None = option(None, min_length=1)

    def __post_init__(self) -> None:
        super().__post_init__()
        if (self.column is None) == (self.columns is None):
            raise ValueError("give the key as `column:` (one column or a list) or `columns:` (a list), not "
                             + ("both" if self.column is not None else "neither"))
        for name in self.key:
            if not name:
                raise ValueError("a key column name is empty")

    @property
    def key(self) -> list[str]:
        value = self.columns if self.columns is not None else self.column
        return [value] if isinstance(value, str) else list(value or [])


@register
class Unique(Check):
    kind = "unique"
    Options = UniqueOptions
    compares_text_keys = True
    options: UniqueOptions
    #: on a windowed run, the rows before the window (the check's own ``where`` included): the window's keys
    #: are looked up among them; None: the whole table is judged
    older: exp.Expr | None = None
    #: on a windowed run, the key leads an index (from the catalogue): PostgreSQL then probes it once per new key
    indexed: bool | None = None
    #: on a windowed run, the window's key range where its keys lie close together (ids appended in order):
    #: the older rows of that range are read through the index instead of one probe per new key
    span: tuple[int, int] | None = None

    @property
    def key_columns(self) -> list[str]:
        return list(self.options.key)

    @property
    def column(self) -> str | None:
        cols = self.key_columns
        return cols[0] if len(cols) == 1 else None

    @property
    def columns(self) -> list[str] | None:
        cols = self.key_columns
        return cols if len(cols) > 1 else None

    def _not_all_null(self) -> exp.Expr:
        nulls = [exp.Is(this=sqlbuild.column(c), expression=exp.Null()) for c in self.key_columns]
        return exp.Not(this=exp.Paren(this=exp.and_(*nulls, copy=False)) if len(nulls) > 1 else nulls[0])

    def _keys(self, dialect: str) -> list[exp.Expr]:
        """The grouping keys, compared exactly (values differing only in case are distinct everywhere)."""
        return [self.exact_column(c, dialect) for c in self.key_columns]

    def _groups(self, dialect: str, *, with_keys: bool = False) -> exp.Select:
        """One row per duplicated key: its size ``n`` (and the key itself as k0, k1, ... ``with_keys``).

        Every node here is fresh, so the builders are told not to copy (``copy=False``): by default each
        step deep-copies the whole query built so far, which was most of a small scan's sqlglot time."""
        if self.older is not None:
            return self._span_groups(dialect, with_keys) if self.span else self._window_groups(dialect, with_keys)
        keys = self._keys(dialect)
        named = [exp.alias_(k.copy(), f"k{i}", copy=False) for i, k in enumerate(keys)] if with_keys else []
        return (
            exp.select(*named, exp.alias_(sqlbuild.count_star(), "n", quoted=False, copy=False), copy=False)
            .from_(sqlbuild.table(self.table or ""), copy=False)
            .where(sqlbuild.and_all(self._not_all_null(), self.filter(dialect)), copy=False)
            .group_by(*keys, copy=False)
            .having(exp.GT(this=sqlbuild.count_star(), expression=exp.Literal.number(1)), copy=False)
        )

    def _span_groups(self, dialect: str, with_keys: bool) -> exp.Select:
        """The window's keys that repeat, from the window's rows (``wd_w`` 1) and the older rows of the window's
        key range (``wd_w`` 0) grouped together: a key fails when the window holds it and its group has more than
        one row; ``n`` counts its window rows. One range read through the key's index, no probe per key."""
        assert self.span is not None
        key = sqlbuild.column(self.key_columns[0])
        lo, hi = self.span

        def rows(weight: int, where: exp.Expr | None) -> exp.Select:
            return (exp.select(exp.alias_(key.copy(), "k0", copy=False),
                               exp.alias_(exp.Literal.number(weight), "wd_w", copy=False), copy=False)
                    .from_(sqlbuild.table(self.table or ""), copy=False).where(where, copy=False))

        between = exp.Between(this=key.copy(), low=exp.Literal.number(lo), high=exp.Literal.number(hi))
        both = exp.union(rows(1, sqlbuild.and_all(self._not_all_null(), self.filter(dialect))),
                         rows(0, sqlbuild.and_all(between, self.older.copy() if self.older is not None else None)),
                         distinct=False, copy=False)
        n = exp.Sum(this=exp.column("wd_w"))
        grouped = (exp.select(exp.column("k0"), exp.alias_(n, "n", quoted=False, copy=False), copy=False)
                   .from_(both.subquery("wd_rows", copy=False), copy=False).group_by(exp.column("k0"), copy=False)
                   .having(exp.and_(exp.GT(this=n.copy(), expression=exp.Literal.number(0)),
                                    exp.GT(this=sqlbuild.count_star(), expression=exp.Literal.number(1)),
                                    copy=False), copy=False))
        names = [exp.column("k0")] if with_keys else []
        return exp.select(*names, exp.column("n"), copy=False).from_(grouped.subquery("wd_new", copy=False),
                                                                     copy=False)

    def _window_groups(self, dialect: str, with_keys: bool) -> exp.Select:
        """The window's keys (k0, k1, ...) that repeat in the window (``n``: their rows in the window) or that an
        older row carries. Where the exact comparison casts the column (MySQL/MariaDB), the group's own value
        (r0, ...) is compared with the column as well: implied by the exact match, it lets the index answer."""
        keys = self._keys(dialect)
        plain = [sqlbuild.column(c) for c in self.key_columns]
        cast = [i for i, (k, c) in enumerate(zip(keys, plain, strict=True)) if k != c]
        rows: exp.Expr = sqlbuild.table(self.table or "")
        window_rows = None
        if "sqlite" in dialect:
            # SQLite would group in the key's own order (the rowid's) by reading the whole table: the window's
            # keys are first taken through the high-water column's index, into a materialized CTE
            window_rows = (exp.select(*[p.copy() for p in plain], copy=False).from_(rows, copy=False)
                           .where(sqlbuild.and_all(self._not_all_null(), self.filter(dialect)), copy=False))
            rows = exp.to_table("wd_window")
        inner = (
            exp.select(*[exp.alias_(k, f"k{i}", copy=False) for i, k in enumerate(keys)],
                       *[exp.alias_(exp.Min(this=plain[i].copy()), f"r{i}", copy=False) for i in cast],
                       exp.alias_(sqlbuild.count_star(), "n", quoted=False, copy=False), copy=False)
            .from_(rows, copy=False)
            .where(None if window_rows is not None else sqlbuild.and_all(self._not_all_null(), self.filter(dialect)),
                   copy=False)
            .group_by(*[k.copy() for k in keys], copy=False)
        )
        old, new = "wd_old", "wd_new"

        def older(compare: type[exp.Binary]) -> exp.Select:
            same = sqlbuild.and_all(
                *[compare(this=self.exact_column(c, dialect, old), expression=sqlbuild.column(f"k{i}", new))
                  for i, c in enumerate(self.key_columns)],
                *[compare(this=sqlbuild.column(self.key_columns[i], old), expression=sqlbuild.column(f"r{i}", new))
                  for i in cast])
            return (exp.select(exp.Literal.number(1), copy=False)
                    .from_(sqlbuild.table(self.table or "", alias=old), copy=False)
                    .where(sqlbuild.and_all(same, self.older.copy() if self.older is not None else None),
                           copy=False))

        compare = exp.EQ if len(keys) == 1 else exp.NullSafeEQ  # compound keys may hold a NULL
        found: exp.Expr = exp.Exists(this=older(compare))
        if dialect == "postgres" and self.indexed:
            # PostgreSQL answers an EXISTS under OR with one hash of every older row; a scalar subquery is
            # probed per key instead, through the index
            def probe(compare: type[exp.Binary]) -> exp.Expr:
                query = older(compare).limit(1, copy=False).subquery(copy=False)
                return exp.Not(this=exp.Is(this=query, expression=exp.Null()))

            found = probe(compare)
            if compare is exp.NullSafeEQ:
                # IS NOT DISTINCT FROM is no index condition: a key without NULL parts (the usual case) is
                # probed with plain equality, which the index answers; only keys with a NULL part take the slow form
                whole = exp.and_(*[exp.Not(this=exp.Is(this=sqlbuild.column(f"k{i}", new), expression=exp.Null()))
                                   for i in range(len(keys))], copy=False)
                found = exp.Case(ifs=[exp.If(this=whole, true=probe(exp.EQ))], default=found)
        repeated = exp.or_(exp.GT(this=exp.column("n"), expression=exp.Literal.number(1)), found, copy=False)
        names = [exp.column(f"k{i}") for i in range(len(keys))] if with_keys else []
        groups = (exp.select(*names, exp.column("n"), copy=False)
                  .from_(inner.subquery("wd_new", copy=False), copy=False).where(repeated, copy=False))
        if window_rows is not None:
            groups = groups.with_("wd_window", as_=window_rows, materialized=True, copy=False)
        return groups

    def _groups_query(self, dialect: str) -> Standalone:
        outer = exp.select(
            exp.alias_(sqlbuild.count_star(), "duplicate_values", copy=False),
            exp.alias_(exp.Sum(this=exp.column("n")), "failing_rows", copy=False), copy=False,
        ).from_(self._groups(dialect).subquery("dup_groups", copy=False), copy=False)
        sql = outer.sql(dialect=dialect, copy=False)
        # windowed: one index probe per new key; PostgreSQL would spend longer JIT-compiling them than running them
        return Standalone(sql, sql, sampled=lambda rows: self._groups_with_keys(dialect, rows), width=2,
                          jit=self.older is None)

    def _groups_with_keys(self, dialect: str, rows: int) -> str:
        """The same figures (as windows over the duplicated groups, so they ride on every row) and the
        first ``rows`` duplicated keys with their sizes, in key order: the sample's keys.

        On PostgreSQL the groups are a ``MATERIALIZED`` CTE: as a subquery, the outer ``ORDER BY … LIMIT``
        led the planner to a sorted group aggregate (an external sort of the whole table), about 1.5x the
        hash aggregate of the plain count at 10M rows; planned apart, the groups are hashed as in the count
        and only the duplicated keys are sorted."""
        names = [f"k{i}" for i in range(len(self.key_columns))]
        groups = self._groups(dialect, with_keys=True)
        outer = exp.select(
            exp.alias_(exp.Window(this=sqlbuild.count_star()), "duplicate_values", copy=False),
            exp.alias_(exp.Window(this=exp.Sum(this=exp.column("n"))), "failing_rows", copy=False),
            *[exp.column(n) for n in names], exp.column("n"), copy=False,
        )
        if dialect == "postgres":
            outer = outer.from_("dup_groups", copy=False).with_("dup_groups", as_=groups, materialized=True, copy=False)
        else:
            outer = outer.from_(groups.subquery("dup_groups", copy=False), copy=False)
        outer = outer.order_by(*[exp.column(n) for n in names], copy=False).limit(rows, copy=False)
        return outer.sql(dialect=dialect, copy=False)

    def sample_spec(self, dialect: str, m: Measurement, extra: tuple[list[str], list[tuple[Any, ...]]] | None,
                    rows: int) -> SampleSpec | None:
        """The rows of the first duplicated keys (keys are added until they cover ``rows`` rows), found
        by value in the table's one sample pass, which keeps ``rows`` of them."""
        if extra is None or not extra[1]:
            return None
        chosen: list[tuple[Any, ...]] = []
        expected = 0
        for found in extra[1]:
            if expected >= rows:
                break
            chosen.append(tuple(found[:-1]))
            expected += int(found[-1])
        alternatives = []
        for key in chosen:
            parts: list[exp.Expression] = []
            for name, value in zip(self.key_columns, key, strict=True):
                if value is None:
                    parts.append(exp.Is(this=sqlbuild.column(name), expression=exp.Null()))
                    continue
                literal = _key_literal(value, dialect)
                if literal is None:
                    return None  # a value we cannot write back as a literal: sample_query instead
                parts.append(exp.EQ(this=self.exact_column(name, dialect), expression=literal))
            alternatives.append(exp.Paren(this=exp.and_(*parts, copy=False)) if len(parts) > 1 else parts[0])
        either = exp.Paren(this=exp.or_(*alternatives, copy=False)) if len(alternatives) > 1 else alternatives[0]
        return SampleSpec(condition=sqlbuild.and_all(either, self._not_all_null(), self.filter(dialect)),
                          expected=expected)

    def metrics(self, dialect: str) -> list[Metric]:
        return [self.total_metric(), self._groups_query(dialect)]

    def row_flag(self, dialect: str, tag: str) -> RowFlag:
        """A row fails when its key is one of the duplicated keys (joined from the check's own GROUP BY)."""
        alias = f"wd_dup_{tag}"
        names = [f"k{i}" for i in range(len(self.key_columns))]
        # renamed so that no name of the join can be taken for one of the table's columns
        joined = exp.select(*[exp.alias_(exp.column(n), f"wd_{n}", copy=False) for n in [*names, "n"]], copy=False
                            ).from_(self._groups(dialect, with_keys=True).subquery("g", copy=False), copy=False)
        compare = exp.EQ if len(names) == 1 else exp.NullSafeEQ  # compound keys may hold a NULL
        on = sqlbuild.and_all(*[
            compare(this=self.exact_column(c, dialect, ROW_ALIAS), expression=sqlbuild.column(f"wd_{n}", alias))
            for c, n in zip(self.key_columns, names, strict=True)])
        found = exp.Not(this=exp.Is(this=sqlbuild.column("wd_n", alias), expression=exp.Null()))
        return RowFlag(condition=sqlbuild.and_all(found, self._not_all_null(), self.filter(dialect)),
                       scope=self.filter(dialect), joins=[(joined.subquery(alias, copy=False), on)],
                       values=self.key_columns)

    def measure(self, values: dict[Metric, Any], dialect: str) -> Measurement:
        row = values[self._groups_query(dialect)]
        duplicate_values, failing = as_int(row[0]), as_int(row[1])
        return Measurement(
            failing=failing,
            total=as_int(values[self.total_metric()]),
            details={"duplicate_values": duplicate_values, "excess_rows": failing - duplicate_values},
        )

    def sample_query(self, dialect: str, rows: int) -> exp.Expr:
        """The first duplicated keys from a GROUP BY (no window over the whole table), joined back to
        their rows: far cheaper than limiting :meth:`failing_rows` on a large table."""
        keys = self._keys(dialect)
        names = [f"k{i}" for i in range(len(keys))]
        groups = (
            exp.select(*[exp.column(n) for n in names], copy=False)
            .from_(self._groups(dialect, with_keys=True).subquery("g", copy=False), copy=False)
            .order_by(*[exp.column(n) for n in names], copy=False).limit(rows, copy=False)
        ) if self.older is not None else (
            exp.select(*[exp.alias_(k, n, copy=False) for k, n in zip(keys, names, strict=True)], copy=False)
            .from_(sqlbuild.table(self.table or ""), copy=False)
            .where(sqlbuild.and_all(self._not_all_null(), self.filter(dialect)), copy=False)
            .group_by(*[k.copy() for k in keys], copy=False)
            .having(exp.GT(this=sqlbuild.count_star(), expression=exp.Literal.number(1)), copy=False)
            .order_by(*[exp.column(n) for n in names], copy=False)
            .limit(rows, copy=False)
        )
        compare = exp.EQ if len(keys) == 1 else exp.NullSafeEQ  # compound keys may hold a NULL
        on = sqlbuild.and_all(*[
            compare(this=self.exact_column(c, dialect, "src"), expression=sqlbuild.column(n, "dup"))
            for c, n in zip(self.key_columns, names, strict=True)])
        return (
            exp.select(exp.Column(this=exp.Star(), table=sqlbuild.ident("src")), copy=False)
            .from_(sqlbuild.table(self.table or "", alias="src"), copy=False)
            .join(groups.subquery("dup", copy=False), on=on, copy=False)
            .where(self.filter(dialect), copy=False)
            .order_by(*[sqlbuild.column(c, "src") for c in self.key_columns], copy=False)
            .limit(rows, copy=False)
        )

    def failing_rows(self, dialect: str) -> exp.Expr:
        if self.older is not None:  # the window's rows whose key repeats (in the window or among older rows)
            names = [f"k{i}" for i in range(len(self.key_columns))]
            compare = exp.EQ if len(names) == 1 else exp.NullSafeEQ
            on = sqlbuild.and_all(*[
                compare(this=self.exact_column(c, dialect, "src"), expression=sqlbuild.column(n, "dup"))
                for c, n in zip(self.key_columns, names, strict=True)])
            return (exp.select(exp.Column(this=exp.Star(), table=sqlbuild.ident("src")), copy=False)
                    .from_(sqlbuild.table(self.table or "", alias="src"), copy=False)
                    .join(self._groups(dialect, with_keys=True).subquery("dup", copy=False), on=on, copy=False)
                    .where(self.filter(dialect), copy=False)
                    .order_by(*[sqlbuild.column(c, "src") for c in self.key_columns], copy=False))
        window = exp.Window(this=sqlbuild.count_star(), partition_by=self._keys(dialect))
        ranked = (
            exp.select(exp.Column(this=exp.Star(), table=sqlbuild.ident("src")),
                       exp.alias_(window, GROUP_ROWS, copy=False), copy=False)
            .from_(sqlbuild.table(self.table or "", alias="src"), copy=False)
            .where(sqlbuild.and_all(self._not_all_null(), self.filter(dialect)), copy=False)
        )
        return (
            exp.select("*", copy=False)
            .from_(ranked.subquery("grouped", copy=False), copy=False)
            .where(exp.GT(this=exp.column(GROUP_ROWS), expression=exp.Literal.number(1)), copy=False)
            .order_by(*[sqlbuild.column(c) for c in self.key_columns], copy=False)
        )


def _key_literal(value: Any, dialect: str) -> exp.Expression | None:
    """A duplicated key, as returned by the driver, written back as a literal it equals (None: cannot)."""
    if dialect == "mysql":  # the keys were grouped as CAST(... AS BINARY): compare the very bytes
        return exp.HexString(this=bytes(value).hex()) if isinstance(value, (bytes, bytearray)) else None
    if dialect == "trino" and isinstance(value, (date, datetime)):  # Trino compares no text with a date
        if isinstance(value, datetime) and value.tzinfo is not None:
            return None
        kind = "timestamp(6)" if isinstance(value, datetime) else "date"
        text = value.isoformat(sep=" ") if isinstance(value, datetime) else value.isoformat()
        return exp.Cast(this=exp.Literal.string(text), to=exp.DataType.build(kind, dialect="trino"))
    if isinstance(value, bool):
        return exp.Boolean(this=value)
    if isinstance(value, int):
        return exp.Literal.number(value)
    if isinstance(value, (float, Decimal)):
        return exp.Literal.number(repr(value) if isinstance(value, float) else str(value)) \
            if math.isfinite(value) else None
    if isinstance(value, (str, date, datetime, time, UUID)):
        return exp.Literal.string(value.isoformat() if isinstance(value, (date, datetime, time)) else str(value))
    return None
