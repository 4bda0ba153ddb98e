"""``range``: non-null values outside [min, max] (inclusive; either bound may be left out)."""

from datetime import date, datetime

from pydantic import model_validator
from sqlglot import exp

from watchdog.scan import sqlbuild
from watchdog.scan.check_types.base import ColumnOptions, register
from watchdog.scan.check_types.row_condition import RowConditionCheck

Bound = int | float | str | date | datetime


class RangeOptions(ColumnOptions):
    min: Bound | None = None
    max: Bound | None = None

    @model_validator(mode="after")
    def _a_bound(self) -> "RangeOptions":
        if self.min is None and self.max is None:
            raise ValueError("give min, max or both")
        if self.min is not None and self.max is not None and _comparable(self.min, self.max) and self.min > self.max:
            raise ValueError(f"min ({self.min}) is greater than max ({self.max})")
        return self


def _comparable(a: Bound, b: Bound) -> bool:
    numbers = (int, float)
    return (isinstance(a, numbers) and isinstance(b, numbers)) or type(a) is type(b)


def _bound(value: Bound) -> exp.Expression:
    if isinstance(value, (date, datetime)):
        return sqlbuild.literal(value.isoformat(sep=" ") if isinstance(value, datetime) else value.isoformat())
    return sqlbuild.literal(value)


@register
class Range(RowConditionCheck):
    kind = "range"
    Options = RangeOptions

    def condition(self, dialect: str) -> exp.Expression:
        col = sqlbuild.column(self.column or "")
        outside: list[exp.Expression] = []
        if self.options.min is not None:  # type: ignore[attr-defined]
            outside.append(exp.LT(this=col.copy(), expression=_bound(self.options.min)))  # type: ignore[attr-defined]
        if self.options.max is not None:  # type: ignore[attr-defined]
            outside.append(exp.GT(this=col.copy(), expression=_bound(self.options.max)))  # type: ignore[attr-defined]
        either = exp.Paren(this=exp.or_(*outside)) if len(outside) > 1 else outside[0]
        return exp.and_(exp.Not(this=exp.Is(this=col.copy(), expression=exp.Null())), either)
