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
import re
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from sqlglot import exp

from watchdog.errors import QueryError
from watchdog.scan import sqlbuild

if TYPE_CHECKING:
    from watchdog.monitor.config import MonitorConfig
    from watchdog.sandbox import Sandbox

#: the rows a catalogue statement may return (one per table, or per column)
CATALOGUE_MAX_ROWS = 2_000_000
#: exact counts: at most this many tables in one UNION ALL statement
COUNTS_PER_STATEMENT = 500


@dataclass
class TableStats:
    schema: str | None
    table: str
    rows: int | None = None
    rows_exact: bool = False
    #: where ``rows`` comes from (``pg_stat_user_tables.n_live_tup``, ``count(*)``...)
    rows_source: str = "none"
    columns: list[dict[str, str]] = field(default_factory=list)
    #: a figure that moves with every write (PostgreSQL: inserted + updated + deleted tuples), if the database has one
    write_counter: int | None = None
    #: the catalogue's own time of the last write (MySQL/MariaDB ``update_time``), as an age in seconds
    modified_age_s: float | None = None
    #: what else the catalogue said (reltuples, inserted/updated/deleted, last analyze, engine...)
    extra: dict[str, Any] = field(default_factory=dict)

    @property
    def name(self) -> str:
        """``schema.table`` (the table alone on SQLite), as findings name it."""
        return sqlbuild.join_name([self.schema, self.table] if self.schema is not None else [self.table])


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
    from watchdog.monitor import engines

    reader = engines.READERS.get(box.dialect)
    if reader is None:
        raise MonitorUnsupported(
            f"monitor: is not available on {box.dialect}: its catalogue has no table statistics a read statement "
            "can reach; watch these tables with row_count, freshness and schema_changes checks in a suite")
    counter = _Counter(box)
    tables, schemas = reader(counter, config.schemas)
    tables = [t for t in tables if not _excluded(t, config.exclude)]
    exact = _exact_tables(tables, config.exact_counts)
    if exact:
        _count_rows(counter, exact)
    return Catalogue(sorted(tables, key=lambda t: t.name), counter.statements, schemas)


class _Counter:
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


def literals(values: list[str], dialect: str) -> str:
    """``'a', 'b'`` as sqlglot writes string literals in ``dialect`` (for an IN list of schema names)."""
    return ", ".join(exp.Literal.string(v).sql(dialect=dialect) for v in values)


def _excluded(table: TableStats, patterns: list[str]) -> bool:
    return any(fnmatch.fnmatchcase(table.table, p) or fnmatch.fnmatchcase(table.name, p) for p in patterns)


def _exact_tables(tables: list[TableStats], wanted: bool | list[str]) -> list[TableStats]:
    if wanted is True:
        return list(tables)
    if not wanted:
        return []
    names = set(wanted)
    return [t for t in tables if t.table in names or t.name in names]


def _count_rows(counter: _Counter, tables: list[TableStats]) -> None:
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
                query = exp.union(query, select, distinct=False)
            for i, n in counter.rows(query.sql(dialect=counter.dialect)):
                table = chunk[int(i)]
                table.extra["catalogue_rows"] = table.rows
                table.extra["catalogue_source"] = table.rows_source
                table.rows, table.rows_exact, table.rows_source = int(n), True, "count(*)"


_PARAMS = re.compile(r"\(.*\)")

#: declared type words -> the generic family (the same names as the ``schema`` check's, see sandbox/catalog.py)
_FAMILIES = (
    ("interval", "interval"), ("point", "other"), ("bool", "boolean"), ("tinyint(1)", "boolean"),
    ("int", "integer"), ("serial", "integer"), ("numeric", "decimal"), ("decimal", "decimal"),
    ("double", "float"), ("float", "float"), ("real", "float"), ("timestamp", "datetime"),
    ("datetime", "datetime"), ("date", "date"), ("time", "time"), ("json", "json"), ("uuid", "uuid"),
    ("char", "text"), ("text", "text"), ("clob", "text"), ("string", "text"), ("enum", "text"),
    ("blob", "binary"), ("bytea", "binary"), ("binary", "binary"),
)


def generic_of(declared: str) -> str:
    """The generic family of a declared type (``varchar(255)`` -> ``text``, ``BIGINT`` -> ``integer``)."""
    text = (declared or "").strip().lower()
    if not text:
        return "unknown"
    if text.startswith("tinyint(1)"):
        return "boolean"
    bare = _PARAMS.sub("", text)
    for word, family in _FAMILIES:
        if word in bare:
            return family
    return "other"


def column(name: str, declared: str) -> dict[str, str]:
    return {"name": str(name), "type": str(declared or ""), "generic": generic_of(str(declared or ""))}
