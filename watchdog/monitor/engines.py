"""The catalogue statements of each database (see :mod:`watchdog.monitor.catalogue`).

Each reader sends a constant number of statements however many tables the schemas hold:

* PostgreSQL: ``pg_class`` with ``pg_stat_user_tables`` (live, inserted, updated, deleted tuples, last
  (auto)analyze; ``reltuples`` where the statistics have no row), then ``pg_attribute`` for the columns;
* MySQL/MariaDB: ``information_schema.tables`` (``table_rows``: exact for MyISAM and Aria, InnoDB's estimate
  otherwise; ``update_time`` as an age), then ``information_schema.columns``;
* DuckDB: ``duckdb_tables()`` (``estimated_size``) and ``duckdb_columns()``;
* SQLite: ``sqlite_master`` with ``pragma_table_info`` (every table's columns in one statement), and
  ``sqlite_stat1`` when an ANALYZE made it (rows as of that ANALYZE; otherwise no row count without
  ``exact_counts``).

Schema names go into the statements as sqlglot string literals, never as text pasted in.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Protocol

from watchdog.errors import ConfigError
from watchdog.monitor.stats import TableStats, column, literals


class Rows(Protocol):
    """Runs one catalogue statement through the sandbox and returns its rows (counted)."""

    dialect: str

    def rows(self, sql: str) -> list[tuple[Any, ...]]: ...


Reader = Callable[[Rows, "list[str] | None"], "tuple[list[TableStats], list[str]]"]


def _int(value: Any) -> int | None:
    return None if value is None else int(value)


def _attach_columns(tables: dict[tuple[str | None, str], TableStats], rows: list[tuple[Any, ...]]) -> None:
    for schema, table, name, declared in rows:
        found = tables.get((schema, table))
        if found is not None:
            found.columns.append(column(name, declared))


def postgres(counter: Rows, schemas: list[str] | None) -> tuple[list[TableStats], list[str]]:
    schemas = schemas or ["public"]
    where = (f"n.nspname IN ({literals(schemas, 'postgres')}) AND c.relkind IN ('r', 'p')")
    rows = counter.rows(
        "SELECT n.nspname, c.relname, c.reltuples, s.relid, s.n_live_tup, s.n_dead_tup, s.n_tup_ins, s.n_tup_upd, "
        "s.n_tup_del, s.last_analyze, s.last_autoanalyze, s.n_mod_since_analyze "
        "FROM pg_catalog.pg_class AS c JOIN pg_catalog.pg_namespace AS n ON n.oid = c.relnamespace "
        "LEFT JOIN pg_catalog.pg_stat_user_tables AS s ON s.relid = c.oid "
        f"WHERE {where}")
    tables: dict[tuple[str | None, str], TableStats] = {}
    for schema, name, reltuples, relid, live, dead, ins, upd, dele, analyzed, autoanalyzed, modified in rows:
        stats = TableStats(schema, name)
        stats.extra["reltuples"] = None if reltuples is None or reltuples < 0 else int(reltuples)
        if relid is not None:
            stats.rows, stats.rows_source = int(live), "pg_stat_user_tables.n_live_tup"
            stats.write_counter = int(ins) + int(upd) + int(dele)
            stats.extra.update(inserted=int(ins), updated=int(upd), deleted=int(dele), dead_rows=_int(dead),
                               changed_since_analyze=_int(modified),
                               last_analyze=max((a for a in (analyzed, autoanalyzed) if a is not None), default=None))
        elif stats.extra["reltuples"] is not None:  # no statistics row (a partitioned parent): the planner's figure
            stats.rows, stats.rows_source = stats.extra["reltuples"], "pg_class.reltuples"
        tables[(schema, name)] = stats
    _attach_columns(tables, counter.rows(
        "SELECT n.nspname, c.relname, a.attname, format_type(a.atttypid, a.atttypmod) "
        "FROM pg_catalog.pg_attribute AS a JOIN pg_catalog.pg_class AS c ON c.oid = a.attrelid "
        "JOIN pg_catalog.pg_namespace AS n ON n.oid = c.relnamespace "
        f"WHERE {where} AND a.attnum > 0 AND NOT a.attisdropped ORDER BY n.nspname, c.relname, a.attnum"))
    return list(tables.values()), schemas


#: MySQL/MariaDB engines whose table_rows is an exact count
EXACT_ENGINES = frozenset({"myisam", "aria", "memory"})


def mysql(counter: Rows, schemas: list[str] | None) -> tuple[list[TableStats], list[str]]:
    where = f"table_schema IN ({literals(schemas, 'mysql')})" if schemas else "table_schema = DATABASE()"
    rows = counter.rows(
        "SELECT table_schema, table_name, engine, table_rows, TIMESTAMPDIFF(SECOND, update_time, NOW()), "
        "DATABASE() FROM information_schema.tables "
        f"WHERE table_type = 'BASE TABLE' AND {where}")
    tables: dict[tuple[str | None, str], TableStats] = {}
    current = None
    for schema, name, engine, table_rows, age, database in rows:
        current = database
        exact = str(engine or "").lower() in EXACT_ENGINES
        stats = TableStats(schema, name, rows=_int(table_rows), rows_exact=exact,
                           rows_source="information_schema.tables.table_rows",
                           modified_age_s=None if age is None else max(0.0, float(age)))
        stats.extra["engine"] = engine
        if not exact:
            stats.extra["rows_note"] = (f"{engine}'s table_rows is sampled from a few index pages and may be off by "
                                        "tens of percent; list the table under exact_counts for count(*)")
        tables[(schema, name)] = stats
    _attach_columns(tables, counter.rows(
        "SELECT table_schema, table_name, column_name, column_type FROM information_schema.columns "
        f"WHERE {where} ORDER BY table_schema, table_name, ordinal_position"))
    return list(tables.values()), schemas or ([current] if current else [])


def duckdb(counter: Rows, schemas: list[str] | None) -> tuple[list[TableStats], list[str]]:
    schemas = schemas or ["main"]
    where = f"database_name = current_database() AND schema_name IN ({literals(schemas, 'duckdb')})"
    tables: dict[tuple[str | None, str], TableStats] = {}
    for schema, name, size in counter.rows(
            "SELECT schema_name, table_name, estimated_size FROM duckdb_tables() "
            f"WHERE {where} AND NOT internal AND NOT temporary"):
        tables[(schema, name)] = TableStats(schema, name, rows=_int(size), rows_source="duckdb_tables().estimated_size")
    _attach_columns(tables, counter.rows(
        "SELECT schema_name, table_name, column_name, data_type FROM duckdb_columns() "
        f"WHERE {where} ORDER BY schema_name, table_name, column_index"))
    return list(tables.values()), schemas


def sqlite(counter: Rows, schemas: list[str] | None) -> tuple[list[TableStats], list[str]]:
    if schemas and schemas != ["main"]:
        raise ConfigError(f"monitor: schemas: SQLite has one schema, main (got {', '.join(schemas)}); "
                          "leave schemas: out")
    tables: dict[tuple[str | None, str], TableStats] = {}
    for table, name, declared in counter.rows(
            "SELECT m.name, p.name, p.type FROM sqlite_master AS m, pragma_table_info(m.name) AS p "
            "WHERE m.type = 'table' AND m.name NOT LIKE 'sqlite_%' ORDER BY m.name, p.cid"):
        tables.setdefault((None, table), TableStats(None, table)).columns.append(column(name, declared))
    names = counter.rows("SELECT name FROM sqlite_master WHERE type = 'table' AND name = 'sqlite_stat1'")
    if names:
        for table, stat in counter.rows("SELECT tbl, stat FROM sqlite_stat1"):
            found = tables.get((None, table))
            first = str(stat or "").split(" ")[0]
            if found is not None and first.isdigit():
                rows = int(first)
                if found.rows is None or rows > found.rows:
                    found.rows, found.rows_source = rows, "sqlite_stat1 (as of the last ANALYZE)"
    return list(tables.values()), ["main"]


READERS: dict[str, Reader] = {"postgres": postgres, "mysql": mysql, "duckdb": duckdb, "strictsqlite": sqlite}
