"""Numbers stored as text (``range: {…, numeric_text: true}``): one rule of which text is a number.

A text value is a number when it is, in this order:

* optional blanks (ASCII space, tab, line feed, vertical tab, form feed, carriage return),
* an optional sign ``+`` or ``-``,
* digits with an optional decimal point and decimals (``12``, ``12.``, ``12.5``) or a point and decimals
  (``.5``) -- at most 100 digits on each side of the point,
* an optional exponent: ``e`` or ``E``, an optional sign and one or two digits (``1e3``, ``2.5E-07``),
* optional blanks.

Nothing else is: no thousands or locale separators (``1,000``, ``1 000``, ``1.000,5``), no currency signs or
units, no ``NaN``/``Infinity``, no hexadecimal, and not the empty text. The limits keep every number inside a
double's range, so no database can fail the statement on an overflow. The shape is tested with the regex dialect
of :mod:`watchdog.scan.regex` (the same test on every database); only then is the value cast to a double
(``CASE WHEN shape THEN … CAST(value AS DOUBLE) … END``), which SQLite, PostgreSQL, MySQL/MariaDB, DuckDB and
Spark SQL read alike for every text of that shape (``'-0'`` is zero). Other databases are refused: their casts
have not been checked against the rule.
"""

from __future__ import annotations

from sqlglot import exp

from watchdog.errors import QueryRefused
from watchdog.scan import sqlbuild

#: the rule above, in the regex dialect of :mod:`watchdog.scan.regex`
NUMBER = r"^\s*[+-]?([0-9]{1,100}(\.[0-9]{0,100})?|\.[0-9]{1,100})([eE][+-]?[0-9]{1,2})?\s*$"
#: the databases whose casts read every text of that shape as the same double
DIALECTS = ("sqlite", "strictsqlite", "postgres", "mysql", "duckdb", "spark")
#: the column kinds numeric text can be in ("unknown": the catalogue did not say, e.g. an untyped SQLite column)
TEXT_KINDS = ("text", "unknown")


def _supported(dialect: str) -> None:
    if dialect not in DIALECTS:
        raise QueryRefused(f"numeric_text runs on SQLite, PostgreSQL, MySQL/MariaDB, DuckDB and Spark SQL, not on "
                           f"{dialect}: the rule of which text is a number is not implemented there")


def is_number(value: exp.Expr, dialect: str) -> exp.Expr:
    """True where ``value`` (not NULL) is a number by the rule above."""
    _supported(dialect)
    return sqlbuild.regex_search(value, NUMBER, dialect)


def cast(value: exp.Expr) -> exp.Expr:
    """``value`` as a double: only ever evaluated under :func:`when_number` (it fails on other text)."""
    return exp.Cast(this=value, to=exp.DataType.build("double"))


def when_number(value: exp.Expr, dialect: str, then: exp.Expr, otherwise: exp.Expr) -> exp.Expr:
    """``then`` where ``value`` is a number by the rule above (so ``then`` may :func:`cast` it), else ``otherwise``:
    one shape test per row, and the cast never sees other text."""
    return exp.Case(ifs=[exp.If(this=is_number(value, dialect), true=then)], default=otherwise)
