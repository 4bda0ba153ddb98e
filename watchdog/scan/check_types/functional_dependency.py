"""``functional_dependency``: rows whose dependent value is not their group's majority value.

``{determinant: [zip], dependent: city}``: for every group of rows with equal determinant values,
the dependent should have one value. In a group with two or more values, the most common value is
taken as right and every other row fails (the likely wrong cells). When two or more values tie for
most common, every row of the group fails (nothing says which is right).

NULLs: a row with a NULL in any determinant column belongs to no group and is skipped. A NULL
dependent is skipped too (``dependent_nulls: skip``, the default: ``not_null`` reports it); with
``dependent_nulls: value`` it is one more value that can be the majority or fail. Values are
compared exactly (case- and trailing-space-sensitive on every database, as ``unique``).

One GROUP BY statement (with window functions over its groups) measures ``failing``, and
``details`` gives ``groups_in_conflict``, ``rows_in_conflict`` and ``tied_groups``. Samples and the
finding's SQL list the failing rows beside ``wd_majority_value`` (NULL when the group is tied).
"""

from __future__ import annotations

from typing import Any, Literal, cast

from sqlglot import exp

from watchdog.scan import sqlbuild
from watchdog.scan.check_types.base import (
    ROW_ALIAS,
    Check,
    Measurement,
    Metric,
    RowCheckOptions,
    RowFlag,
    Standalone,
    as_int,
    register,
)
from watchdog.scan.check_types.fields import option, options_class

MAJORITY = "wd_majority_value"


def _listed(value: Any) -> Any:
    return [value] if isinstance(value, str) else value


@options_class
class FunctionalDependencyOptions(RowCheckOptions):
    determinant: list[str] = option(min_length=1, before=_listed)
    dependent: str = option(min_length=1)
    dependent_nulls: Literal["skip", "value"] = "skip"


def _one(text: str) -> exp.Expr:
    return exp.Literal.number(text)


def _case(cond: exp.Expr, then: exp.Expr, default: exp.Expr | None = None) -> exp.Case:
    return exp.Case(ifs=[exp.If(this=cond, true=then)], default=default)


@register
class FunctionalDependency(Check):
    kind = "functional_dependency"
    compares_text_keys = True
    Options = FunctionalDependencyOptions
    short_form = None

    @property
    def determinant(self) -> list[str]:
        return list(self.options.determinant)

    @property
    def dependent(self) -> str:
        return str(self.options.dependent)

    @property
    def column(self) -> str | None:
        return self.dependent

    @property
    def columns(self) -> list[str] | None:
        return [*self.determinant, self.dependent]

    @property
    def name(self) -> str:
        if self.options.name:
            return str(self.options.name)
        return f"{self.table}.{'+'.join(self.determinant)}->{self.dependent}.{self.kind}"

    # ---- SQL
    def _keys(self) -> list[str]:
        return [f"wd_k{i}" for i in range(len(self.determinant))]

    def _scope(self, dialect: str, alias: str | None = None) -> exp.Expr | None:
        """Rows that take part: determinant all non-NULL (and dependent non-NULL unless counted as a value)."""
        cols = list(self.determinant)
        if self.options.dependent_nulls == "skip":
            cols.append(self.dependent)
        present = [exp.Not(this=exp.Is(this=sqlbuild.column(c, alias), expression=exp.Null())) for c in cols]
        return sqlbuild.and_all(*present, self.filter(dialect))

    def _ranked(self, dialect: str) -> exp.Select:
        """One row per (group, dependent value) of groups with 2+ values: counts, group top, winners, rank."""
        keys = [self.exact_column(c, dialect) for c in self.determinant]
        value = self.exact_column(self.dependent, dialect)
        names = self._keys()

        def part() -> list[exp.Expr]:
            return [k.copy() for k in keys]

        pairs = (
            exp.select(
                *[exp.alias_(k.copy(), n, copy=False) for k, n in zip(keys, names, strict=False)],
                exp.alias_(value.copy(), "wd_v", copy=False),
                exp.alias_(exp.Min(this=sqlbuild.column(self.dependent)), "wd_shown", copy=False),
                exp.alias_(sqlbuild.count_star(), "wd_n", copy=False),
                exp.alias_(exp.Window(this=exp.Max(this=sqlbuild.count_star()), partition_by=part()), "wd_top",
                           copy=False),
                exp.alias_(exp.Window(this=sqlbuild.count_star(), partition_by=part()), "wd_values", copy=False),
                copy=False,
            )
            .from_(sqlbuild.table(self.table or ""), copy=False)
            .where(self._scope(dialect), copy=False)
            .group_by(*part(), value.copy(), copy=False)
        )
        key_cols = [exp.column(n) for n in names]
        top = exp.EQ(this=exp.column("wd_n"), expression=exp.column("wd_top"))
        winners = exp.Window(this=exp.Sum(this=_case(top.copy(), _one("1"), _one("0"))),
                             partition_by=[c.copy() for c in key_cols])
        rank = exp.Window(this=exp.RowNumber(), partition_by=[c.copy() for c in key_cols],
                          order=exp.Order(expressions=[exp.Ordered(this=exp.column("wd_n"), desc=True)]))
        return (
            exp.select(*[c.copy() for c in key_cols], exp.column("wd_v"), exp.column("wd_shown"), exp.column("wd_n"),
                       exp.column("wd_top"), exp.alias_(winners, "wd_winners", copy=False),
                       exp.alias_(rank, "wd_rank", copy=False), copy=False)
            .from_(pairs.subquery("wd_pairs", copy=False), copy=False)
            .where(exp.GT(this=exp.column("wd_values"), expression=_one("1")), copy=False)
        )

    def _decided(self) -> exp.Expr:
        """This (group, value) row holds the group's single most common value."""
        return cast(exp.Expr, exp.and_(exp.EQ(this=exp.column("wd_n"), expression=exp.column("wd_top")),
                        exp.EQ(this=exp.column("wd_winners"), expression=_one("1")), copy=False))

    def _summary(self, dialect: str) -> Standalone:
        failing = exp.Sum(this=_case(self._decided(), _one("0"), exp.column("wd_n")))
        first = exp.EQ(this=exp.column("wd_rank"), expression=_one("1"))
        tied = cast(exp.Expr, exp.and_(first.copy(), exp.GT(this=exp.column("wd_winners"), expression=_one("1")),
                                       copy=False))
        query = exp.select(
            exp.alias_(failing, "failing_rows", copy=False),
            exp.alias_(exp.Sum(this=_case(first, _one("1"), _one("0"))), "groups_in_conflict", copy=False),
            exp.alias_(exp.Sum(this=exp.column("wd_n")), "rows_in_conflict", copy=False),
            exp.alias_(exp.Sum(this=_case(tied, _one("1"), _one("0"))), "tied_groups", copy=False),
            copy=False,
        ).from_(self._ranked(dialect).subquery("wd_ranked", copy=False), copy=False)
        sql = query.sql(dialect=dialect, copy=False)
        return Standalone(sql, sql)

    def metrics(self, dialect: str) -> list[Metric]:
        return [self.total_metric(), self._summary(dialect)]

    def measure(self, values: dict[Metric, Any], dialect: str) -> Measurement:
        row = values[self._summary(dialect)]
        failing, groups, rows, tied = (as_int(v) for v in row)
        return Measurement(failing=failing, total=as_int(values[self.total_metric()]),
                           details={"groups_in_conflict": groups, "rows_in_conflict": rows, "tied_groups": tied})

    def _majority(self, dialect: str) -> exp.Select:
        """One row per group in conflict: its keys, its majority value (shown and compared), whether one is decided."""
        names = self._keys()
        decided = self._decided()
        return (
            exp.select(
                *[exp.column(n) for n in names],
                exp.alias_(exp.Max(this=_case(decided.copy(), exp.column("wd_shown"))), "wd_majority", copy=False),
                exp.alias_(exp.Max(this=_case(decided.copy(), exp.column("wd_v"))), "wd_majority_key", copy=False),
                exp.alias_(exp.Max(this=_case(decided.copy(), _one("1"), _one("0"))), "wd_decided", copy=False),
                copy=False,
            )
            .from_(self._ranked(dialect).subquery("wd_ranked", copy=False), copy=False)
            .group_by(*[exp.column(n) for n in names], copy=False)
        )

    def _wrong(self, dialect: str, src: str, m: str) -> tuple[exp.Expr, exp.Expr]:
        """(the join of a row to its group, the row's dependent value being wrong) for aliases ``src``, ``m``."""
        on = sqlbuild.and_all(*[
            exp.EQ(this=self.exact_column(c, dialect, src), expression=sqlbuild.column(n, m))
            for c, n in zip(self.determinant, self._keys(), strict=False)])
        same = exp.NullSafeEQ(this=self.exact_column(self.dependent, dialect, src),
                              expression=sqlbuild.column("wd_majority_key", m))
        wrong = exp.or_(exp.EQ(this=sqlbuild.column("wd_decided", m), expression=_one("0")),
                        exp.Not(this=exp.Paren(this=same)), copy=False)
        return on, wrong

    def row_flag(self, dialect: str, tag: str) -> RowFlag:
        alias = f"wd_fd_{tag}"
        on, wrong = self._wrong(dialect, ROW_ALIAS, alias)
        joined = exp.Not(this=exp.Is(this=sqlbuild.column("wd_decided", alias), expression=exp.Null()))
        return RowFlag(condition=sqlbuild.and_all(joined, self._scope(dialect), exp.Paren(this=wrong)),
                       scope=self.filter(dialect), joins=[(self._majority(dialect).subquery(alias, copy=False), on)],
                       values=[self.dependent])

    def failing_rows(self, dialect: str) -> exp.Expr:
        on, wrong = self._wrong(dialect, "src", "m")
        return (
            exp.select(exp.Column(this=exp.Star(), table=sqlbuild.ident("src")),
                       exp.alias_(sqlbuild.column("wd_majority", "m"), MAJORITY, copy=False), copy=False)
            .from_(sqlbuild.table(self.table or "", alias="src"), copy=False)
            .join(self._majority(dialect).subquery("m", copy=False), on=on, copy=False)
            .where(sqlbuild.and_all(self._scope(dialect, "src"), exp.Paren(this=wrong)), copy=False)
            .order_by(*[sqlbuild.column(c, "src") for c in self.determinant], sqlbuild.column(self.dependent, "src"),
                      copy=False)
        )
