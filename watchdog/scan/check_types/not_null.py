"""``not_null``: rows where the column IS NULL or holds a null marker (:mod:`.null_markers`)."""

from sqlglot import exp

from watchdog.scan.check_types.base import register
from watchdog.scan.check_types.null_markers import MarkedColumnCheck, MarkedColumnOptions


@register
class NotNull(MarkedColumnCheck):
    kind = "not_null"
    Options = MarkedColumnOptions
    values_are_offending = False  # the value is NULL

    def condition(self, dialect: str) -> exp.Expr:
        return self.missing(dialect)
