"""What a text column's values are made of, beyond its shapes: blanks, null markers and numbers stored as text.

The profile's first pass (one aggregate statement per table) counts, per text column, the rows that are blank
('' or only spaces) and the rows equal to one of the null markers (compared exactly), and a cheap gate for
numbers: the first character is one a number by the numeric-text rule (:mod:`watchdog.scan.check_types.numeric_text`)
can start with. Its second pass, the statement that counts the shapes, then adds only for the columns that need it:

* where the number gate let a value through: how many values are numbers by that rule (its own SQL, run only on
  the rows the gate passes), and the smallest and largest of them, read as doubles as ``range … numeric_text``
  reads them;
* where a marker was found: the rows holding each marker, and whether each marker is itself a number;
* where a blank was found: the rows holding exactly ''.
"""

from __future__ import annotations

from typing import Any

from sqlglot import exp

from watchdog.profile.shapes import GATES, SHAPES
from watchdog.scan import sqlbuild
from watchdog.scan.check_types import numeric_text

#: the characters a number by the numeric-text rule can start with: a blank, a sign, a point or a digit
NUMBER_START = " \t\n\x0b\x0c\r+-.0123456789"


def as_text(col: exp.Expr, dialect: str) -> exp.Expr:
    return exp.Cast(this=col, to=exp.DataType.build("text")) if dialect == "postgres" else col


def first_char_in(ref: exp.Expr, chars: str, dialect: str) -> exp.Expr:
    head = exp.Substring(this=as_text(ref.copy(), dialect), start=exp.Literal.number(1), length=exp.Literal.number(1))
    return exp.In(this=head, expressions=[exp.Literal.string(c) for c in chars])


def gate(ref: exp.Expr, name: str, dialect: str,
         gates: dict[str, tuple[tuple[str, ...], str | None]] = GATES) -> exp.Expr:
    """A cheap necessary condition (see ``shapes.GATES``): a first-character set, then LIKE patterns."""
    likes, first = gates[name]
    value = as_text(ref.copy(), dialect)
    conds: list[exp.Expr] = []
    if first is not None:  # tested first: cheaper than a LIKE
        conds.append(first_char_in(ref, first, dialect))
    if likes:
        conds.append(exp.Paren(this=exp.or_(*[exp.Like(this=value.copy(), expression=exp.Literal.string(p))
                                              for p in likes])))
    return exp.and_(*conds) if len(conds) > 1 else conds[0]


def blank_markers(markers: tuple[str, ...]) -> tuple[str, ...]:
    """The markers that are themselves blank ('' or only spaces): counted among the blanks, not as markers."""
    return tuple(m for m in markers if m.strip(" ") == "")


def counted_markers(markers: tuple[str, ...]) -> tuple[str, ...]:
    """The markers counted as markers (each once, in the order given; blank ones are blanks)."""
    return tuple(dict.fromkeys(m for m in markers if m.strip(" ") != ""))


def first_pass(ref: exp.Expr, dialect: str, markers: tuple[str, ...],
               number_gate: bool = True) -> list[tuple[str, exp.Expr]]:
    """Rows blank ('' or only spaces), rows equal to a marker (exactly, on every database) and, with
    ``number_gate``, rows the number gate lets through."""
    trimmed = sqlbuild.exact(exp.Trim(this=ref.copy()), dialect, "text")
    out = [("blank", sqlbuild.case_count(exp.EQ(this=trimmed, expression=exp.Literal.string(""))))]
    if number_gate:
        out.append(("gate:number", sqlbuild.case_count(first_char_in(ref, NUMBER_START, dialect))))
    listed = counted_markers(markers)
    if listed:
        out.append(("markers", sqlbuild.case_count(_is_marker(ref, listed, dialect))))
    return out


def _is_marker(ref: exp.Expr, markers: tuple[str, ...], dialect: str) -> exp.Expr:
    listed = [exp.Literal.string(m) for m in markers]
    return exp.In(this=sqlbuild.exact(ref.copy(), dialect, "text"), expressions=listed)


def _when(cond: exp.Expr, then: exp.Expr, otherwise: exp.Expr | None = None) -> exp.Expr:
    return exp.Case(ifs=[exp.If(this=cond, true=then)], default=otherwise)


def number_metrics(ref: exp.Expr, dialect: str) -> list[tuple[str, exp.Expr]]:
    """Values that are numbers by the numeric-text rule, and their extremes: the rule's regex runs only on rows the
    gate lets through, and the cast only on values the rule accepts."""
    number_gate = first_char_in(ref, NUMBER_START, dialect)
    one, zero = exp.Literal.number(1), exp.Literal.number(0)
    count = _when(number_gate, numeric_text.when_number(ref.copy(), dialect, one, zero), zero.copy())
    value = _when(number_gate.copy(), numeric_text.when_number(ref.copy(), dialect, numeric_text.cast(ref.copy()),
                                                               exp.null()))
    return [("numbers", exp.Sum(this=count)), ("number_min", exp.Min(this=value)),
            ("number_max", exp.Max(this=value.copy()))]


def marker_metrics(ref: exp.Expr, dialect: str, markers: tuple[str, ...]) -> list[tuple[str, exp.Expr]]:
    """The rows holding each marker."""
    text = sqlbuild.exact(ref.copy(), dialect, "text")
    return [(f"marker:{m}", sqlbuild.case_count(exp.EQ(this=text.copy(), expression=exp.Literal.string(m))))
            for m in counted_markers(markers)]


def empty_metric(ref: exp.Expr, dialect: str) -> tuple[str, exp.Expr]:
    """The rows holding exactly '' (the other blanks hold only spaces)."""
    text = sqlbuild.exact(ref.copy(), dialect, "text")
    return "empty", sqlbuild.case_count(exp.EQ(this=text, expression=exp.Literal.string("")))


def shape_metric(ref: exp.Expr, shape: str, dialect: str) -> exp.Expr:
    """Values of ``shape``: its regex runs only on the rows its gate lets through (the count is the same as over
    every row: every value the regex can match passes the gate)."""
    one, zero = exp.Literal.number(1), exp.Literal.number(0)
    match = _when(sqlbuild.regex_search(ref.copy(), SHAPES[shape], dialect), one, zero)
    return exp.Sum(this=_when(gate(ref, shape, dialect), match, zero.copy()))


def markers_that_are_numbers(markers: tuple[str, ...], dialect: str) -> list[tuple[str, exp.Expr]]:
    """Constant expressions (no column): whether each marker is a number by the numeric-text rule."""
    one, zero = exp.Literal.number(1), exp.Literal.number(0)
    return [(f"is_number:{m}", _when(numeric_text.is_number(exp.Literal.string(m), dialect), one, zero))
            for m in counted_markers(markers)]


def plain_number(value: Any) -> float | None:
    return None if value is None else float(value)
