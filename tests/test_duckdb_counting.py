"""The counting rules of every check type on DuckDB: the very tests of ``test_counting_rules.py``.

Each test there is collected here a second time with ``database`` a DuckDB file (loaded through
SQLAlchemy, then scanned read-only through the sandbox), so every hand-worked number must come out
the same on DuckDB as on SQLite, PostgreSQL and MariaDB.
"""

from __future__ import annotations

import pytest

from tests.dbs import TestDatabase
from tests.test_counting_rules import *  # noqa: F403 - the tests and their fixtures, run again on DuckDB


@pytest.fixture
def database(make_database) -> TestDatabase:
    """A fresh DuckDB database file (instead of each of SQLite, PostgreSQL and MariaDB)."""
    return make_database("duckdb")
