"""``row_count``: ``observed`` is the number of rows (after ``where``); fails outside [min, max].

With neither bound given, the table must not be empty (min 1). On an incremental table, ``window: true``
counts the rows of the run's window instead (``row_count: {window: true, min: 1000}``: at least 1,000 new rows
per run); without it the whole table is counted.
"""

from __future__ import annotations

from typing import Any

from sqlglot import exp

from watchdog.scan import sqlbuild
from watchdog.scan.check_types.base import (
    Check,
    CheckOptions,
    Measurement,
    Metric,
    as_int,
    register,
)
from watchdog.scan.check_types.fields import option, options_class


@options_class
class RowCountOptions(CheckOptions):
    min: int | None = option(None, ge=0)
    max: int | None = option(None, ge=0)
    #: on an incremental table, count the run's window (its new rows) rather than the whole table
    window: bool = option(False)

    def __post_init__(self) -> None:
        if self.min is not None and self.max is not None and self.min > self.max:
            raise ValueError(f"min ({self.min}) is greater than max ({self.max})")


@register
class RowCount(Check):
    kind = "row_count"
    Options = RowCountOptions
    options: RowCountOptions
    short_form = None
    row_level = False

    def metrics(self, dialect: str) -> list[Metric]:
        self.filter(dialect)
        return [self.total_metric()]

    def measure(self, values: dict[Metric, Any], dialect: str) -> Measurement:
        count = as_int(values[self.total_metric()])
        return Measurement(total=count, observed=count)

    def breached(self, m: Measurement) -> bool:
        low = self.options.min if self.options.min is not None else (1 if self.options.max is None else None)
        high = self.options.max
        observed = int(m.observed or 0)
        return (low is not None and observed < low) or (high is not None and observed > high)

    def finding_sql(self, dialect: str) -> str:
        query = (exp.select(sqlbuild.count_star(), copy=False).from_(sqlbuild.table(self.table or ""), copy=False)
                 .where(self.filter(dialect), copy=False))
        return query.sql(dialect=dialect, copy=False)
