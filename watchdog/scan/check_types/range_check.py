"""``range``: non-null values outside [min, max] (inclusive; either bound may be left out).

The bounds must suit the column's type, read from the catalogue: numbers on a numeric column; dates or
text on a date/time or text column (text holding ISO dates compares as text). Anything else, such as
numeric bounds on a TEXT column, is the same ``error`` on every database ("the types disagree"),
never a comparison each database would make its own way.
"""

from datetime import date, datetime

from sqlglot import exp

from watchdog.scan import sqlbuild
from watchdog.scan.check_types.base import ColumnOptions, TypeMismatch, register, value_kind
from watchdog.scan.check_types.fields import options_class
from watchdog.scan.check_types.row_condition import RowConditionCheck

Bound = int | float | str | date | datetime


@options_class
class RangeOptions(ColumnOptions):
    min: Bound | None = None
    max: Bound | None = None

    def __post_init__(self) -> None:
        if self.min is None and self.max is None:
            raise ValueError("give min, max or both")
        if self.min is not None and self.max is not None and _out_of_order(self.min, self.max):
            raise ValueError(f"min ({self.min}) is greater than max ({self.max})")


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


def _bound(value: Bound, column: tuple[str, str], dialect: str) -> exp.Expr:
    if isinstance(value, (date, datetime)):
        value = value.isoformat(sep=" ") if isinstance(value, datetime) else value.isoformat()
    if isinstance(value, str) and column[0] == "temporal":
        return sqlbuild.temporal_literal(value, column[1], dialect)
    return sqlbuild.literal(value)


#: the column kinds each kind of bound can be compared with (unknown: the catalogue did not say)
COMPARABLE = {
    "number": {"number", "other", "unknown"},
    "temporal": {"temporal", "text", "other", "unknown"},  # on text: ISO text compared as text
    "text": {"text", "temporal", "other", "unknown"},
}


@register
class Range(RowConditionCheck):
    kind = "range"
    Options = RangeOptions
    needs_column_types = True
    options: RangeOptions

    def _check_types(self) -> None:
        kind, declared = self.column_kind(self.column)
        for which in ("min", "max"):
            bound = getattr(self.options, which)
            if bound is not None and kind not in COMPARABLE.get(value_kind(bound), set()):
                raise TypeMismatch(
                    f"the types disagree: {which} {bound!r} is {value_kind(bound)} but column {self.column!r} is "
                    f"{declared} ({kind}); give {_advice(kind)} bounds, or check a column of matching type")

    def condition(self, dialect: str) -> exp.Expr:
        self._check_types()
        col = sqlbuild.column(self.column or "")
        column = self.column_kind(self.column)
        outside: list[exp.Expr] = []
        if self.options.min is not None:
            outside.append(exp.LT(this=col.copy(), expression=_bound(self.options.min, column, dialect)))
        if self.options.max is not None:
            outside.append(exp.GT(this=col.copy(), expression=_bound(self.options.max, column, dialect)))
        either = exp.Paren(this=exp.or_(*outside, copy=False)) if len(outside) > 1 else outside[0]
        return exp.and_(exp.Not(this=exp.Is(this=col, expression=exp.Null())), either, copy=False)


def _advice(kind: str) -> str:
    return {"number": "numeric", "text": "text (quoted) or date", "temporal": "date or text",
            "boolean": "no"}.get(kind, "matching")
