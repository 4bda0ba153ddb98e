"""Read the schema (tables, columns, primary and foreign keys) through the sandbox's catalog queries."""

from __future__ import annotations

from dataclasses import dataclass, field

import sqlglot
from sqlglot import exp

from watchdog.sandbox import Sandbox
from watchdog.scan import sqlbuild

CATALOG_ROWS = 100_000


@dataclass
class ColumnInfo:
    name: str
    type: str
    nullable: bool = True

    @property
    def family(self) -> str:
        """``int``, ``real``, ``text``, ``time``, ``date``, ``bool`` or ``other`` from the declared type."""
        return type_family(self.type)


@dataclass
class TableInfo:
    name: str
    columns: list[ColumnInfo] = field(default_factory=list)
    primary_key: list[str] = field(default_factory=list)
    #: declared foreign keys: (column, referenced table, referenced column)
    foreign_keys: list[tuple[str, str, str]] = field(default_factory=list)


def type_family(declared: str) -> str:
    t = declared.lower()
    if "bool" in t or t == "tinyint(1)":
        return "bool"
    if "int" in t:
        return "int"
    if any(k in t for k in ("real", "double", "float", "numeric", "decimal", "money")):
        return "real"
    if "timestamp" in t or "datetime" in t:
        return "time"
    if t == "date":
        return "date"
    if any(k in t for k in ("char", "text", "clob", "string")) or t == "":
        return "text"
    return "other"


def _lit(value: str) -> exp.Expr:
    return sqlbuild.literal(value)


def _rows(box: Sandbox, query: exp.Expr | str) -> list[tuple]:
    if isinstance(query, str):  # fixed catalog text (no user input), read in the database's dialect
        query = sqlglot.parse_one(query, read=box.dialect)
    return [tuple(r) for r in box.query(query.sql(dialect=box.dialect), max_rows=CATALOG_ROWS).rows]


def read_schema(box: Sandbox, only: list[str] | None = None) -> list[TableInfo]:
    """Every base table (or those named in ``only``, in that order) with its columns and keys."""
    reader = {"strictsqlite": _sqlite, "sqlite": _sqlite, "postgres": _postgres, "mysql": _mysql,
              "duckdb": _duckdb}.get(box.dialect)
    if reader is None:
        raise ValueError(f"profiling is not supported on the {box.dialect} dialect")
    tables = reader(box)
    if only:
        by_name = {t.name: t for t in tables}
        missing = [n for n in only if n not in by_name]
        if missing:
            from watchdog.errors import ConfigError
            raise ConfigError(f"no such table(s): {', '.join(missing)} (found: {', '.join(by_name) or 'none'})")
        tables = [by_name[n] for n in only]
    return tables


def _sqlite(box: Sandbox) -> list[TableInfo]:
    names = _rows(box, exp.select("name").from_("sqlite_master").where(
        "type = 'table' AND name NOT LIKE 'sqlite_%'").order_by("name"))
    tables = []
    for (name,) in names:
        info = TableInfo(name)
        cols = _rows(box, exp.select('name', 'type', '"notnull"', 'pk').from_(
            exp.Anonymous(this="pragma_table_info", expressions=[_lit(name)])).order_by("cid"))
        for col, typ, notnull, pk in cols:
            info.columns.append(ColumnInfo(col, typ or "", not notnull and not pk))
        info.primary_key = [c for c, _, _, pk in sorted(cols, key=lambda r: r[3]) if pk]
        fks = _rows(box, exp.select('"from"', '"table"', '"to"').from_(
            exp.Anonymous(this="pragma_foreign_key_list", expressions=[_lit(name)])))
        pks_of: dict[str, list[str]] = {}
        for col, ref_table, ref_col in fks:
            if ref_col is None:  # REFERENCES t without a column: its primary key
                pks_of.setdefault(ref_table, [r[0] for r in _rows(box, exp.select("name").from_(
                    exp.Anonymous(this="pragma_table_info", expressions=[_lit(ref_table)])).where("pk > 0"))])
                ref_col = (pks_of[ref_table] or [col])[0]
            info.foreign_keys.append((col, ref_table, ref_col))
        tables.append(info)
    return tables


def _information_schema(box: Sandbox, schema_expr: str) -> list[TableInfo]:
    tables: dict[str, TableInfo] = {}
    for (name,) in _rows(box, "SELECT table_name FROM information_schema.tables WHERE table_schema = "
                              f"{schema_expr} AND table_type = 'BASE TABLE' ORDER BY table_name"):
        tables[name] = TableInfo(name)
    cols = _rows(box, "SELECT table_name, column_name, data_type, is_nullable FROM information_schema.columns "
                      f"WHERE table_schema = {schema_expr} ORDER BY table_name, ordinal_position")
    for table, col, typ, nullable in cols:
        if table in tables:
            tables[table].columns.append(ColumnInfo(col, typ or "", str(nullable).upper() == "YES"))
    keys = _rows(box, "SELECT k.table_name, k.column_name FROM information_schema.key_column_usage AS k "
                      "JOIN information_schema.table_constraints AS c ON c.constraint_name = k.constraint_name "
                      "AND c.table_schema = k.table_schema AND c.table_name = k.table_name "
                      f"WHERE k.table_schema = {schema_expr} AND c.constraint_type = 'PRIMARY KEY' "
                      "ORDER BY k.table_name, k.ordinal_position")
    for table, col in keys:
        if table in tables:
            tables[table].primary_key.append(col)
    return list(tables.values())


_POSTGRES_FKS = ("SELECT k.table_name, k.column_name, u.table_name, u.column_name "
                 "FROM information_schema.key_column_usage AS k "
                 "JOIN information_schema.referential_constraints AS r ON r.constraint_name = k.constraint_name "
                 "AND r.constraint_schema = k.constraint_schema "
                 "JOIN information_schema.key_column_usage AS u ON u.constraint_name = r.unique_constraint_name "
                 "AND u.constraint_schema = r.unique_constraint_schema "
                 "AND u.ordinal_position = k.position_in_unique_constraint "
                 "WHERE k.table_schema = current_schema() ORDER BY k.table_name, k.column_name")
_MYSQL_FKS = ("SELECT table_name, column_name, referenced_table_name, referenced_column_name "
              "FROM information_schema.key_column_usage WHERE table_schema = DATABASE() "
              "AND referenced_table_name IS NOT NULL ORDER BY table_name, column_name")


def _postgres(box: Sandbox) -> list[TableInfo]:
    return _with_foreign_keys(_information_schema(box, "current_schema()"), _rows(box, _POSTGRES_FKS))


def _mysql(box: Sandbox) -> list[TableInfo]:
    return _with_foreign_keys(_information_schema(box, "DATABASE()"), _rows(box, _MYSQL_FKS))


def _with_foreign_keys(tables: list[TableInfo], fks: list[tuple]) -> list[TableInfo]:
    """``tables`` with each (table, column, referenced table, referenced column) row attached to its table."""
    by_name = {t.name: t for t in tables}
    for table, col, ref_table, ref_col in fks:
        if table in by_name:
            by_name[table].foreign_keys.append((col, ref_table, ref_col))
    return tables


def _duckdb(box: Sandbox) -> list[TableInfo]:
    """The database's base tables and the file tables (TEMP views over the configured files)."""
    where = "table_schema = 'main' AND (table_catalog = 'temp' OR table_catalog = current_database())"
    tables = {name: TableInfo(name) for (name,) in _rows(
        box, f"SELECT DISTINCT table_name FROM information_schema.tables WHERE {where} "
             "AND (table_type = 'BASE TABLE' OR table_catalog = 'temp') ORDER BY table_name")}
    for table, col, typ, nullable in _rows(box, "SELECT table_name, column_name, data_type, is_nullable FROM "
                                                f"information_schema.columns WHERE {where} "
                                                "ORDER BY table_name, ordinal_position"):
        if table in tables:
            tables[table].columns.append(ColumnInfo(col, typ or "", str(nullable).upper() == "YES"))
    return list(tables.values())
