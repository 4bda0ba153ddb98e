"""Build SQL as sqlglot expression trees, never by pasting user text into strings.

Identifiers from suites are always quoted (their case is kept exactly as written);
values become literals that sqlglot escapes for the dialect; ``where`` conditions are
parsed as conditions, so they cannot close the statement or start another one.
"""

from __future__ import annotations

from typing import Any, overload

import sqlglot
from sqlglot import exp
from sqlglot.errors import ParseError, TokenError

from watchdog.errors import QueryRefused


def ident(name: str) -> exp.Identifier:
    return exp.to_identifier(name, quoted=True)


def table(name: str, alias: str | None = None) -> exp.Table:
    """``schema.table`` or ``table`` (split on dots), quoted."""
    parts = name.split(".")
    node = exp.Table(this=ident(parts[-1]), db=ident(parts[-2]) if len(parts) > 1 else None,
                     catalog=ident(parts[-3]) if len(parts) > 2 else None)
    if alias:
        node.set("alias", exp.TableAlias(this=ident(alias)))
    return node


def column(name: str, table_alias: str | None = None) -> exp.Column:
    return exp.Column(this=ident(name), table=ident(table_alias) if table_alias else None)


def literal(value: Any) -> exp.Expr:
    if value is None:
        return exp.null()
    if isinstance(value, bool):
        return exp.Boolean(this=value)
    if isinstance(value, (int, float)):
        return exp.Literal.number(value)
    return exp.Literal.string(str(value))


def condition(text: str, dialect: str) -> exp.Expr:
    """Parse a user ``where`` condition; raises QueryRefused when it is not one condition."""
    try:
        parsed = sqlglot.parse_one(text, read=dialect, into=exp.Condition)
    except (ParseError, TokenError) as exc:
        raise QueryRefused(f"invalid where condition {text!r}: {str(exc).splitlines()[0][:200]}") from None
    if parsed is None or not isinstance(parsed, exp.Condition):
        raise QueryRefused(f"invalid where condition {text!r}")
    return parsed


def case_count(cond: exp.Expr) -> exp.Expr:
    """``SUM(CASE WHEN cond THEN 1 ELSE 0 END)``: portable conditional count."""
    return exp.Sum(this=exp.Case(ifs=[exp.If(this=cond, true=exp.Literal.number(1))], default=exp.Literal.number(0)))


def count_star() -> exp.Expr:
    return exp.Count(this=exp.Star())


def regex_search(value: exp.Expr, pattern: str, dialect: str) -> exp.Expr:
    """True when ``pattern`` is found in ``value``: PostgreSQL ``~`` semantics, case-sensitive everywhere."""
    if dialect == "mysql":  # MySQL 8 and MariaDB both have REGEXP_INSTR; (?-i) forces case-sensitivity
        call = exp.Anonymous(this="REGEXP_INSTR", expressions=[value, exp.Literal.string("(?-i)" + pattern)])
        return exp.GT(this=call, expression=exp.Literal.number(0))
    if dialect == "postgres":
        value = exp.Cast(this=value, to=exp.DataType.build("text"))
    return exp.RegexpLike(this=value, expression=exp.Literal.string(pattern))


def exact(value: exp.Expr, dialect: str) -> exp.Expr:
    """``value`` compared byte for byte: case- and trailing-space-sensitive on every database.

    PostgreSQL and SQLite already compare text exactly; MySQL/MariaDB's default collations do
    not ('Active' = 'active', 'a ' = 'a'), so there the value is cast to BINARY.
    """
    if dialect == "mysql":
        return exp.Cast(this=value, to=exp.DataType.build("binary"))
    return value


@overload
def and_all(first: exp.Expr, /, *rest: exp.Expr | None) -> exp.Expr: ...
@overload
def and_all(*conds: exp.Expr | None) -> exp.Expr | None: ...


def and_all(*conds: exp.Expr | None) -> exp.Expr | None:
    """The conjunction of the conditions given (None ones skipped); None when there are none."""
    present = [c for c in conds if c is not None]
    if not present:
        return None
    return exp.and_(*present) if len(present) > 1 else present[0]


def render(node: exp.Expr, dialect: str) -> str:
    return node.sql(dialect=dialect)
