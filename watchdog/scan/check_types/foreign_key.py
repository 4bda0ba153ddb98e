"""``foreign_key``: non-null values with no matching row in the referenced table (one anti-join)."""

from __future__ import annotations

from typing import Any

from sqlglot import exp

from watchdog.scan import sqlbuild
from watchdog.scan.check_types.base import (
    ROW_ALIAS,
    Check,
    ColumnOptions,
    Measurement,
    Metric,
    RowFlag,
    SampleSpec,
    Standalone,
    as_int,
    register,
)
from watchdog.scan.check_types.fields import option, options_class

CHILD, PARENT = ROW_ALIAS, "wd_parent"


def _table_dot_column(value: str) -> str:
    parts = sqlbuild.split_name(value, max_parts=4)
    if len(parts) < 2:
        raise ValueError(f"expected table.column (e.g. companies.id), got {value!r}")
    return value


@options_class
class ForeignKeyOptions(ColumnOptions):
    #: table.column (or schema.table.column)
    references: str = option(after=_table_dot_column)


@register
class ForeignKey(Check):
    kind = "foreign_key"
    Options = ForeignKeyOptions
    needs_column_types = True
    options: ForeignKeyOptions

    def _orphans_where(self, dialect: str) -> exp.Expr:
        *table_parts, ref_column = sqlbuild.split_name(self.options.references, max_parts=4)
        ref_table = sqlbuild.join_name(table_parts)
        child_col = sqlbuild.column(self.column or "", CHILD)
        parent_col = sqlbuild.column(ref_column, PARENT)
        if dialect == "mysql" and self.column_kind(self.column)[0] != "number":
            # MySQL/MariaDB's default collations match 'A' and 'a ' to 'a', so values are compared as
            # bytes; and not with a correlated NOT EXISTS, whose subquery cache MariaDB keys by the
            # collation ('A' would reuse the answer for 'a'): an uncorrelated NOT IN over non-NULL parents.
            # Numeric keys have no collation: they keep the NOT EXISTS, which can use the parent's index.
            parents = (
                exp.select(sqlbuild.exact(parent_col.copy(), dialect), copy=False)
                .from_(sqlbuild.table(ref_table, alias=PARENT), copy=False)
                .where(exp.Not(this=exp.Is(this=parent_col, expression=exp.Null())), copy=False)
            )
            orphan: exp.Expr = exp.Not(this=exp.In(this=sqlbuild.exact(child_col.copy(), dialect),
                                                         query=parents.subquery(copy=False)))
        else:  # exact() leaves the columns as they are except where a collation must be made binary
            kind = self.column_kind(self.column)[0]
            # numbers have no collation: on MySQL/MariaDB they are compared as numbers (a cast to BINARY would
            # keep the parent's index from answering, and tell 1.0 from 1)
            same = exp.EQ(this=parent_col, expression=child_col.copy()) if dialect == "mysql" else exp.EQ(
                this=sqlbuild.exact(parent_col, dialect, kind),
                expression=sqlbuild.exact(child_col.copy(), dialect, kind))
            parent = (
                exp.select(exp.Literal.number(1), copy=False)
                .from_(sqlbuild.table(ref_table, alias=PARENT), copy=False)
                .where(same, copy=False)
            )
            orphan = exp.Not(this=exp.Exists(this=parent))
        where = sqlbuild.and_all(exp.Not(this=exp.Is(this=child_col, expression=exp.Null())), self.filter(dialect),
                                 orphan)
        assert where is not None
        return where

    def _orphans_query(self, dialect: str) -> Standalone:
        query = exp.select(sqlbuild.count_star(), copy=False).from_(sqlbuild.table(self.table or "", alias=CHILD),
                                                                     copy=False)
        sql = query.where(self._orphans_where(dialect), copy=False).sql(dialect=dialect, copy=False)
        return Standalone(sql, sql, sampled=lambda rows: self._orphans_with_rows(dialect, rows))

    def _orphans_with_rows(self, dialect: str, rows: int) -> str:
        """The orphan count (a window over the anti-join's result, on every row) and the first ``rows``
        orphan rows: the sample comes from the anti-join itself."""
        star = exp.Column(this=exp.Star(), table=sqlbuild.ident(CHILD))
        query = (exp.select(exp.alias_(exp.Window(this=sqlbuild.count_star()), "wd_orphans", copy=False), star,
                            copy=False)
                 .from_(sqlbuild.table(self.table or "", alias=CHILD), copy=False)
                 .where(self._orphans_where(dialect), copy=False).limit(rows, copy=False))
        return query.sql(dialect=dialect, copy=False)

    def sample_spec(self, dialect: str, m: Measurement, extra: tuple[list[str], list[tuple[Any, ...]]] | None,
                    rows: int) -> SampleSpec | None:
        if extra is None:
            return None
        columns, found = extra
        return SampleSpec(rows=[dict(zip(columns, row, strict=False)) for row in found[:rows]])

    def metrics(self, dialect: str) -> list[Metric]:
        return [self.total_metric(), self._orphans_query(dialect)]

    def row_flag(self, dialect: str, tag: str) -> RowFlag:
        """The same orphans as :meth:`_orphans_where`, as a LEFT JOIN to the parent's distinct keys: a hash join
        where the anti-join, inside a CASE, would be a subquery per row (PostgreSQL then also JIT-compiles it)."""
        alias = f"wd_fk_{tag}"
        *table_parts, ref_column = sqlbuild.split_name(self.options.references, max_parts=4)
        kind = self.column_kind(self.column)[0]
        parent_col = sqlbuild.column(ref_column)
        keys = (exp.select(exp.alias_(sqlbuild.exact(parent_col.copy(), dialect, kind), "wd_key", copy=False),
                           copy=False).distinct(copy=False)
                .from_(sqlbuild.table(sqlbuild.join_name(table_parts)), copy=False)
                .where(exp.Not(this=exp.Is(this=parent_col, expression=exp.Null())), copy=False))
        child = sqlbuild.column(self.column or "", CHILD)
        on = exp.EQ(this=sqlbuild.exact(child.copy(), dialect, kind), expression=sqlbuild.column("wd_key", alias))
        orphan = exp.Is(this=sqlbuild.column("wd_key", alias), expression=exp.Null())
        condition = sqlbuild.and_all(exp.Not(this=exp.Is(this=child, expression=exp.Null())), self.filter(dialect),
                                     orphan)
        assert condition is not None
        return RowFlag(condition=condition, scope=self.filter(dialect),
                       joins=[(keys.subquery(alias, copy=False), on)], values=[self.column] if self.column else [])

    def measure(self, values: dict[Metric, Any], dialect: str) -> Measurement:
        row = values[self._orphans_query(dialect)]
        return Measurement(failing=as_int(row[0]), total=as_int(values[self.total_metric()]))

    def failing_rows(self, dialect: str) -> exp.Expr:
        star = exp.Column(this=exp.Star(), table=sqlbuild.ident(CHILD))
        return (exp.select(star, copy=False).from_(sqlbuild.table(self.table or "", alias=CHILD), copy=False)
                .where(self._orphans_where(dialect), copy=False))
