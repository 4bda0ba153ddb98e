"""Read a table's columns and types from the database catalog (SQLAlchemy's inspector).

The inspector reads only the catalog (information_schema, pg_catalog, SQLite's table_info), on
the session's own engine for server databases and on a read-only (``mode=ro``) connection for
SQLite. Each column's type is also given as a *generic* type, SQLAlchemy's type family, so the
same declared schema reads the same on every database: ``integer``, ``decimal``, ``float``,
``text``, ``boolean``, ``date``, ``datetime``, ``time``, ``interval``, ``binary``, ``json``,
``uuid``, ``other`` (``unknown`` when the database records no type, as SQLite may).

Two readings: :func:`describe` (name, declared type and generic family, for the ``schema`` checks) and
:func:`column_types` (a coarse kind per column, for how ``range`` and ``accepted_values`` compare).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import sqlalchemy as sa
from sqlalchemy.engine import URL
from sqlalchemy.types import NullType, TypeEngine

from watchdog.errors import DatabaseUnavailable, QueryError
from watchdog.redact import redact

#: checked in order: the first family a type belongs to names it (Float before Numeric, Boolean before Integer)
_FAMILIES: tuple[tuple[type, str], ...] = (
    (sa.Boolean, "boolean"), (sa.Integer, "integer"), (sa.Float, "float"), (sa.Numeric, "decimal"),
    (sa.DateTime, "datetime"), (sa.Date, "date"), (sa.Time, "time"), (sa.Interval, "interval"),
    (sa.JSON, "json"), (sa.Uuid, "uuid"), (sa.String, "text"), (sa.LargeBinary, "binary"),
)


def _unwrapped(type_: Any) -> Any:
    """A dialect's decorated type (PyHive's HiveTimestamp, HiveDecimal...) as the SQL type it decorates."""
    return type_.impl_instance if isinstance(type_, sa.types.TypeDecorator) else type_


def generic_type(type_: TypeEngine) -> str:
    type_ = _unwrapped(type_)
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



def _sqlalchemy_engine(session: Any) -> tuple[sa.Engine | None, bool]:
    """An engine the inspector can read the catalog with, and whether it is ours to dispose of: the session's own
    SQLAlchemy engine; for the direct PostgreSQL session, one over the same connection settings (catalog reads
    only); for SQLite, a read-only (``mode=ro``) connection to the same file."""
    engine = getattr(session, "_engine", None)
    if isinstance(engine, sa.Engine):
        return engine, False
    if engine is not None and hasattr(engine, "_conninfo"):  # watchdog.sandbox.direct.DirectEngine
        import psycopg
        from sqlalchemy.pool import NullPool

        conninfo, args = engine._conninfo, dict(engine._connect_args)
        return sa.create_engine("postgresql+psycopg://", poolclass=NullPool,
                                creator=lambda: psycopg.connect(conninfo, **args)), True
    path = Path(getattr(session, "path", "") or "").expanduser()
    if getattr(session, "dialect_name", "sqlite") == "sqlite" and path.is_file():
        url = URL.create("sqlite", database=f"file:{path}?mode=ro", query={"uri": "true"})
        return sa.create_engine(url), True
    return None, False

def describe(session: Any, table: str) -> list[dict[str, str]]:
    """``[{"name", "type", "generic"}]`` for ``table`` (``schema.table`` allowed), in table order."""
    schema, _, name = table.rpartition(".")
    engine, own = _sqlalchemy_engine(session)
    if engine is None:
        raise DatabaseUnavailable(f"cannot read the catalog for {table}: the database file is not there")
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


#: the kinds a column's type reduces to (``other``: a type no check reasons about, e.g. JSON or UUID;
#: ``unknown``: no declared type)
KINDS = ("number", "text", "temporal", "boolean", "other", "unknown")


def kind_of(sa_type: Any) -> str:
    """One of :data:`KINDS` for a SQLAlchemy column type."""
    sa_type = _unwrapped(sa_type)
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
    engine, own = _sqlalchemy_engine(session)
    if engine is None:
        return {}
    try:
        columns = sa.inspect(engine).get_columns(name, schema=schema)
    except Exception:  # noqa: BLE001 - missing table, no privilege...: the scan's query reports it
        return {}
    finally:
        if own:
            engine.dispose()
    out: dict[str, tuple[str, str]] = {}
    for column in columns:
        declared = column.get("type")
        try:
            text = str(declared)
        except Exception:  # noqa: BLE001 - some dialect types cannot render themselves
            text = type(declared).__name__
        out[str(column["name"])] = (kind_of(declared), text)
    return out
