"""Build SQL as sqlglot expression trees, never by pasting user text into strings.

Identifiers from suites are always quoted (their case is kept exactly as written);
values become literals that sqlglot escapes for the dialect; ``where`` conditions are
parsed as conditions, so they cannot close the statement or start another one.
"""

from __future__ import annotations

from typing import Any, overload

import sqlglot
from sqlglot import exp
from sqlglot.dialects.dialect import Dialect
from sqlglot.errors import ParseError, TokenError

from watchdog.errors import QueryRefused
from watchdog.sandbox.spark_policy import SPARK_DIALECTS, vet_spark_tokens
from watchdog.scan import regex, regex_warehouse


def ident(name: str) -> exp.Identifier:
    return exp.to_identifier(name, quoted=True)


def split_name(name: str, max_parts: int = 3) -> list[str]:
    """``table``, ``schema.table`` or ``catalog.schema.table``, split on dots outside double quotes.

    A name that itself contains a dot is written in double quotes: ``'"daily.events"'`` or
    ``'analytics."daily.events"'`` (``""`` inside quotes is one ``"``). Raises ValueError saying
    what is wrong.
    """
    parts: list[str] = []
    current, quoted, was_quoted, i = "", False, False, 0
    while i < len(name):
        char = name[i]
        if quoted:
            if char == '"' and name[i + 1:i + 2] == '"':
                current += '"'
                i += 1
            elif char == '"':
                quoted = False
            else:
                current += char
        elif char == '"' and not current and not was_quoted:
            quoted = was_quoted = True
        elif char == ".":
            parts.append(_name_part(name, current, was_quoted))
            current, was_quoted = "", False
        elif was_quoted:
            raise ValueError(f"unexpected {char!r} after a closing double quote in {name!r}")
        else:
            current += char
        i += 1
    if quoted:
        raise ValueError(f"unclosed double quote in {name!r}")
    parts.append(_name_part(name, current, was_quoted))
    if len(parts) > max_parts:
        most = "catalog.schema.table" + (".column" if max_parts > 3 else "")
        raise ValueError(f"{name!r} has {len(parts)} dotted parts (at most {most}); "
                         'write a name that contains a dot in double quotes, e.g. \'"daily.events"\'')
    return parts


def join_name(parts: list[str]) -> str:
    """The inverse of :func:`split_name`: parts that hold a dot or a double quote are quoted."""
    return ".".join('"' + p.replace('"', '""') + '"' if ("." in p or '"' in p) else p for p in parts)


def _name_part(name: str, part: str, quoted: bool) -> str:
    if not part.strip() and not quoted:
        raise ValueError(f"empty part in {name!r}; write a name that contains a dot in double quotes, "
                         'e.g. \'"daily.events"\'')
    if not part:
        raise ValueError(f"empty quoted name in {name!r}")
    return part


def table(name: str, alias: str | None = None) -> exp.Table:
    """``schema.table`` or ``table`` (see :func:`split_name`), quoted."""
    parts = split_name(name)
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
        if dialect in SPARK_DIALECTS:  # 'o''hare' is 'ohare' to Spark: refused, as in any Spark statement
            vet_spark_tokens(Dialect.get_or_raise(dialect).tokenize(text))
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
    """True when ``pattern`` is found in ``value``: the regex dialect of :mod:`watchdog.scan.regex`
    (PostgreSQL ARE, case-sensitive), written out for the database so it means the same on each."""
    if dialect == "mysql":  # MySQL 8 and MariaDB both have REGEXP_INSTR; (?-i) forces case-sensitivity
        text = "(?-i)" + regex.translate(pattern, "pcre")
        call = exp.Anonymous(this="REGEXP_INSTR", expressions=[value, exp.Literal.string(text)])
        return exp.GT(this=call, expression=exp.Literal.number(0))
    if dialect == "postgres":
        value = exp.Cast(this=value, to=exp.DataType.build("text"))
        return exp.RegexpLike(this=value, expression=exp.Literal.string(regex.translate(pattern, "postgres")))
    if dialect == "duckdb":  # RE2 as on BigQuery (no lookaround: \m, \M and lookaheads are refused), searched
        return regex_warehouse.search(value, pattern, dialect)
    if dialect in ("sqlite", "strictsqlite"):  # the sandbox's REGEXP function is Python's re
        return exp.RegexpLike(this=value, expression=exp.Literal.string(regex.translate(pattern, "python")))
    if dialect == "spark":  # RLIKE is java.util.regex's find(), as on Databricks
        value = exp.Cast(this=value, to=exp.DataType.build("text"))
        return exp.RegexpLike(this=value, expression=exp.Literal.string(regex.translate(pattern, "java")))
    if dialect in regex_warehouse.ENGINE:  # Trino, Snowflake, BigQuery, Databricks: generated SQL only
        return regex_warehouse.search(value, pattern, dialect)
    raise QueryRefused(f"pattern checks run on SQLite, PostgreSQL, MySQL/MariaDB, DuckDB, Spark SQL and the "
                       f"warehouses, not on {dialect}")


#: a collation that compares by code point (case- and trailing-space-sensitive), per warehouse
BINARY_COLLATION = {"snowflake": "utf8", "bigquery": "binary", "databricks": "UTF8_BINARY"}


def exact(value: exp.Expr, dialect: str, kind: str = "unknown") -> exp.Expr:
    """``value`` compared byte for byte: case- and trailing-space-sensitive on every database.

    PostgreSQL and SQLite already compare text exactly; MySQL/MariaDB's default collations do
    not ('Active' = 'active', 'a ' = 'a'), so there the value is cast to BINARY. Trino has no
    collations (varchar compares by code point). Snowflake, BigQuery and Databricks compare by code
    point unless a column is declared with a collation: a column known to be text (``kind``, from the
    catalogue) is given the binary collation explicitly (COLLATE is an error on other types).
    """
    if dialect == "mysql":
        return exp.Cast(this=value, to=exp.DataType.build("binary"))
    if kind == "text" and dialect in BINARY_COLLATION:
        name = BINARY_COLLATION[dialect]
        if dialect == "databricks":  # DBR 16.1+: an identifier, `x COLLATE UTF8_BINARY`
            return exp.Collate(this=value, expression=exp.Var(this=name))
        return exp.Anonymous(this="COLLATE", expressions=[value, exp.Literal.string(name)])
    return value


def temporal_literal(text: str, declared: str, dialect: str) -> exp.Expr:
    """An ISO date/time compared with a date/time column: Trino compares text with neither, so it is cast
    there (to DATE for a DATE column, else TIMESTAMP); elsewhere the text itself (the database converts it)."""
    value = exp.Literal.string(text)
    if dialect != "trino":
        return value
    return exp.Cast(this=value, to=exp.DataType.build("date" if declared.lower().startswith("date") else "timestamp"))


@overload
def and_all(first: exp.Expr, /, *rest: exp.Expr | None) -> exp.Expr: ...
@overload
def and_all(*conds: exp.Expr | None) -> exp.Expr | None: ...


def and_all(*conds: exp.Expr | None) -> exp.Expr | None:
    """The conjunction of the conditions given (None ones skipped); None when there are none.

    The conditions become part of the result as they are (not copied): pass fresh nodes."""
    present = [c for c in conds if c is not None]
    if not present:
        return None
    return exp.and_(*present, copy=False) if len(present) > 1 else present[0]


def render(node: exp.Expr, dialect: str) -> str:
    return node.sql(dialect=dialect)
