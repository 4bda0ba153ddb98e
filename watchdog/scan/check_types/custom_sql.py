"""``custom_sql``: a query of the user's that returns one number, the failing rows."""

from __future__ import annotations

from decimal import Decimal
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

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
    description: str | None = None


@register
class CustomSql(Check):
    kind = "custom_sql"
    Options = CustomSqlOptions
    options: CustomSqlOptions
    short_form = None

    def _query(self) -> Standalone:
        sql = self.options.sql.strip().rstrip(";").strip()
        return Standalone(sql, sql)

    def metrics(self, dialect: str) -> list[Metric]:
        return [self._query()]

    def measure(self, values: dict[Metric, Any], dialect: str) -> Measurement:
        row = values[self._query()]
        value = row[0] if row else None
        if isinstance(value, Decimal) and value == int(value):
            value = int(value)
        if isinstance(value, bool) or not isinstance(value, (int, float, Decimal)) or len(row) != 1:
            raise QueryError(f"custom_sql must return one number (the failing rows); got {tuple(row)!r:.120}")
        return Measurement(failing=int(value))

    def finding_sql(self, dialect: str) -> str:
        return self._query().sql
