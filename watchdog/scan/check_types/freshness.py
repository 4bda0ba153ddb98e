"""``freshness``: ``observed`` is the age in seconds of the newest value of the column.

Fails when that age exceeds ``max_age`` (units s, m, h, d) or when there is no value at all.
Timestamps without a time zone are taken as UTC; numbers as Unix epoch seconds.
"""

from __future__ import annotations

import re
from datetime import UTC, date, datetime
from typing import Any

from sqlglot import exp

from watchdog.errors import QueryError
from watchdog.scan import sqlbuild
from watchdog.scan.check_types.base import (
    Aggregate,
    Check,
    CheckOptions,
    Measurement,
    Metric,
    as_int,
    register,
)
from watchdog.scan.check_types.fields import option, options_class

DURATION = re.compile(r"^\s*(\d+(?:\.\d+)?)\s*([smhd])\s*$")
UNIT_SECONDS = {"s": 1, "m": 60, "h": 3600, "d": 86400}


def parse_duration(text: str) -> float:
    """``"30d"`` -> 2592000.0 seconds."""
    match = DURATION.match(str(text))
    if not match:
        raise ValueError(f"{text!r} is not a duration like 30s, 15m, 6h or 30d")
    return float(match.group(1)) * UNIT_SECONDS[match.group(2)]


def to_utc(value: Any) -> datetime:
    """A database value (datetime, date, ISO text, epoch number) as an aware UTC datetime."""
    if isinstance(value, datetime):
        return value.replace(tzinfo=UTC) if value.tzinfo is None else value.astimezone(UTC)
    if isinstance(value, date):
        return datetime(value.year, value.month, value.day, tzinfo=UTC)
    if isinstance(value, (int, float)):
        return datetime.fromtimestamp(float(value), tz=UTC)
    if isinstance(value, str):
        try:
            return to_utc(datetime.fromisoformat(value.strip().replace("Z", "+00:00")))
        except ValueError:
            pass
    raise QueryError(f"cannot read {str(value)[:60]!r} as a timestamp")


def _is_duration(value: Any) -> str | None:
    if value is None:
        return None
    parse_duration(str(value))
    return str(value)


@options_class
class FreshnessOptions(CheckOptions):
    column: str = option(min_length=1)
    max_age: str | None = option(None, before=_is_duration)  # required unless ``anomaly`` judges the age instead

    def __post_init__(self) -> None:
        if self.max_age is None and self.anomaly is None:
            raise ValueError("missing required option 'max_age' (or `anomaly:` to learn the usual age)")


@register
class Freshness(Check):
    kind = "freshness"
    Options = FreshnessOptions
    options: FreshnessOptions
    row_level = False

    def _newest(self) -> Aggregate:
        return Aggregate.of(self.table or "", self.options.where, exp.Max(this=sqlbuild.column(self.column or "")))

    def metrics(self, dialect: str) -> list[Metric]:
        self.filter(dialect)
        return [self.total_metric(), self._newest()]

    def measure(self, values: dict[Metric, Any], dialect: str) -> Measurement:
        newest = values[self._newest()]
        total = as_int(values[self.total_metric()])
        if newest is None:
            return Measurement(total=total, details={"newest": None})
        stamp = to_utc(newest)
        age = round((datetime.now(UTC) - stamp).total_seconds())
        return Measurement(total=total, observed=age, details={"newest": stamp.isoformat()})

    def breached(self, m: Measurement) -> bool:
        max_age = self.options.max_age
        return m.observed is None or (max_age is not None and m.observed > parse_duration(max_age))

    def finding_sql(self, dialect: str) -> str:
        col = sqlbuild.column(self.column or "")
        query = (exp.select(exp.alias_(exp.Max(this=col), "newest", copy=False), copy=False)
                 .from_(sqlbuild.table(self.table or ""), copy=False))
        return query.where(self.filter(dialect), copy=False).sql(dialect=dialect, copy=False)
