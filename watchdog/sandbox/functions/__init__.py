"""Which functions a read statement may call, per database: an allowlist, never a denylist.

Pure data, no sqlglot import (the SQLite worker process reads :data:`SQLITE_ALLOWED` for its
authorizer). :func:`allowed_functions` takes a sqlglot dialect name (``postgres``, ``mysql``,
``strictsqlite``/``sqlite``, ``spark``/``databricks``); other dialects get the functions common to all three.
"""

from __future__ import annotations

from watchdog.sandbox.functions.common import COMMON, SYNTAX_WORDS
from watchdog.sandbox.functions.mysql import MYSQL_FUNCTIONS, MYSQL_VOLATILE_ALLOWED
from watchdog.sandbox.functions.postgres import (
    POSTGRES_DENIED_RELATIONS,
    POSTGRES_FUNCTIONS,
    POSTGRES_VOLATILE_ALLOWED,
)
from watchdog.sandbox.functions.spark import SPARK_FUNCTIONS, SPARK_VOLATILE_ALLOWED
from watchdog.sandbox.functions.sqlite import SQLITE_FUNCTIONS, SQLITE_PRAGMA_FUNCTIONS, SQLITE_VOLATILE_ALLOWED
from watchdog.sandbox.functions.warehouses import (
    BIGQUERY_FUNCTIONS,
    DATABRICKS_FUNCTIONS,
    SNOWFLAKE_FUNCTIONS,
    TRINO_FUNCTIONS,
)

SQLITE_ALLOWED = COMMON | SQLITE_FUNCTIONS | SQLITE_PRAGMA_FUNCTIONS
POSTGRES_ALLOWED = COMMON | POSTGRES_FUNCTIONS | POSTGRES_VOLATILE_ALLOWED
MYSQL_ALLOWED = COMMON | MYSQL_FUNCTIONS
#: Spark SQL (Thrift server, Databricks): the server's own names only, no COMMON extras
SPARK_ALLOWED = SPARK_FUNCTIONS

_BY_DIALECT = {
    "sqlite": SQLITE_ALLOWED,
    "strictsqlite": SQLITE_ALLOWED,
    "postgres": POSTGRES_ALLOWED,
    "mysql": MYSQL_ALLOWED,
    "spark": SPARK_ALLOWED,
    # warehouses: generated SQL only, not tested against a live server (see functions/warehouses.py)
    "trino": COMMON | TRINO_FUNCTIONS,
    "snowflake": COMMON | SNOWFLAKE_FUNCTIONS,
    "bigquery": COMMON | BIGQUERY_FUNCTIONS,
    "databricks": COMMON | DATABRICKS_FUNCTIONS,
}

#: volatile (non-deterministic) functions each database may still call, reviewed one by one
VOLATILE_ALLOWED = {
    "strictsqlite": SQLITE_VOLATILE_ALLOWED,
    "postgres": POSTGRES_VOLATILE_ALLOWED,
    "mysql": MYSQL_VOLATILE_ALLOWED,
    "spark": SPARK_VOLATILE_ALLOWED,
}

#: relations (tables/views) no statement may read, per dialect
DENIED_RELATIONS = {"postgres": POSTGRES_DENIED_RELATIONS}

__all__ = ["DENIED_RELATIONS", "SQLITE_ALLOWED", "SYNTAX_WORDS", "VOLATILE_ALLOWED", "allowed_functions"]


def allowed_functions(dialect: str) -> frozenset[str]:
    """The lower-case function names a read may call in ``dialect`` (a sqlglot dialect name)."""
    return _BY_DIALECT.get(dialect, COMMON)
