"""sqlglot dialects tuned for watchdog, and the warehouses whose SQL watchdog writes but has not run.

``strictsqlite``: SQLite, but identifiers are written with backticks. SQLite reads an unknown
"double-quoted" name as a string literal, so ``"nope" IS NULL`` on a missing column would
silently count nothing; a backticked name is always an identifier, and a typo is an error.

:data:`WAREHOUSES`: Trino, Snowflake, BigQuery and Databricks SQL. A URL with one of their schemes
(``trino://``, ``snowflake://``, ``bigquery://``, ``databricks://``) selects the sqlglot dialect of the
same name, and every statement is written for it (regexes, exact text comparison, quoting: see
``watchdog/scan/sqlbuild.py``). This is **generated SQL only, not tested against a live server**:
no such server runs here, the golden tests (``tests/test_warehouse_dialects.py``) check the text.
The SQLAlchemy driver is the user's to install; without it the connection fails with one line
naming the package (:func:`missing_driver`).
"""

from __future__ import annotations

from dataclasses import dataclass

from sqlglot.dialects.sqlite import SQLite


class StrictSQLite(SQLite):
    class Tokenizer(SQLite.Tokenizer):
        IDENTIFIERS = ["`", '"', ("[", "]")]


GENERATED_ONLY = "generated SQL only, not tested against a live server"


@dataclass(frozen=True)
class Warehouse:
    """An engine watchdog writes SQL for without a server to test it on."""

    label: str
    #: the sqlglot dialect (also the URL scheme and SQLAlchemy's backend name)
    dialect: str
    #: what to ``pip install`` for its SQLAlchemy dialect and driver (never a watchdog dependency)
    package: str
    example_url: str


WAREHOUSES: dict[str, Warehouse] = {w.dialect: w for w in (
    Warehouse("Trino", "trino", "trino[sqlalchemy]", "trino://user@trino.example.com:8080/hive/sales"),
    Warehouse("Snowflake", "snowflake", "snowflake-sqlalchemy",
              "snowflake://user:PASSWORD@account-id/SALES/PUBLIC?warehouse=WH"),
    Warehouse("BigQuery", "bigquery", "sqlalchemy-bigquery", "bigquery://my-project/sales"),
    Warehouse("Databricks SQL", "databricks", "databricks-sqlalchemy",
              "databricks://token:TOKEN@dbc-1234.cloud.databricks.com?http_path=/sql/1.0/warehouses/abc"
              "&catalog=main&schema=sales"),
)}


def warehouse(backend: str) -> Warehouse | None:
    """The warehouse of a SQLAlchemy backend name (``trino``...), or None."""
    return WAREHOUSES.get(backend.partition("+")[0])


def missing_driver(backend: str) -> str | None:
    """The one-line error for a warehouse URL whose driver is not installed (None: not a warehouse)."""
    found = warehouse(backend)
    if found is None:
        return None
    return (f"the {found.label} driver is not installed: pip install '{found.package}' "
            f"(watchdog writes {found.label} SQL, {GENERATED_ONLY})")
