"""``accepted_values``: non-null values that are not in the list."""

from pydantic import Field
from sqlglot import exp

from watchdog.scan import sqlbuild
from watchdog.scan.check_types.base import ColumnOptions, register
from watchdog.scan.check_types.row_condition import RowConditionCheck


class AcceptedValuesOptions(ColumnOptions):
    values: list[str | int | float | bool] = Field(min_length=1)


@register
class AcceptedValues(RowConditionCheck):
    kind = "accepted_values"
    Options = AcceptedValuesOptions
    options: AcceptedValuesOptions

    def condition(self, dialect: str) -> exp.Expr:
        col = sqlbuild.column(self.column or "")
        values = self.options.values
        allowed = [sqlbuild.literal(v) for v in values]
        # text values are compared exactly (case-sensitive) on every database
        compared = sqlbuild.exact(col.copy(), dialect) if all(isinstance(v, str) for v in values) else col.copy()
        return exp.and_(
            exp.Not(this=exp.Is(this=col, expression=exp.Null())),
            exp.Not(this=exp.In(this=compared, expressions=allowed)),
        )
