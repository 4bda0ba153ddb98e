"""``custom_sql``: a query of the user's, in one of two forms.

* ``sql``: returns one number. By default a count of failing rows: it must be a whole number
  (``0.016`` is an error, never truncated to a pass) and the check fails above ``max_count``
  (default 0). With ``min`` and/or ``max`` the number is a measurement instead (``observed``, any
  real value) and the check fails outside [min, max].
* ``failing_rows_sql``: returns the failing rows themselves (dbt singular tests, Soda failed-rows
  checks). ``failing`` is their count, counted by the database (``SELECT COUNT(*) FROM (...)``),
  and the samples are its first rows.
"""

from __future__ import annotations

import math
from decimal import Decimal
from typing import Any

import sqlglot
from sqlglot import exp
from sqlglot.errors import ParseError, TokenError

from watchdog.errors import QueryError, QueryRefused
from watchdog.scan import sqlbuild
from watchdog.scan.check_types.base import (
    Check,
    Measurement,
    Metric,
    Severity,
    Standalone,
    as_int,
    register,
)
from watchdog.scan.check_types.fields import Options, option, options_class


@options_class
class CustomSqlOptions(Options):
    name: str = option(min_length=1)
    sql: str | None = option(None, min_length=1)
    failing_rows_sql: str | None = option(None, min_length=1)
    severity: Severity = "fail"
    max_count: int | None = option(None, ge=0)
    min: float | None = None
    max: float | None = None
    description: str | None = None
    owner: str | None = option(None, min_length=1)
    owners: list[str] | None = None
    tags: list[str] | None = None

    def __post_init__(self) -> None:
        if self.sql is None and self.failing_rows_sql is None:
            raise ValueError("missing required option 'sql' (a query returning the failing count) or "
                             "'failing_rows_sql' (a query returning the failing rows)")
        if self.sql is not None and self.failing_rows_sql is not None:
            raise ValueError("give one of 'sql' and 'failing_rows_sql', not both")
        bounded = self.min is not None or self.max is not None
        if bounded and self.failing_rows_sql is not None:
            raise ValueError("min/max bound a measurement returned by 'sql', not failing_rows_sql")
        if bounded and self.max_count is not None:
            raise ValueError("give max_count (the query counts failing rows) or min/max (the query returns a "
                             "measurement), not both")
        if self.min is not None and self.max is not None and self.min > self.max:
            raise ValueError(f"min ({self.min:g}) is greater than max ({self.max:g})")


def _clean(sql: str) -> str:
    return sql.strip().rstrip(";").strip()


@register
class CustomSql(Check):
    kind = "custom_sql"
    Options = CustomSqlOptions
    options: CustomSqlOptions
    short_form = None

    @property
    def is_metric(self) -> bool:
        return self.options.min is not None or self.options.max is not None

    def _query(self) -> Standalone:
        sql = _clean(self.options.sql or "")
        return Standalone(sql, sql)

    def _rows_query(self, dialect: str) -> exp.Query:
        text = _clean(self.options.failing_rows_sql or "")
        try:
            parsed = sqlglot.parse(text, read=dialect)
        except (ParseError, TokenError) as exc:
            raise QueryRefused(f"failing_rows_sql is not valid SQL: {str(exc).splitlines()[0][:200]}") from None
        query = parsed[0] if len(parsed) == 1 else None
        if not isinstance(query, exp.Query):
            raise QueryRefused("failing_rows_sql must be one SELECT returning the failing rows")
        return query

    def _count(self, dialect: str) -> Standalone:
        query = exp.select(sqlbuild.count_star(), copy=False).from_(
            self._rows_query(dialect).subquery("wd_failing", copy=False), copy=False)  # a fresh parse: no copies
        sql = query.sql(dialect=dialect, copy=False)
        return Standalone(sql, sql)

    def metrics(self, dialect: str) -> list[Metric]:
        if self.options.failing_rows_sql:
            return [self._count(dialect)]
        return [self._query()]

    def measure(self, values: dict[Metric, Any], dialect: str) -> Measurement:
        if self.options.failing_rows_sql:
            return Measurement(failing=as_int(values[self._count(dialect)][0]))
        row = values[self._query()]
        value = row[0] if row else None
        if isinstance(value, bool) or not isinstance(value, (int, float, Decimal)) or len(row) != 1:
            what = "one number" if self.is_metric else "one number (a whole count of failing rows)"
            raise QueryError(f"custom_sql must return {what}; got {tuple(row)!r:.120}")
        if self.is_metric:
            if not math.isfinite(value):
                raise QueryError(f"custom_sql returned {value}, not a finite number")
            return Measurement(observed=int(value) if value == int(value) else float(value))
        if not math.isfinite(value) or value != int(value):
            raise QueryError(f"custom_sql returned {value}, not a whole number of failing rows; for a "
                             "real-valued result give `min:` and/or `max:` bounds instead of max_count")
        if value < 0:
            raise QueryError(f"custom_sql returned {value}: a count of failing rows cannot be negative")
        return Measurement(failing=int(value))

    def breached(self, m: Measurement) -> bool:
        if not self.is_metric:
            return super().breached(m)
        low, high = self.options.min, self.options.max
        observed = float(m.observed or 0)
        return (low is not None and observed < low) or (high is not None and observed > high)

    def finding_sql(self, dialect: str) -> str:
        if self.options.failing_rows_sql:
            return _clean(self.options.failing_rows_sql)
        return self._query().sql

    def sample_query(self, dialect: str, rows: int) -> exp.Expr | None:
        if not self.options.failing_rows_sql:
            return None
        return (exp.select("*", copy=False).from_(self._rows_query(dialect).subquery("wd_failing", copy=False),
                                                  copy=False).limit(rows, copy=False))
