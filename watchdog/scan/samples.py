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

On PostgreSQL the shared branch is ordered by the row address (``ORDER BY ctid``): it reads the whole table
anyway (its last failing row is anywhere), and ordered so the server may read it with its parallel workers
(a top-N merge of their rows) where a plain ``LIMIT`` is planned serially; and the rows are the first in the
table's physical order on every run, even while another scan of the table is under way (a synchronized scan
starts in the middle). A view has no ``ctid``: the scanner then reads it unordered.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from sqlglot import exp

from watchdog.scan import sqlbuild
from watchdog.scan.check_types.base import Aggregate

#: a condition with at most this many times the sample size of failing rows is read in the shared pass
SPARSE_FACTOR = 20
FLAG = "wd_sample_{}"


@dataclass
class TableSample:
    """The statement for one table's samples, and how to read its result."""

    sql: str
    max_rows: int
    conditions: int
    #: the shared branch is ordered by the row address (a view, which has none, fails it)
    ordered: bool = False

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


#: per dialect, the row address the shared branch of sparse conditions is ordered by (see the module)
ROW_ADDRESS = {"postgres": "ctid"}


def table_sample(table: str, conditions: list[tuple[exp.Expression, int | None]], rows: int,
                 dialect: str, *, ordered: bool = True) -> TableSample:
    """One statement returning up to ``rows`` rows per condition (``(condition, expected matches)``);
    ``ordered``: the sparse branch by the row address where the dialect has one (:data:`ROW_ADDRESS`)."""
    sparse = [j for j, (_, expected) in enumerate(conditions)
              if expected is not None and 0 < expected <= SPARSE_FACTOR * rows]
    dense = [j for j in range(len(conditions)) if j not in sparse]
    branches: list[exp.Select] = []
    max_rows = 0
    address = ROW_ADDRESS.get(dialect) if ordered and sparse else None
    if sparse:
        budget = sum(conditions[j][1] or 0 for j in sparse)
        flags = [_flag(conditions[j][0], j) if j in sparse else _constant(0, j) for j in range(len(conditions))]
        either: exp.Expr = exp.or_(*[exp.Paren(this=conditions[j][0].copy()) for j in sparse], copy=False)
        branch = _select(table, flags, either, budget)
        if address:
            branch = branch.order_by(exp.Column(this=exp.to_identifier(address, quoted=False),
                                                table=sqlbuild.ident("src")), copy=False)
        branches.append(branch)
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
    return TableSample(query.sql(dialect=dialect, copy=False), max_rows, len(conditions), bool(address))


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


# ---------------------------------------------------------------------------------------------------------------
# Keys in the counting pass (SQLite)
#
# Where the engine allows it, the table's one aggregate pass also returns, for each row-level condition, the keys of
# its failing rows when they are few: the pass evaluates each condition once per row, as a key-or-NULL column of a
# subquery, and counts it (``COUNT(k)``) and lists it (``GROUP_CONCAT(k)``, returned only when at most
# ``SPARSE_FACTOR`` times the sample size). The samples of those sparse conditions are then fetched by key, the
# first ``rows`` keys of each (the table's rowid order, the order a scan returns them), in one statement that reads
# no more than those rows. Dense conditions, and engines without a cheap way (see docs/suggest-and-samples.md),
# keep the shared sample pass above.

#: the dialects whose counting pass returns the failing rows' keys
KEYED_DIALECTS = frozenset({"sqlite", "strictsqlite"})
KEY_COLUMN = "wd_key_{}"
ROW_KEY = "wd_key"


@dataclass(frozen=True)
class KeyAggregate(Aggregate):
    """The keys of the rows failing one check's condition (``expression``), batched with its count ``count_key``."""

    count_key: str = ""


def key_metric(table: str, where: str | None, condition: exp.Expr, count_key: str) -> KeyAggregate:
    return KeyAggregate(table, where, "keys:" + count_key, condition, count_key=count_key)


def _rowid(alias: str | None = None) -> exp.Column:
    return exp.Column(this=exp.to_identifier("rowid", quoted=False), table=sqlbuild.ident(alias) if alias else None)


def keyed_select(table: str, condition: exp.Expr | None, chunk: list[Aggregate], rows: int,
                 render: Any) -> exp.Select | None:
    """The counting pass over ``chunk`` with its :class:`KeyAggregate` s answered from one evaluation of each
    condition; None when the chunk holds none (or one whose count is not in the chunk)."""
    keyed = {m.count_key: j for j, m in enumerate(chunk) if isinstance(m, KeyAggregate)}
    counts = {m.key for m in chunk if not isinstance(m, KeyAggregate)}
    if not keyed or not set(keyed) <= counts:
        return None
    inner: list[exp.Expr] = []
    names: set[str] = set()
    for m in chunk:
        if not isinstance(m, KeyAggregate) and m.key not in keyed:
            for col in m.expression.find_all(exp.Column):
                if col.table or not isinstance(col.this, exp.Identifier):
                    return None  # a qualified or odd reference: the plain pass
                names.add(col.name)
    inner += [exp.Column(this=sqlbuild.ident(n)) for n in sorted(names)]
    column_of: dict[str, str] = {}
    for count_key, j in keyed.items():
        name = KEY_COLUMN.format(j)
        column_of[count_key] = name
        # the key metric's condition is its own fresh tree (built for it alone): used as it is
        case = exp.Case(ifs=[exp.If(this=chunk[j].expression, true=_rowid())])
        inner.append(exp.alias_(case, sqlbuild.ident(name), copy=False))
    source = exp.select(*inner, copy=False).from_(sqlbuild.table(table), copy=False)
    if condition is not None:
        source = source.where(condition.copy(), copy=False)
    source = source.limit(-1, copy=False)  # keeps SQLite from flattening it: each condition is evaluated once
    columns: list[exp.Expr] = []
    for i, m in enumerate(chunk):
        if isinstance(m, KeyAggregate):
            name = column_of[m.count_key]

            def k(name: str = name) -> exp.Column:  # a fresh node each time: nothing copied
                return exp.Column(this=sqlbuild.ident(name))

            few = exp.LTE(this=exp.Count(this=k()), expression=exp.Literal.number(SPARSE_FACTOR * rows))
            # FILTER: the list's step runs on failing rows only (a NULL argument still costs a call per row)
            listed = exp.Filter(this=exp.GroupConcat(this=k()),
                                expression=exp.Where(this=exp.Not(this=exp.Is(this=k(), expression=exp.Null()))))
            value: exp.Expr = exp.Case(ifs=[exp.If(this=few, true=listed)])
        elif m.key in column_of:
            value = exp.Count(this=exp.Column(this=sqlbuild.ident(column_of[m.key])))
        else:
            value = render(m.expression.copy())
        columns.append(exp.alias_(value, f"m{i}", copy=False))
    return exp.select(*columns, copy=False).from_(source.subquery("wd_rows", copy=False), copy=False)


def parse_keys(value: Any) -> list[int] | None:
    """The keys a :class:`KeyAggregate` returned, ascending; None when it returned none (too many rows)."""
    if value is None:
        return None
    try:
        return sorted(int(k) for k in str(value).split(",") if k)
    except ValueError:
        return None


def by_key(table: str, keys: list[int], dialect: str) -> str:
    """The rows of ``table`` with these keys, each with its key last (as ``wd_key``)."""
    star = exp.Column(this=exp.Star(), table=sqlbuild.ident("src"))
    wanted = exp.In(this=_rowid("src"), expressions=[exp.Literal.number(k) for k in sorted(set(keys))])
    query = (exp.select(star, exp.alias_(_rowid("src"), ROW_KEY, copy=False), copy=False)
             .from_(sqlbuild.table(table, alias="src"), copy=False).where(wanted, copy=False))
    return query.sql(dialect=dialect, copy=False)
