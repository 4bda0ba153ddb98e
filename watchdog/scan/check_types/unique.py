"""``unique``: rows whose value (or combination of values) occurs more than once.

Every row of a duplicated group counts (Great Expectations' rule). NULLs are skipped; for a
compound key, rows whose columns are all NULL are skipped and the rest group as SQL GROUP BY
groups them. ``details`` also gives ``duplicate_values`` (distinct values that repeat: dbt's
and Soda 3's figure) and ``excess_rows`` (rows beyond the first of each group: Soda 4's).
One GROUP BY statement per check.
"""

from __future__ import annotations

from typing import Any

from pydantic import Field, model_validator
from sqlglot import exp

from watchdog.scan import sqlbuild
from watchdog.scan.check_types.base import (
    Check,
    Measurement,
    Metric,
    RowCheckOptions,
    Standalone,
    as_int,
    register,
)

GROUP_ROWS = "wd_group_rows"


class UniqueOptions(RowCheckOptions):
    """``column: a``, ``column: [a, b]`` or ``columns: [a, b]`` (findings call a compound key ``columns``)."""

    column: str | list[str] | None = Field(default=None, min_length=1)
    columns: list[str] | None = Field(default=None, min_length=1)

    @model_validator(mode="after")
    def _one_key(self) -> UniqueOptions:
        if (self.column is None) == (self.columns is None):
            raise ValueError("give the key as `column:` (one column or a list) or `columns:` (a list), not "
                             + ("both" if self.column is not None else "neither"))
        for name in self.key:
            if not name:
                raise ValueError("a key column name is empty")
        return self

    @property
    def key(self) -> list[str]:
        value = self.columns if self.columns is not None else self.column
        return [value] if isinstance(value, str) else list(value or [])


@register
class Unique(Check):
    kind = "unique"
    Options = UniqueOptions
    options: UniqueOptions

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
        return exp.Not(this=exp.Paren(this=exp.and_(*nulls)) if len(nulls) > 1 else nulls[0])

    def _keys(self, dialect: str) -> list[exp.Expr]:
        """The grouping keys, compared exactly (values differing only in case are distinct everywhere)."""
        return [sqlbuild.exact(sqlbuild.column(c), dialect) for c in self.key_columns]

    def _groups_query(self, dialect: str) -> Standalone:
        keys = self._keys(dialect)
        groups = (
            exp.select(exp.alias_(sqlbuild.count_star(), "n", quoted=False))
            .from_(sqlbuild.table(self.table or ""))
            .where(sqlbuild.and_all(self._not_all_null(), self.filter(dialect)))
            .group_by(*keys)
            .having(exp.GT(this=sqlbuild.count_star(), expression=exp.Literal.number(1)))
        )
        outer = exp.select(
            exp.alias_(sqlbuild.count_star(), "duplicate_values"),
            exp.alias_(exp.Sum(this=exp.column("n")), "failing_rows"),
        ).from_(groups.subquery("dup_groups"))
        sql = outer.sql(dialect=dialect)
        return Standalone(sql, sql)

    def metrics(self, dialect: str) -> list[Metric]:
        return [self.total_metric(), self._groups_query(dialect)]

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
            exp.select(*[exp.alias_(k, n) for k, n in zip(keys, names, strict=True)])
            .from_(sqlbuild.table(self.table or ""))
            .where(sqlbuild.and_all(self._not_all_null(), self.filter(dialect)))
            .group_by(*[k.copy() for k in keys])
            .having(exp.GT(this=sqlbuild.count_star(), expression=exp.Literal.number(1)))
            .order_by(*[exp.column(n) for n in names])
            .limit(rows)
        )
        compare = exp.EQ if len(keys) == 1 else exp.NullSafeEQ  # compound keys may hold a NULL
        on = sqlbuild.and_all(*[
            compare(this=sqlbuild.exact(sqlbuild.column(c, "src"), dialect), expression=sqlbuild.column(n, "dup"))
            for c, n in zip(self.key_columns, names, strict=True)])
        return (
            exp.select(exp.Column(this=exp.Star(), table=sqlbuild.ident("src")))
            .from_(sqlbuild.table(self.table or "", alias="src"))
            .join(groups.subquery("dup"), on=on)
            .where(self.filter(dialect))
            .order_by(*[sqlbuild.column(c, "src") for c in self.key_columns])
            .limit(rows)
        )

    def failing_rows(self, dialect: str) -> exp.Expr:
        keys = self._keys(dialect)
        window = exp.Window(this=sqlbuild.count_star(), partition_by=[k.copy() for k in keys])
        ranked = (
            exp.select(exp.Column(this=exp.Star(), table=sqlbuild.ident("src")), exp.alias_(window, GROUP_ROWS))
            .from_(sqlbuild.table(self.table or "", alias="src"))
            .where(sqlbuild.and_all(self._not_all_null(), self.filter(dialect)))
        )
        return (
            exp.select("*")
            .from_(ranked.subquery("grouped"))
            .where(exp.GT(this=exp.column(GROUP_ROWS), expression=exp.Literal.number(1)))
            .order_by(*[sqlbuild.column(c) for c in self.key_columns])
        )
