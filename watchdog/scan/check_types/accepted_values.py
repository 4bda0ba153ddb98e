"""``accepted_values``: non-null values that are not in the list (null markers, see :mod:`.null_markers`, are
skipped as NULLs are).

The values are compared with the column as its type, read from the catalogue, says:

* a text column: text values exactly (case- and trailing-space-sensitive on every database); numbers
  are compared as their text (``1`` -> ``'1'``, ``2.5`` -> ``'2.5'``); ``true``/``false`` are refused;
* a numeric column: numbers; ``true``/``false`` as 1/0; text values are refused;
* a boolean column: ``true``/``false`` (and 1/0); a date/time column: text values (ISO dates).

A refused combination makes the check's status ``error`` ("the types disagree") on every database.
When the catalogue does not say (e.g. an untyped SQLite column), the values are used as written.
"""

from __future__ import annotations

from typing import Any

from sqlglot import exp

from watchdog.scan import sqlbuild
from watchdog.scan.check_types.base import TypeMismatch, register, value_kind
from watchdog.scan.check_types.fields import option, options_class
from watchdog.scan.check_types.null_markers import MarkedColumnCheck, MarkedColumnOptions


@options_class
class AcceptedValuesOptions(MarkedColumnOptions):
    values: list[str | int | float | bool] = option(min_length=1)


#: column kind -> value kind -> how the value is compared (None: refused)
CONVERT: dict[str, dict[str, Any]] = {
    "text": {"text": str, "number": str, "boolean": None},
    "number": {"number": lambda v: v, "boolean": int, "text": None},
    "boolean": {"boolean": lambda v: v, "number": lambda v: bool(v) if v in (0, 1) else None, "text": None},
    "temporal": {"text": str, "number": None, "boolean": None},
}


@register
class AcceptedValues(MarkedColumnCheck):
    kind = "accepted_values"
    Options = AcceptedValuesOptions
    reads_column_types = True
    options: AcceptedValuesOptions

    def _compared_values(self) -> tuple[list[Any], bool]:
        """The values as the column's type compares them, and whether they are all text."""
        values = list(self.options.values)
        kind, declared = self.column_kind(self.column)
        rules = CONVERT.get(kind)
        if rules is None:  # unknown or other: as written
            return values, all(isinstance(v, str) for v in values)
        out = []
        for value in values:
            convert = rules.get(value_kind(value))
            converted = convert(value) if convert is not None else None
            if converted is None:
                raise TypeMismatch(
                    f"the types disagree: value {value!r} is {value_kind(value)} but column {self.column!r} is "
                    f"{declared} ({kind}); write the values as the column stores them")
            out.append(converted)
        return out, kind == "text"

    def condition(self, dialect: str) -> exp.Expr:
        col = sqlbuild.column(self.column or "")
        values, text = self._compared_values()
        kind, declared = self.column_kind(self.column)
        allowed = [sqlbuild.temporal_literal(v, declared, dialect) if kind == "temporal" and isinstance(v, str)
                   else sqlbuild.literal(v) for v in values]
        # text is compared exactly (case- and trailing-space-sensitive) on every database
        compared = sqlbuild.exact(col.copy(), dialect, kind) if text else col.copy()
        return exp.and_(
            self.present(dialect), exp.Not(this=exp.In(this=compared, expressions=allowed)), copy=False,
        )
