"""``foreign_key``: non-null values with no matching row in the referenced table (one anti-join)."""

from __future__ import annotations

from typing import Any

from pydantic import Field, field_validator
from sqlglot import exp

from watchdog.scan import sqlbuild
from watchdog.scan.check_types.base import (
    Check,
    ColumnOptions,
    Measurement,
    Metric,
    Standalone,
    as_int,
    register,
)

CHILD, PARENT = "wd_child", "wd_parent"


class ForeignKeyOptions(ColumnOptions):
    references: str = Field(description="table.column (or schema.table.column)")

    @field_validator("references")
    @classmethod
    def _table_dot_column(cls, value: str) -> str:
        parts = value.split(".")
        if len(parts) < 2 or not all(p.strip() for p in parts):
            raise ValueError(f"expected table.column (e.g. companies.id), got {value!r}")
        return value


@register
class ForeignKey(Check):
    kind = "foreign_key"
    Options = ForeignKeyOptions
    options: ForeignKeyOptions

    def _orphans_where(self, dialect: str) -> exp.Expr:
        ref_table, _, ref_column = self.options.references.rpartition(".")
        child_col = sqlbuild.column(self.column or "", CHILD)
        parent = (
            exp.select(exp.Literal.number(1))
            .from_(sqlbuild.table(ref_table, alias=PARENT))
            .where(exp.EQ(this=sqlbuild.column(ref_column, PARENT), expression=child_col.copy()))
        )
        return sqlbuild.and_all(
            exp.Not(this=exp.Is(this=child_col, expression=exp.Null())),
            self.filter(dialect),
            exp.Not(this=exp.Exists(this=parent)),
        )

    def _orphans_query(self, dialect: str) -> Standalone:
        query = exp.select(sqlbuild.count_star()).from_(sqlbuild.table(self.table or "", alias=CHILD))
        sql = query.where(self._orphans_where(dialect)).sql(dialect=dialect)
        return Standalone(sql, sql)

    def metrics(self, dialect: str) -> list[Metric]:
        return [self.total_metric(), self._orphans_query(dialect)]

    def measure(self, values: dict[Metric, Any], dialect: str) -> Measurement:
        row = values[self._orphans_query(dialect)]
        return Measurement(failing=as_int(row[0]), total=as_int(values[self.total_metric()]))

    def failing_rows(self, dialect: str) -> exp.Expr:
        star = exp.Column(this=exp.Star(), table=sqlbuild.ident(CHILD))
        return exp.select(star).from_(sqlbuild.table(self.table or "", alias=CHILD)).where(self._orphans_where(dialect))
