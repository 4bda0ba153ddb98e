"""Null markers: text values that column checks count as NULL (``null_values:``, ``trim_blanks:``).

A table's options may list ``null_values`` (``['', '?', 'N/A']``); a check of ``not_null``, ``pattern``,
``range`` or ``accepted_values`` may give its own list instead (``null_values: []``: none). A marker is
compared exactly (case- and trailing-space-sensitive, as :func:`sqlbuild.exact` compares on every database);
with the table's ``trim_blanks: true`` a value of only blanks (ASCII space, tab, line feed, vertical tab, form
feed, carriage return) is ``''``, so a NULL when ``''`` is listed. Markers apply to text columns and to
columns without a declared type (SQLite); a numeric, date or boolean column cannot hold them, and is read
as before. ``not_null`` fails on a marker; the other checks skip it as they skip NULL. The test is part of
the check's condition, so it rides in the table's one aggregate statement.
"""

from __future__ import annotations

from typing import Any

from sqlglot import exp

from watchdog.scan import sqlbuild
from watchdog.scan.check_types.base import Check, ColumnOptions
from watchdog.scan.check_types.fields import option, options_class
from watchdog.scan.check_types.row_condition import RowConditionCheck
from watchdog.scan.table_options import null_values_of

#: a value of only blanks, in the regex dialect of :mod:`watchdog.scan.regex` (``\s``: ASCII 9-13 and 32)
BLANK = r"^\s+$"
#: the column kinds that can hold a marker ("unknown": the catalogue did not say, e.g. an untyped SQLite column)
MARKED_KINDS = ("text", "unknown")


def _markers(value: Any) -> Any:
    return None if value is None else list(null_values_of(value))


@options_class
class MarkedColumnOptions(ColumnOptions):
    """The options of a column check that reads null markers: its own ``null_values`` replace the table's."""

    null_values: list[str] | None = option(None, before=_markers)


class MarkedColumn(Check):
    """A check of one column whose NULLs include the table's (or the check's) null markers (its options have
    ``null_values``)."""

    def null_markers(self) -> tuple[str, ...]:
        own = self.options.null_values
        return tuple(own) if own is not None else tuple(self.table_options.get("null_values", ()))

    @property
    def needs_column_types(self) -> bool:  # type: ignore[override]  # markers apply to text columns only
        return bool(self.null_markers()) or type(self).reads_column_types or bool(self.group_by)

    #: the check compares by the column's type anyway (range, accepted_values)
    reads_column_types = False

    def missing(self, dialect: str) -> exp.Expr:
        """True where the column is NULL or holds a null marker (never NULL itself)."""
        col = sqlbuild.column(self.column or "")
        is_null: exp.Expr = exp.Is(this=col, expression=exp.Null())
        markers = self.null_markers()
        kind = self.column_kind(self.column)[0]
        if not markers or kind not in MARKED_KINDS:
            return is_null
        either: list[exp.Expr] = [is_null, exp.In(this=sqlbuild.exact(col.copy(), dialect, kind),
                                                  expressions=[exp.Literal.string(m) for m in markers])]
        if "" in markers and self.table_options.get("trim_blanks"):
            either.append(sqlbuild.regex_search(col.copy(), BLANK, dialect))
        return exp.Paren(this=exp.or_(*either, copy=False))

    def present(self, dialect: str) -> exp.Expr:
        """True where the column holds a value that is neither NULL nor a null marker."""
        return exp.Not(this=self.missing(dialect))


class MarkedColumnCheck(MarkedColumn, RowConditionCheck):
    """A row-level check of one column whose NULLs include the table's (or the check's) null markers."""

    options: MarkedColumnOptions
