"""One table as the catalogue describes it, and the generic family of a declared column type."""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

from sqlglot import exp

from watchdog.scan import sqlbuild


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



def literals(values: list[str], dialect: str) -> str:
    """``'a', 'b'`` as sqlglot writes string literals in ``dialect`` (for an IN list of schema names)."""
    return ", ".join(exp.Literal.string(v).sql(dialect=dialect) for v in values)


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
