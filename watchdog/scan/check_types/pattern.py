"""``pattern``: non-null values in which the regex is not found (PostgreSQL ``~`` semantics).

With ``match: false`` the regex must NOT be found: failing rows are non-null values in which it is.
"""

import re

from pydantic import Field, field_validator
from sqlglot import exp

from watchdog.scan import sqlbuild
from watchdog.scan.check_types.base import ColumnOptions, register
from watchdog.scan.check_types.row_condition import RowConditionCheck


class PatternOptions(ColumnOptions):
    regex: str = Field(min_length=1)
    #: False: the regex must not be found (failing = values in which it is)
    match: bool = True

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
        bad = exp.Paren(this=matches) if not self.options.match else exp.Not(this=exp.Paren(this=matches))
        return exp.and_(exp.Not(this=exp.Is(this=col.copy(), expression=exp.Null())), bad)
