"""Row-level checks that count rows matching a failing condition, batched into one SELECT."""

from __future__ import annotations

from typing import Any

from sqlglot import exp

from watchdog.scan import sqlbuild
from watchdog.scan.check_types.base import Aggregate, Check, Measurement, Metric, RowFlag, SampleSpec, as_int


class RowConditionCheck(Check):
    """failing = rows where :meth:`condition` holds; total = rows after ``where``."""

    def condition(self, dialect: str) -> exp.Expr:
        raise NotImplementedError

    def _failing_metric(self, dialect: str) -> Aggregate:
        return Aggregate.of(self.table or "", self.options.where, sqlbuild.case_count(self.condition(dialect)))

    def metrics(self, dialect: str) -> list[Metric]:
        self.filter(dialect)  # validate the where condition early
        return [self.total_metric(), self._failing_metric(dialect)]

    def measure(self, values: dict[Metric, Any], dialect: str) -> Measurement:
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
        return exp.select("*", copy=False).from_(sqlbuild.table(self.table or ""), copy=False).where(where, copy=False)

    def sample_spec(self, dialect: str, m: Measurement, extra: tuple[list[str], list[tuple[Any, ...]]] | None,
                    rows: int) -> SampleSpec:
        # the measurement gives the exact number of failing rows: the scanner batches this condition
        # with the table's other breaching ones into one statement
        return SampleSpec(condition=sqlbuild.and_all(self.condition(dialect), self.filter(dialect)),
                          expected=m.failing)
