"""``accepted_values``: non-null values that are not in the list."""

from pydantic import Field
from sqlglot import exp

from watchdog import sqlbuild
from watchdog.check_types.base import ColumnOptions, register
from watchdog.check_types.row_condition import RowConditionCheck


class AcceptedValuesOptions(ColumnOptions):
    values: list[str | int | float | bool] = Field(min_length=1)


@register
class AcceptedValues(RowConditionCheck):
    kind = "accepted_values"
    Options = AcceptedValuesOptions

    def condition(self, dialect: str) -> exp.Expression:
        col = sqlbuild.column(self.column or "")
        allowed = [sqlbuild.literal(v) for v in self.options.values]  # type: ignore[attr-defined]
        return exp.and_(
            exp.Not(this=exp.Is(this=col.copy(), expression=exp.Null())),
            exp.Not(this=exp.In(this=col, expressions=allowed)),
        )
