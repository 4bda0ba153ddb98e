"""Row-level checks that count rows matching a failing condition, batched into one SELECT."""

from __future__ import annotations

from typing import Any

from sqlglot import exp

from watchdog.scan import grouped, sqlbuild
from watchdog.scan.check_types.base import Aggregate, Check, Measurement, Metric, RowFlag, SampleSpec, as_int


class RowConditionCheck(Check):
    """failing = rows where :meth:`condition` holds; total = rows after ``where``; with ``group_by``, judged per
    group in the table's grouped statement (:mod:`watchdog.scan.grouped`)."""

    groupable = True

    def condition(self, dialect: str) -> exp.Expr:
        raise NotImplementedError

    @property
    def needs_column_types(self) -> bool:  # type: ignore[override]  # group keys are compared and ordered exactly
        return bool(self.group_by)

    def _grouped_metric(self, dialect: str) -> grouped.GroupedCount:
        where = self.filter(dialect)
        failing = sqlbuild.case_count(sqlbuild.and_all(self.condition(dialect), where))
        total = sqlbuild.case_count(where) if where is not None else sqlbuild.count_star()
        fail = warn = None
        max_count, max_rate = self.options.max_count, self.options.max_rate
        if max_count is not None or max_rate is not None:
            fail = grouped.Level.of(max_count, max_rate)
        elif self.options.warn is None:
            fail = grouped.Level(any_row=True)
        if self.options.warn is not None:
            warn = grouped.Level.of(self.options.warn.max_count, self.options.warn.max_rate)
        exact = tuple(self.exact_column(g, dialect) for g in self.group_by)
        return grouped.GroupedCount.of(self.table or "", self.group_by, failing, total, fail, warn, exact,
                                       tuple(self._ordered(g, dialect) for g in self.group_by))

    def _ordered(self, name: str, dialect: str) -> exp.Expr:
        """A group column as the grouped statement orders it: by bytes (code points) on every database."""
        kind = self.column_kind(name)[0]
        if kind not in ("text", "unknown"):  # numbers, dates: by value (bytes would put 10 before 5)
            return sqlbuild.column(name)
        if dialect == "postgres" and kind == "text":
            return exp.Collate(this=sqlbuild.column(name), expression=exp.Identifier(this="C", quoted=True))
        return self.exact_column(name, dialect)

    def _failing_metric(self, dialect: str) -> Aggregate:
        return Aggregate.of(self.table or "", self.options.where, sqlbuild.case_count(self.condition(dialect)))

    def metrics(self, dialect: str) -> list[Metric]:
        self.filter(dialect)  # validate the where condition early
        if self.group_by:
            return [self._grouped_metric(dialect)]
        return [self.total_metric(), self._failing_metric(dialect)]

    def measure(self, values: dict[Metric, Any], dialect: str) -> Measurement:
        if self.group_by:
            found: grouped.Grouped = values[self._grouped_metric(dialect)]
            details = found.details()
            details["groups_sql"] = self.groups_sql(dialect)
            return Measurement(failing=found.failing, total=found.total, details=details)
        return Measurement(failing=as_int(values[self._failing_metric(dialect)]),
                           total=as_int(values[self.total_metric()]))

    #: the checked column's values are what the failing rows get wrong (not for ``expression``)
    values_are_offending = True

    def row_flag(self, dialect: str, tag: str) -> RowFlag:
        return RowFlag(condition=sqlbuild.and_all(self.condition(dialect), self.filter(dialect)),
                       scope=self.filter(dialect),
                       values=[self.column] if self.column and self.values_are_offending else [])

    def failing_rows(self, dialect: str) -> exp.Expr:
        where = sqlbuild.and_all(self.condition(dialect), self.filter(dialect))
        if self.group_by:
            return self._grouped_failing_rows(dialect, where)
        return exp.select("*", copy=False).from_(sqlbuild.table(self.table or ""), copy=False).where(where, copy=False)

    def _over_groups(self, dialect: str, named: bool) -> exp.Select:
        """The groups over the fail or warn thresholds: their values (``wd_k0``.. compared exactly; ``named``:
        under the column names, with the failing and total rows, for people to read)."""
        metric = self._grouped_metric(dialect)
        failing = sqlbuild.case_count(self.condition(dialect))
        total = sqlbuild.count_star()
        over = metric.over_any(failing, total)
        if named:
            cols: list[exp.Expr] = [exp.alias_(sqlbuild.column(g), sqlbuild.ident(g), copy=False)
                                    for g in self.group_by]
            cols += [exp.alias_(failing.copy(), "failing_rows", copy=False),
                     exp.alias_(total.copy(), "total_rows", copy=False)]
        else:
            cols = [exp.alias_(k.copy(), f"wd_k{i}", copy=False) for i, k in enumerate(metric.exact_keys)]
        grouping: list[exp.Expr] = [sqlbuild.column(g) for g in self.group_by]
        grouping += [k.copy() for k, g in zip(metric.exact_keys, grouping, strict=True) if k.sql() != g.sql()]
        query = (exp.select(*cols, copy=False).from_(sqlbuild.table(self.table or ""), copy=False)
                 .where(self.filter(dialect), copy=False).group_by(*grouping, copy=False)
                 .having(over, copy=False))
        return query.order_by(exp.Ordered(this=exp.column("failing_rows"), desc=True), copy=False) if named else query

    def groups_sql(self, dialect: str) -> str:
        """The per-group query recorded in ``details.groups_sql``: each group over a threshold and its figures."""
        return self._over_groups(dialect, named=True).sql(dialect=dialect, copy=False)

    def _grouped_failing_rows(self, dialect: str, where: exp.Expr) -> exp.Expr:
        """The failing rows of the groups over a threshold (a NULL group joined as NULL: null-safe)."""
        metric = self._grouped_metric(dialect)
        row = "wd_row"
        on = sqlbuild.and_all(*[
            exp.NullSafeEQ(this=self.exact_column(g, dialect, row), expression=sqlbuild.column(f"wd_k{i}", "wd_over"))
            for i, g in enumerate(metric.group_by)])
        return (exp.select(exp.Column(this=exp.Star(), table=sqlbuild.ident(row)), copy=False)
                .from_(sqlbuild.table(self.table or "", alias=row), copy=False)
                .join(self._over_groups(dialect, named=False).subquery("wd_over", copy=False), on=on, copy=False)
                .where(where, copy=False))

    def sample_spec(self, dialect: str, m: Measurement, extra: tuple[list[str], list[tuple[Any, ...]]] | None,
                    rows: int) -> SampleSpec | None:
        if self.group_by:  # the rows of the groups over a threshold: a query of its own (sample_query)
            return None
        # the measurement gives the exact number of failing rows: the scanner batches this condition
        # with the table's other breaching ones into one statement
        return SampleSpec(condition=sqlbuild.and_all(self.condition(dialect), self.filter(dialect)),
                          expected=m.failing)
