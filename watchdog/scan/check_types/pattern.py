"""``pattern``: non-null values in which the regex is not found (PostgreSQL ``~`` semantics).

Null markers (:mod:`.null_markers`) are skipped as NULLs are.

With ``match: false`` the regex must NOT be found: failing rows are non-null values in which it is.
The regex dialect, and how it is written for each database, is :mod:`watchdog.scan.regex`.
"""


from sqlglot import exp

from watchdog.scan import regex, sqlbuild
from watchdog.scan.check_types.base import register
from watchdog.scan.check_types.fields import option, options_class
from watchdog.scan.check_types.null_markers import MarkedColumnCheck, MarkedColumnOptions


def _compiles(value: str) -> str:
    try:
        regex.parse(value)
    except regex.RegexError as exc:
        raise ValueError(f"regex {value!r} is not a valid regular expression on every database: {exc}") from None
    return value


@options_class
class PatternOptions(MarkedColumnOptions):
    regex: str = option(min_length=1, after=_compiles)
    #: False: the regex must not be found (failing = values in which it is)
    match: bool = True


@register
class Pattern(MarkedColumnCheck):
    kind = "pattern"
    Options = PatternOptions
    options: PatternOptions

    def condition(self, dialect: str) -> exp.Expr:
        col = sqlbuild.column(self.column or "")
        matches = sqlbuild.regex_search(col, self.options.regex, dialect)
        bad = exp.Paren(this=matches) if not self.options.match else exp.Not(this=exp.Paren(this=matches))
        return exp.and_(self.present(dialect), bad, copy=False)
