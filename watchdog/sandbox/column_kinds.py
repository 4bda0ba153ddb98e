"""Column kinds of a table read on the session's own connection, without SQLAlchemy.

:func:`watchdog.sandbox.catalog.column_types` asks SQLAlchemy's inspector, which costs a scan of a
small or mid-sized table more than its queries: importing SQLAlchemy, and an engine with a second
connection per table. For the PostgreSQL (direct psycopg) and SQLite sessions this module reads the
same facts with one catalogue statement through the session (its read-only transaction, its worker),
for the declared types whose reading is certain: the kind and the declared name SQLAlchemy's
reflection gives them (tests/test_startup.py compares the two). A table with any other type (an
extension's type, an enum, a generated column...) returns None and the caller asks SQLAlchemy.
"""

from __future__ import annotations

import re
from typing import Any

from sqlglot import exp

#: PostgreSQL base type name -> (kind, the declared name SQLAlchemy's reflected type prints)
POSTGRES = {
    "bool": ("boolean", "BOOLEAN"),
    "int2": ("number", "SMALLINT"), "int4": ("number", "INTEGER"), "int8": ("number", "BIGINT"),
    "float4": ("number", "REAL"), "float8": ("number", "DOUBLE PRECISION"), "numeric": ("number", "NUMERIC"),
    "text": ("text", "TEXT"), "varchar": ("text", "VARCHAR"), "bpchar": ("text", "CHAR"),
    "date": ("temporal", "DATE"), "timestamp": ("temporal", "TIMESTAMP"), "timestamptz": ("temporal", "TIMESTAMP"),
    "time": ("temporal", "TIME"), "timetz": ("temporal", "TIME"),
    "interval": ("other", "INTERVAL"), "json": ("other", "JSON"), "jsonb": ("other", "JSONB"),
    "uuid": ("other", "UUID"), "bytea": ("other", "BYTEA"),
}
#: the types whose declared name carries the modifier as SQLAlchemy prints it: VARCHAR(20), NUMERIC(12, 2)
_PG_MODIFIED = {"varchar", "bpchar", "numeric"}

_PG_QUERY = """SELECT a.attname, t.typname, a.atttypmod, t.typtype
FROM pg_catalog.pg_attribute AS a JOIN pg_catalog.pg_type AS t ON t.oid = a.atttypid
WHERE a.attrelid = to_regclass({name}) AND a.attnum > 0 AND NOT a.attisdropped ORDER BY a.attnum"""

#: SQLite declared type name (upper case, as SQLAlchemy's reflection reads it) -> kind
SQLITE = {
    "BIGINT": "number", "INT": "number", "INTEGER": "number", "SMALLINT": "number", "NUMERIC": "number",
    "DECIMAL": "number", "FLOAT": "number", "REAL": "number", "DOUBLE": "number",
    "BOOL": "boolean", "BOOLEAN": "boolean",
    "CHAR": "text", "VARCHAR": "text", "NVARCHAR": "text", "NCHAR": "text", "TEXT": "text",
    "DATE": "temporal", "DATETIME": "temporal", "TIME": "temporal", "TIMESTAMP": "temporal",
}
#: how SQLAlchemy prints the reflected type when it differs from the declared name
_SQLITE_PRINTED = {"INT": "INTEGER", "BOOL": "BOOLEAN"}
#: the SQLite types that take (length) or (precision[, scale]) arguments when declared with them
_SQLITE_LENGTH = {"CHAR", "VARCHAR", "NVARCHAR", "NCHAR"}
_SQLITE_PRECISION = {"NUMERIC", "DECIMAL"}
_SQLITE_DECLARED = re.compile(r"([A-Z]*)(?:\((\d+)(?:, ?(\d+))?\))?")


def _run(session: Any, sql: str, timeout_s: float) -> list[tuple[Any, ...]] | None:
    try:
        return session.run(sql, max_rows=100_000, max_bytes=16 * 1024 * 1024, timeout_s=timeout_s).rows
    except Exception:  # noqa: BLE001 - e.g. no privilege: SQLAlchemy's reading decides, as before
        return None


def postgres(session: Any, table: list[str], *, timeout_s: float) -> dict[str, tuple[str, str]] | None:
    """``{column: (kind, declared type)}`` of ``table`` (its dotted parts, at most schema.table); ``{}`` when
    there is no such table; None when a column's type is not one of :data:`POSTGRES` (or the read fails)."""
    if not 1 <= len(table) <= 2:
        return None
    relation = ".".join(exp.to_identifier(part, quoted=True).sql(dialect="postgres") for part in table)
    rows = _run(session, _PG_QUERY.format(name=exp.Literal.string(relation).sql(dialect="postgres")), timeout_s)
    if rows is None:
        return None
    out: dict[str, tuple[str, str]] = {}
    for name, typname, typmod, typtype in rows:
        known = POSTGRES.get(typname) if typtype == "b" else None
        if known is None:
            return None
        kind, declared = known
        if typname in _PG_MODIFIED and typmod is not None and typmod >= 0:
            if typname == "numeric":
                declared += f"({(typmod - 4) >> 16}, {(typmod - 4) & 0xFFFF})"
            else:
                declared += f"({typmod - 4})"
        out[str(name)] = (kind, declared)
    return out


def sqlite(session: Any, table: list[str], *, timeout_s: float) -> dict[str, tuple[str, str]] | None:
    """The same for a SQLite table of the main database (``t`` or ``main.t``); None for anything else."""
    if len(table) == 2 and table[0].lower() == "main":
        table = table[1:]
    if len(table) != 1:
        return None
    name = exp.Literal.string(table[0]).sql(dialect="sqlite")
    rows = _run(session, f"SELECT name, type, hidden FROM pragma_table_xinfo({name})", timeout_s)
    if rows is None:
        return None
    out: dict[str, tuple[str, str]] = {}
    for column, declared_type, hidden in rows:
        found = _sqlite_type(str(declared_type or "").upper()) if not hidden else None
        if found is None:
            return None
        out[str(column)] = found
    return out


def _sqlite_type(declared: str) -> tuple[str, str] | None:
    if not declared:  # no type at all: SQLAlchemy's NullType
        return "unknown", "NULL"
    match = _SQLITE_DECLARED.fullmatch(declared)
    if match is None or match.group(1) not in SQLITE:
        return None
    name, first, second = match.groups()
    printed = _SQLITE_PRINTED.get(name, name)
    if first is not None:
        if name in _SQLITE_LENGTH and second is None:
            printed += f"({first})"
        elif name in _SQLITE_PRECISION:
            printed += f"({first}, {second})" if second is not None else f"({first})"
        else:
            return None
    return SQLITE[name], printed
