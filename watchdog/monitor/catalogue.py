"""What the catalogue says about every table of some schemas: rows, writes, columns -- no table scan.

:func:`read_catalogue` runs a constant number of read statements per audit (two or three, whatever the number
of tables), each through the sandbox, and returns one :class:`TableStats` per base table (views are left out).
The statements per database are in :mod:`watchdog.monitor.engines`. Each row count says where it comes from
and whether it is exact: catalogue figures are estimates (PostgreSQL's statistics, InnoDB's ``table_rows``,
DuckDB's ``estimated_size``, SQLite's ``sqlite_stat1`` as of the last ANALYZE); ``exact_counts`` replaces them
by ``count(*)`` for the tables it names, one statement per schema.
"""

from __future__ import annotations

import fnmatch
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from sqlglot import exp

from watchdog.errors import QueryError
from watchdog.monitor import engines
from watchdog.monitor.stats import TableStats
from watchdog.scan import sqlbuild

if TYPE_CHECKING:
    from watchdog.monitor.config import MonitorConfig
    from watchdog.sandbox import Sandbox

#: the rows a catalogue statement may return (one per table, or per column)
CATALOGUE_MAX_ROWS = 2_000_000
#: exact counts: at most this many tables in one UNION ALL statement
COUNTS_PER_STATEMENT = 500


@dataclass
class Catalogue:
    tables: list[TableStats]
    statements: int
    #: the schemas read, as the database names them
    schemas: list[str]


class MonitorUnsupported(QueryError):
    """The database has no catalogue the monitors can read with the same meaning as the others."""


def read_catalogue(box: Sandbox, config: MonitorConfig) -> Catalogue:
    """Every base table of the configured schemas, with its statistics and columns (see the module)."""
    reader = engines.READERS.get(box.dialect)
    if reader is None:
        raise MonitorUnsupported(
            f"monitor: is not available on {box.dialect}: its catalogue has no table statistics a read statement "
            "can reach; watch these tables with row_count, freshness and schema_changes checks in a suite")
    counter = Counter(box)
    tables, schemas = reader(counter, config.schemas)
    tables = [t for t in tables if not _excluded(t, config.exclude)]
    exact = _exact_tables(tables, config.exact_counts)
    if exact:
        _count_rows(counter, exact)
    return Catalogue(sorted(tables, key=lambda t: t.name), counter.statements, schemas)


class Counter:
    """The sandbox, counting the statements sent (the cost the monitors promise is a count of statements)."""

    def __init__(self, box: Sandbox):
        self.box = box
        self.dialect = box.dialect
        self.statements = 0

    def rows(self, sql: str) -> list[tuple[Any, ...]]:
        self.statements += 1
        result = self.box.query(sql, max_rows=CATALOGUE_MAX_ROWS)
        if result.truncated:
            raise QueryError(f"the catalogue answer was cut at {CATALOGUE_MAX_ROWS} rows or the sandbox's byte limit; "
                             "narrow monitor: schemas or add exclude: patterns")
        return [tuple(r) for r in result.rows]


def _excluded(table: TableStats, patterns: list[str]) -> bool:
    return any(fnmatch.fnmatchcase(table.table, p) or fnmatch.fnmatchcase(table.name, p) for p in patterns)


def _exact_tables(tables: list[TableStats], wanted: bool | list[str]) -> list[TableStats]:
    if wanted is True:
        return list(tables)
    if not wanted:
        return []
    names = set(wanted)
    return [t for t in tables if t.table in names or t.name in names]


def _count_rows(counter: Counter, tables: list[TableStats]) -> None:
    """``count(*)`` of each table: one UNION ALL statement per schema (per COUNTS_PER_STATEMENT tables)."""
    by_schema: dict[str | None, list[TableStats]] = {}
    for t in tables:
        by_schema.setdefault(t.schema, []).append(t)
    for group in by_schema.values():
        for start in range(0, len(group), COUNTS_PER_STATEMENT):
            chunk = group[start:start + COUNTS_PER_STATEMENT]
            selects = [exp.select(exp.alias_(exp.Literal.number(i), "wd_i"), exp.alias_(sqlbuild.count_star(), "wd_n"))
                       .from_(exp.Table(this=sqlbuild.ident(t.table),
                                        db=sqlbuild.ident(t.schema) if t.schema is not None else None))
                       for i, t in enumerate(chunk)]
            query: exp.Expr = selects[0]
            for select in selects[1:]:
                query = exp.union(query, select, distinct=False, copy=False)  # copying each time is quadratic
            for i, n in counter.rows(query.sql(dialect=counter.dialect)):
                table = chunk[int(i)]
                table.extra["catalogue_rows"] = table.rows
                table.extra["catalogue_source"] = table.rows_source
                table.rows, table.rows_exact, table.rows_source = int(n), True, "count(*)"
