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
        if self.min is not None and self.max is not None and _out_of_order(self.min, self.max):
            raise ValueError(f"min ({self.min}) is greater than max ({self.max})")
        return self


def _out_of_order(low: Bound, high: Bound) -> bool:
    """True when both bounds are of a comparable kind (two numbers, or two values of one type) and low > high."""
    numbers = (int, float)
    if isinstance(low, numbers) and isinstance(high, numbers):
        return low > high
    if type(low) is not type(high):
        return False
    if isinstance(low, str) and isinstance(high, str):
        return low > high
    if isinstance(low, date) and isinstance(high, date):  # both date or both datetime: the same type
        return low > high
    return False


def _bound(value: Bound) -> exp.Expr:
    if isinstance(value, (date, datetime)):
        return sqlbuild.literal(value.isoformat(sep=" ") if isinstance(value, datetime) else value.isoformat())
    return sqlbuild.literal(value)


@register
class Range(RowConditionCheck):
    kind = "range"
    Options = RangeOptions
    options: RangeOptions

    def condition(self, dialect: str) -> exp.Expr:
        col = sqlbuild.column(self.column or "")
        outside: list[exp.Expr] = []
        if self.options.min is not None:
            outside.append(exp.LT(this=col.copy(), expression=_bound(self.options.min)))
        if self.options.max is not None:
            outside.append(exp.GT(this=col.copy(), expression=_bound(self.options.max)))
        either = exp.Paren(this=exp.or_(*outside)) if len(outside) > 1 else outside[0]
        return exp.and_(exp.Not(this=exp.Is(this=col.copy(), expression=exp.Null())), either)
