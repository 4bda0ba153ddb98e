"""``pattern``: non-null values in which the regex is not found (PostgreSQL ``~`` semantics).

The regex dialect, and how it is written for each database, is :mod:`watchdog.scan.regex`.
"""

from pydantic import Field, field_validator
from sqlglot import exp

from watchdog.scan import regex, sqlbuild
from watchdog.scan.check_types.base import ColumnOptions, register
from watchdog.scan.check_types.row_condition import RowConditionCheck


class PatternOptions(ColumnOptions):
    regex: str = Field(min_length=1)

    @field_validator("regex")
    @classmethod
    def _compiles(cls, value: str) -> str:
        try:
            regex.parse(value)
        except regex.RegexError as exc:
            raise ValueError(f"regex {value!r} is not a valid regular expression on every database: {exc}") from None
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
