"""``range``: non-null values outside [min, max] (inclusive; either bound may be left out).

The bounds must suit the column's type, read from the catalogue: numbers on a numeric column; dates or
text on a date/time or text column (text holding ISO dates compares as text). Anything else, such as
numeric bounds on a TEXT column, is the same ``error`` on every database ("the types disagree"),
never a comparison each database would make its own way.

``numeric_text: true`` compares numbers stored as text as numbers (:mod:`.numeric_text` says which text is a
number); a value that is not a number fails too, and ``details.not_numeric`` counts those. Null markers
(:mod:`.null_markers`) are skipped as NULLs are.
"""

from datetime import date, datetime
from typing import Any

from sqlglot import exp

from watchdog.scan import sqlbuild
from watchdog.scan.check_types import numeric_text
from watchdog.scan.check_types.base import Aggregate, Measurement, Metric, TypeMismatch, register, value_kind
from watchdog.scan.check_types.fields import options_class
from watchdog.scan.check_types.null_markers import MarkedColumnCheck, MarkedColumnOptions

Bound = int | float | str | date | datetime


@options_class
class RangeOptions(MarkedColumnOptions):
    min: Bound | None = None
    max: Bound | None = None
    #: the column holds numbers as text: compare them as numbers, and fail values that are not numbers
    numeric_text: bool = False

    def __post_init__(self) -> None:
        super().__post_init__()
        if self.min is None and self.max is None:
            raise ValueError("give min, max or both")
        if self.numeric_text:
            for which in ("min", "max"):
                bound = getattr(self, which)
                if bound is not None and value_kind(bound) != "number":
                    raise ValueError(f"numeric_text: true compares numbers, but {which} is {bound!r}; "
                                     f"write {which} as a number (unquoted)")
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
class Range(MarkedColumnCheck):
    kind = "range"
    Options = RangeOptions
    reads_column_types = True
    options: RangeOptions

    def _check_types(self) -> None:
        kind, declared = self.column_kind(self.column)
        if self.options.numeric_text:
            if kind not in numeric_text.TEXT_KINDS:
                raise TypeMismatch(f"numeric_text: true reads numbers stored as text, but column {self.column!r} "
                                   f"is {declared} ({kind}); drop numeric_text to compare its values as they are")
            return
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
        value = numeric_text.cast(col.copy()) if self.options.numeric_text else col
        outside: list[exp.Expr] = []
        if self.options.min is not None:
            outside.append(exp.LT(this=value.copy(), expression=_bound(self.options.min, column, dialect)))
        if self.options.max is not None:
            outside.append(exp.GT(this=value.copy(), expression=_bound(self.options.max, column, dialect)))
        either = exp.Paren(this=exp.or_(*outside, copy=False)) if len(outside) > 1 else outside[0]
        if self.options.numeric_text:  # a number outside, or not a number
            either = numeric_text.when_number(col.copy(), dialect, either, exp.true())
        return exp.and_(self.present(dialect), either, copy=False)

    def _not_numeric_metric(self, dialect: str) -> Aggregate:
        col = sqlbuild.column(self.column or "")
        bad = exp.and_(self.present(dialect), exp.Not(this=numeric_text.is_number(col, dialect)), copy=False)
        return Aggregate.of(self.table or "", self.options.where, sqlbuild.case_count(bad))

    def metrics(self, dialect: str) -> list[Metric]:
        metrics = super().metrics(dialect)
        return [*metrics, self._not_numeric_metric(dialect)] if self.options.numeric_text else metrics

    def measure(self, values: dict[Metric, Any], dialect: str) -> Measurement:
        m = super().measure(values, dialect)
        if self.options.numeric_text:
            m.details["not_numeric"] = int(values[self._not_numeric_metric(dialect)] or 0)
        return m


def _advice(kind: str) -> str:
    return {"number": "numeric", "text": "text (quoted) or date", "temporal": "date or text",
            "boolean": "no"}.get(kind, "matching")
