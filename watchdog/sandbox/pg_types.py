"""Column kinds of a PostgreSQL table from ``pg_attribute``, on the session's own connection.

:func:`watchdog.sandbox.catalog.column_types` asks SQLAlchemy's inspector, which costs a scan of a
mid-sized table more than its aggregate pass: importing SQLAlchemy, an engine and a second connection
per table. For the direct psycopg session this module reads the same facts with one catalogue query in
the session's read-only transaction, for the common built-in types whose kind is certain (the kinds
and declared names SQLAlchemy's reflection gives them; tests/test_startup.py compares the two). A
table with any other type (an extension's, a domain over an enum...) returns None: the caller asks
SQLAlchemy, as before.
"""

from __future__ import annotations

from typing import Any

from sqlglot import exp

#: base type name -> (kind, the declared name SQLAlchemy's reflected type prints)
KNOWN = {
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
_WITH_MODIFIER = {"varchar", "bpchar", "numeric"}

_QUERY = """SELECT a.attname, t.typname, a.atttypmod, t.typtype
FROM pg_catalog.pg_attribute AS a JOIN pg_catalog.pg_type AS t ON t.oid = a.atttypid
WHERE a.attrelid = to_regclass({name}) AND a.attnum > 0 AND NOT a.attisdropped ORDER BY a.attnum"""


def column_types(session: Any, table: list[str], *, timeout_s: float) -> dict[str, tuple[str, str]] | None:
    """``{column: (kind, declared type)}`` of ``table`` (its dotted parts, at most schema.table); ``{}`` when
    there is no such table; None when a column's type is not one of :data:`KNOWN` (or the read fails)."""
    if not 1 <= len(table) <= 2:
        return None
    relation = ".".join(exp.to_identifier(part, quoted=True).sql(dialect="postgres") for part in table)
    sql = _QUERY.format(name=exp.Literal.string(relation).sql(dialect="postgres"))
    try:
        result = session.run(sql, max_rows=100_000, max_bytes=16 * 1024 * 1024, timeout_s=timeout_s)
    except Exception:  # noqa: BLE001 - e.g. no privilege: SQLAlchemy's reading decides, as before
        return None
    out: dict[str, tuple[str, str]] = {}
    for name, typname, typmod, typtype in result.rows:
        known = KNOWN.get(typname) if typtype == "b" else None
        if known is None:
            return None
        kind, declared = known
        if typname in _WITH_MODIFIER and typmod is not None and typmod >= 0:
            declared += _modifier(typname, int(typmod))
        out[str(name)] = (kind, declared)
    return out


def _modifier(typname: str, typmod: int) -> str:
    if typname == "numeric":
        precision, scale = (typmod - 4) >> 16, (typmod - 4) & 0xFFFF
        return f"({precision}, {scale})"
    return f"({typmod - 4})"
