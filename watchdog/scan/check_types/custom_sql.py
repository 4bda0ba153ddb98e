"""``custom_sql``: a query of the user's that returns one number.

By default the number is a count of failing rows: it must be a whole number (``0.016`` is an
error, never truncated to a pass) and the check fails above ``max_count`` (default 0). With
``min`` and/or ``max`` the number is a measurement instead (``observed``, any real value) and
the check fails outside [min, max].
"""

from __future__ import annotations

import math
from decimal import Decimal
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, model_validator

from watchdog.errors import QueryError
from watchdog.scan.check_types.base import (
    Check,
    Measurement,
    Metric,
    Severity,
    Standalone,
    register,
)


class CustomSqlOptions(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    name: str = Field(min_length=1)
    sql: str = Field(min_length=1)
    severity: Severity = "fail"
    max_count: int | None = Field(default=None, ge=0)
    min: float | None = None
    max: float | None = None
    description: str | None = None

    @model_validator(mode="after")
    def _one_form(self) -> CustomSqlOptions:
        bounded = self.min is not None or self.max is not None
        if bounded and self.max_count is not None:
            raise ValueError("give max_count (the query counts failing rows) or min/max (the query returns a "
                             "measurement), not both")
        if self.min is not None and self.max is not None and self.min > self.max:
            raise ValueError(f"min ({self.min:g}) is greater than max ({self.max:g})")
        return self


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
        sql = self.options.sql.strip().rstrip(";").strip()
        return Standalone(sql, sql)

    def metrics(self, dialect: str) -> list[Metric]:
        return [self._query()]

    def measure(self, values: dict[Metric, Any], dialect: str) -> Measurement:
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
        return self._query().sql
