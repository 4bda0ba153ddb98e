"""``expression``: a condition every row must satisfy (dbt's ``expression_is_true``).

``expression: {condition: "discharge_date >= admit_date"}`` or the short form
``expression: "discharge_date >= admit_date"``. ``failing`` counts rows where the condition is
false. A row where it is NULL (``discharge_date`` not known yet) passes by default, as in dbt and
SQL's own ``CHECK`` constraints; ``nulls: fail`` counts it as failing instead. The condition is
parsed like ``where`` (one SQL condition, nothing else) and the statement it ends up in goes
through the sandbox like every other.
"""

from typing import Literal

from sqlglot import exp

from watchdog.scan import sqlbuild
from watchdog.scan.check_types.base import RowCheckOptions, register
from watchdog.scan.check_types.fields import option, options_class
from watchdog.scan.check_types.row_condition import RowConditionCheck


@options_class
class ExpressionOptions(RowCheckOptions):
    condition: str = option(min_length=1)
    nulls: Literal["pass", "fail"] = "pass"


@register
class Expression(RowConditionCheck):
    kind = "expression"
    Options = ExpressionOptions
    short_form = "condition"
    values_are_offending = False

    @property
    def name(self) -> str:
        if self.options.name:
            return str(self.options.name)
        text = " ".join(str(self.options.condition).split())
        return f"{self.table}.expression({text})"

    def condition(self, dialect: str) -> exp.Expr:
        holds = sqlbuild.condition(self.options.condition, dialect)
        if self.options.nulls == "fail":  # false or NULL: anything but true
            return exp.EQ(this=exp.Case(ifs=[exp.If(this=holds, true=exp.Literal.number(0))],
                                        default=exp.Literal.number(1)), expression=exp.Literal.number(1))
        return exp.Not(this=exp.Paren(this=holds))
