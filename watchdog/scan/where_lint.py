"""Warnings for ``where:`` conditions that read differently from one database to another.

A ``where:`` is raw database SQL, passed to the database of the scan as written (parsed in that
database's dialect). Most conditions mean the same everywhere; two quoting forms do not:

* ``"status" = 'active'``: on PostgreSQL and SQLite ``"status"`` is the column; on MySQL/MariaDB
  (without ANSI_QUOTES, which the sandbox keeps off) it is the *string* 'status', so the condition
  silently selects no row (or every row).
* ```status` = 'active'``: backticks are MySQL's (SQLite accepts them too); PostgreSQL rejects them.
"""

from __future__ import annotations

from sqlglot.dialects.dialect import Dialect
from sqlglot.errors import TokenError
from sqlglot.tokens import TokenType

from watchdog.scan.suites import Suite


def where_warnings(where: str) -> list[str]:
    """What in ``where`` would not mean the same on every database (empty: nothing)."""
    try:
        tokens = Dialect.get_or_raise("postgres").tokenize(where)
    except TokenError:
        return []
    out: list[str] = []
    for token in tokens:
        if token.token_type == TokenType.IDENTIFIER:
            out.append(f'"{token.text}" is a column on PostgreSQL and SQLite but the string \'{token.text}\' on '
                       "MySQL/MariaDB; write the column name without quotes if the scan may run there")
    if "`" in where:
        out.append("backticks quote a column on MySQL/MariaDB and SQLite only; PostgreSQL rejects them")
    return out


def portability_warnings(suite: Suite) -> list[str]:
    """``file:line: check: where: ...`` for every check of ``suite`` whose ``where`` reads differently."""
    lines = []
    for check in suite.checks:
        where = getattr(check.options, "where", None)
        if not where:
            continue
        location = f"{suite.path}:{check.line}" if check.line else str(suite.path)
        lines += [f"{location}: {check.name}: where: {text}" for text in where_warnings(where)]
    return lines
