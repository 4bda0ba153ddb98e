"""Read a table's columns and types from the database catalog (SQLAlchemy's inspector).

The inspector reads only the catalog (information_schema, pg_catalog, SQLite's table_info), on
the session's own engine for server databases and on a read-only (``mode=ro``) connection for
SQLite. Each column's type is also given as a *generic* type, SQLAlchemy's type family, so the
same declared schema reads the same on every database: ``integer``, ``decimal``, ``float``,
``text``, ``boolean``, ``date``, ``datetime``, ``time``, ``interval``, ``binary``, ``json``,
``uuid``, ``other`` (``unknown`` when the database records no type, as SQLite may).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import sqlalchemy as sa
from sqlalchemy.types import NullType, TypeEngine

from watchdog.errors import DatabaseUnavailable, QueryError
from watchdog.redact import redact

#: checked in order: the first family a type belongs to names it (Float before Numeric, Boolean before Integer)
_FAMILIES: tuple[tuple[type, str], ...] = (
    (sa.Boolean, "boolean"), (sa.Integer, "integer"), (sa.Float, "float"), (sa.Numeric, "decimal"),
    (sa.DateTime, "datetime"), (sa.Date, "date"), (sa.Time, "time"), (sa.Interval, "interval"),
    (sa.JSON, "json"), (sa.Uuid, "uuid"), (sa.String, "text"), (sa.LargeBinary, "binary"),
)


def generic_type(type_: TypeEngine) -> str:
    if isinstance(type_, NullType):
        return "unknown"
    for family, name in _FAMILIES:
        if isinstance(type_, family):
            return name
    return "other"


def _type_text(type_: TypeEngine, dialect: sa.Dialect) -> str:
    try:
        return str(type_.compile(dialect=dialect))
    except Exception:  # noqa: BLE001 - a type the dialect cannot print: its class name will do
        return type(type_).__name__


def describe(session: Any, table: str) -> list[dict[str, str]]:
    """``[{"name", "type", "generic"}]`` for ``table`` (``schema.table`` allowed), in table order."""
    schema, _, name = table.rpartition(".")
    engine: sa.Engine | None = getattr(session, "_engine", None)
    own = engine is None
    if engine is None:  # SQLite: the session runs statements in a worker process; read the catalog here, read-only
        path = Path(getattr(session, "path", "") or "").expanduser()
        if not path.is_file():
            raise DatabaseUnavailable(f"SQLite database file not found: {path}")
        engine = sa.create_engine(f"sqlite:///file:{path}?mode=ro&uri=true")
    try:
        inspector = sa.inspect(engine)
        columns = inspector.get_columns(name, schema=schema or None)
        return [{"name": str(c["name"]), "type": _type_text(c["type"], engine.dialect),
                 "generic": generic_type(c["type"])} for c in columns]
    except sa.exc.NoSuchTableError:
        raise QueryError(f"no such table: {table}") from None
    except sa.exc.OperationalError as exc:
        raise DatabaseUnavailable(f"cannot read the catalog: {redact(str(exc.orig or exc).splitlines()[0])}") from None
    except sa.exc.DBAPIError as exc:
        raise QueryError(f"cannot read the catalog: {redact(str(exc.orig or exc).splitlines()[0])}") from None
    finally:
        if own:
            engine.dispose()
