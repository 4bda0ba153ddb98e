"""Real test databases: a fresh SQLite file, PostgreSQL database or MariaDB database per use.

The servers are the machine's (PostgreSQL on 127.0.0.1:5432, MariaDB on 127.0.0.1:3306);
override with WATCHDOG_TEST_POSTGRES_URL / WATCHDOG_TEST_MARIADB_URL (admin URLs). Tests
create their own databases and drop them afterwards. A server that is down fails the
test: nothing is skipped silently.
"""

from __future__ import annotations

import os
import uuid
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

import sqlalchemy as sa
from sqlalchemy.engine import make_url
from sqlalchemy.pool import NullPool

KINDS = ("sqlite", "postgresql", "mariadb")
POSTGRES_ADMIN = "postgresql+psycopg://postgres@127.0.0.1:5432/postgres"
MARIADB_ADMIN = "mysql+pymysql://root@127.0.0.1:3306/"

#: portable column types -> per-database DDL type
TYPES = {
    "int": {"sqlite": "INTEGER", "postgresql": "INTEGER", "mariadb": "INT", "duckdb": "INTEGER"},
    "bigint": {"sqlite": "INTEGER", "postgresql": "BIGINT", "mariadb": "BIGINT", "duckdb": "BIGINT"},
    "text": {"sqlite": "TEXT", "postgresql": "TEXT", "mariadb": "VARCHAR(255)", "duckdb": "VARCHAR"},
    "real": {"sqlite": "REAL", "postgresql": "DOUBLE PRECISION", "mariadb": "DOUBLE", "duckdb": "DOUBLE"},
    "timestamp": {"sqlite": "TEXT", "postgresql": "TIMESTAMP", "mariadb": "DATETIME", "duckdb": "TIMESTAMP"},
    "date": {"sqlite": "TEXT", "postgresql": "DATE", "mariadb": "DATE", "duckdb": "DATE"},
}


class TestDatabase:
    """A throw-away database with an admin (read-write) engine for loading fixtures."""

    __test__ = False  # not a test class

    def __init__(self, kind: str, url: str, engine: sa.Engine, cleanup: Any):
        self.kind = kind
        self.url = url
        self.engine = engine
        self._cleanup = cleanup

    def run(self, *statements: str) -> None:
        with self.engine.begin() as conn:
            for statement in statements:
                conn.exec_driver_sql(statement)

    def scalar(self, sql: str) -> Any:
        with self.engine.connect() as conn:
            return conn.exec_driver_sql(sql).scalar()

    def create_table(self, name: str, columns: dict[str, str], rows: Iterable[Sequence[Any]] = ()) -> None:
        """CREATE TABLE ``name`` with portable ``columns`` {name: int|text|real|timestamp|date} and insert rows."""
        q = self.quote
        cols = ", ".join(f"{q(c)} {TYPES[t][self.kind]}" for c, t in columns.items())
        self.run(f"CREATE TABLE {q(name)} ({cols})")
        self.insert(name, list(columns), rows)

    def insert(self, name: str, columns: list[str], rows: Iterable[Sequence[Any]]) -> None:
        rows = [tuple(r) for r in rows]
        if not rows:
            return
        # duckdb-engine does not know every DuckDB keyword (``at``): quote each name there, as create_table does
        quote = True if self.kind == "duckdb" else None
        table = sa.table(name, *[sa.column(sa.sql.quoted_name(c, quote)) for c in columns])
        with self.engine.begin() as conn:
            conn.execute(table.insert(), [dict(zip(columns, r, strict=True)) for r in rows])

    def quote(self, name: str) -> str:
        return f"`{name}`" if self.kind == "mariadb" else f'"{name}"'

    def close(self) -> None:
        self.engine.dispose()
        self._cleanup()


def create_database(kind: str, tmp_path: Path) -> TestDatabase:
    """A fresh database of ``kind``: one of KINDS, or ``duckdb`` (a file; not in KINDS, its tests ask for it)."""
    name = f"wd_test_{uuid.uuid4().hex[:10]}"
    if kind == "duckdb":  # no pooled connection stays open: the sandbox opens the file read-only in this process
        url = f"duckdb:///{tmp_path / f'{name}.duckdb'}"
        return TestDatabase(kind, url, sa.create_engine(url, poolclass=NullPool), lambda: None)
    if kind == "sqlite":
        path = tmp_path / f"{name}.db"
        url = f"sqlite:///{path}"
        return TestDatabase(kind, url, sa.create_engine(url), lambda: None)
    admin_url = os.environ.get(
        "WATCHDOG_TEST_POSTGRES_URL" if kind == "postgresql" else "WATCHDOG_TEST_MARIADB_URL",
        POSTGRES_ADMIN if kind == "postgresql" else MARIADB_ADMIN,
    )
    admin = sa.create_engine(admin_url, isolation_level="AUTOCOMMIT")
    with admin.connect() as conn:
        conn.exec_driver_sql(f"CREATE DATABASE {name}")
    url = make_url(admin_url).set(database=name).render_as_string(hide_password=False)

    def drop() -> None:
        with admin.connect() as conn:
            if kind == "postgresql":
                conn.exec_driver_sql(f"DROP DATABASE IF EXISTS {name} WITH (FORCE)")
            else:
                conn.exec_driver_sql(f"DROP DATABASE IF EXISTS {name}")
        admin.dispose()

    return TestDatabase(kind, url, sa.create_engine(url), drop)
