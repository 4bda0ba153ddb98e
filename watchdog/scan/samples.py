"""Sample rows for the breaching checks of one table, in one statement.

Every breaching row-level check (and a ``unique`` check, through its first duplicated keys) says
which rows of its table fail and, from its measurement, exactly how many there are. All of a
table's checks are then answered by one statement that reads the table at most once:

* the *sparse* conditions (few failing rows: at most ``SPARSE_FACTOR`` times the sample size) share
  one branch, ``SELECT src.*, <a flag per condition> FROM t WHERE c1 OR c2 ... LIMIT <their known
  total>``; the scanner keeps the first ``rows`` rows flagged for each. However many checks there
  are and however few rows fail, that is a single scan, and it stops after the last failing row;
* each *dense* condition (many failing rows) gets its own ``... WHERE c LIMIT rows`` branch, which
  finds its rows after reading a small part of the table;

joined by ``UNION ALL``. Rows come in the table's scan order on every database, with the same
flags, so the samples are the same rows a ``WHERE c LIMIT rows`` per check would have returned.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from sqlglot import exp

from watchdog.scan import sqlbuild

#: a condition with at most this many times the sample size of failing rows is read in the shared pass
SPARSE_FACTOR = 20
FLAG = "wd_sample_{}"


@dataclass
class TableSample:
    """The statement for one table's samples, and how to read its result."""

    sql: str
    max_rows: int
    conditions: int

    def split(self, columns: list[str], rows: list[tuple[Any, ...]], per_check: int) -> list[list[dict[str, Any]]]:
        """The sample rows of each condition, in order (at most ``per_check`` each)."""
        n = self.conditions
        names = columns[:-n]
        found: list[list[dict[str, Any]]] = [[] for _ in range(n)]
        for row in rows:
            values = dict(zip(names, row[:-n], strict=False))
            for j, flag in enumerate(row[-n:]):
                if flag and int(flag) == 1 and len(found[j]) < per_check:
                    found[j].append(values)
        return found


def table_sample(table: str, conditions: list[tuple[exp.Expression, int | None]], rows: int,
                 dialect: str) -> TableSample:
    """One statement returning up to ``rows`` rows per condition (``(condition, expected matches)``)."""
    sparse = [j for j, (_, expected) in enumerate(conditions)
              if expected is not None and 0 < expected <= SPARSE_FACTOR * rows]
    dense = [j for j in range(len(conditions)) if j not in sparse]
    branches: list[exp.Select] = []
    max_rows = 0
    if sparse:
        budget = sum(conditions[j][1] or 0 for j in sparse)
        flags = [_flag(conditions[j][0], j) if j in sparse else _constant(0, j) for j in range(len(conditions))]
        either: exp.Expr = exp.or_(*[exp.Paren(this=conditions[j][0].copy()) for j in sparse], copy=False)
        branches.append(_select(table, flags, either, budget))
        max_rows += budget
    for j in dense:
        flags = [_constant(1 if i == j else 0, i) for i in range(len(conditions))]
        branches.append(_select(table, flags, conditions[j][0].copy(), rows))
        max_rows += rows
    if len(branches) == 1:
        query: exp.Expression = branches[0]
    else:
        wrapped = [exp.select("*", copy=False).from_(b.subquery(f"wd_branch{i}", copy=False), copy=False)
                   for i, b in enumerate(branches)]
        query = wrapped[0]
        for more in wrapped[1:]:
            query = exp.union(query, more, distinct=False, copy=False)
    return TableSample(query.sql(dialect=dialect, copy=False), max_rows, len(conditions))


def _select(table: str, flags: list[exp.Expr], where: exp.Expr, limit: int) -> exp.Select:
    star = exp.Column(this=exp.Star(), table=sqlbuild.ident("src"))
    # the conditions were copied (they are the callers'); the rest is fresh: built in place
    return (exp.select(star, *flags, copy=False).from_(sqlbuild.table(table, alias="src"), copy=False)
            .where(where, copy=False).limit(limit, copy=False))


def _flag(condition: exp.Expression, j: int) -> exp.Expr:
    case = exp.Case(ifs=[exp.If(this=condition.copy(), true=exp.Literal.number(1))], default=exp.Literal.number(0))
    return exp.alias_(case, FLAG.format(j), copy=False)


def _constant(value: int, j: int) -> exp.Expr:
    return exp.alias_(exp.Literal.number(value), FLAG.format(j), copy=False)
