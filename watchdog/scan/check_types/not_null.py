"""``not_null``: rows where the column IS NULL."""

from sqlglot import exp

from watchdog.scan import sqlbuild
from watchdog.scan.check_types.base import ColumnOptions, register
from watchdog.scan.check_types.row_condition import RowConditionCheck


@register
class NotNull(RowConditionCheck):
    kind = "not_null"
    Options = ColumnOptions
    values_are_offending = False  # the value is NULL

    def condition(self, dialect: str) -> exp.Expr:
        return exp.Is(this=sqlbuild.column(self.column or ""), expression=exp.Null())
