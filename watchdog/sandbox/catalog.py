"""Column types, read from the database's catalogue with SQLAlchemy's inspector.

Part of the sandbox, the only door to a database: it reuses the session's own engine (PostgreSQL,
MySQL/MariaDB and other engine sessions) or, for SQLite, a read-only (``mode=ro``) connection to the
same file. Only the catalogue is read (``get_columns``), never a row of data.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import sqlalchemy as sa
from sqlalchemy.engine import URL

#: the kinds a column's type reduces to (``other``: a type no check reasons about, e.g. JSON or UUID;
#: ``unknown``: no declared type)
KINDS = ("number", "text", "temporal", "boolean", "other", "unknown")


def kind_of(sa_type: Any) -> str:
    """One of :data:`KINDS` for a SQLAlchemy column type."""
    if isinstance(sa_type, sa.Boolean):
        return "boolean"
    if isinstance(sa_type, (sa.Integer, sa.Numeric, sa.Float)):  # SQLAlchemy 2.1: Float is not a Numeric
        return "number"
    if isinstance(sa_type, (sa.String, sa.Enum)):
        return "text"
    if isinstance(sa_type, (sa.Date, sa.DateTime, sa.Time)):
        return "temporal"
    if isinstance(sa_type, sa.types.NullType):  # e.g. an SQLite column declared without a type
        return "unknown"
    return "other"


def column_types(session: Any, table: list[str]) -> dict[str, tuple[str, str]]:
    """``{column: (kind, declared type)}`` of ``table`` (its dotted parts); empty when it cannot be read
    (no such table, a session without an engine): the check's own query then says what is wrong."""
    *schema_parts, name = table
    schema = schema_parts[-1] if schema_parts else None
    engine = getattr(session, "_engine", None)
    disposable = None
    if engine is None and getattr(session, "dialect_name", "") == "sqlite" and getattr(session, "path", ""):
        path = Path(session.path).expanduser()
        if not path.is_file():
            return {}
        url = URL.create("sqlite", database=f"file:{path}?mode=ro", query={"uri": "true"})
        engine = disposable = sa.create_engine(url)
    if engine is None:
        return {}
    try:
        columns = sa.inspect(engine).get_columns(name, schema=schema)
    except Exception:  # noqa: BLE001 - missing table, no privilege...: the scan's query reports it
        return {}
    finally:
        if disposable is not None:
            disposable.dispose()
    out: dict[str, tuple[str, str]] = {}
    for column in columns:
        declared = column.get("type")
        try:
            text = str(declared)
        except Exception:  # noqa: BLE001 - some dialect types cannot render themselves
            text = type(declared).__name__
        out[str(column["name"])] = (kind_of(declared), text)
    return out
