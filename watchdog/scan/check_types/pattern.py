"""``pattern``: non-null values in which the regex is not found (PostgreSQL ``~`` semantics)."""

import re

from pydantic import Field, field_validator
from sqlglot import exp

from watchdog.scan import sqlbuild
from watchdog.scan.check_types.base import ColumnOptions, register
from watchdog.scan.check_types.row_condition import RowConditionCheck


class PatternOptions(ColumnOptions):
    regex: str = Field(min_length=1)

    @field_validator("regex")
    @classmethod
    def _compiles(cls, value: str) -> str:
        try:
            re.compile(value)
        except re.error as exc:
            raise ValueError(f"not a valid regular expression: {exc}") from None
        return value


@register
class Pattern(RowConditionCheck):
    kind = "pattern"
    Options = PatternOptions
    options: PatternOptions

    def condition(self, dialect: str) -> exp.Expr:
        col = sqlbuild.column(self.column or "")
        matches = sqlbuild.regex_search(col, self.options.regex, dialect)
        return exp.and_(exp.Not(this=exp.Is(this=col.copy(), expression=exp.Null())),
                        exp.Not(this=exp.Paren(this=matches)))
