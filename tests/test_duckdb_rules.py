"""The database tests of the rule, semantics, samples, batching and anomaly modules, again on DuckDB.

Every test there that takes the ``database`` fixture is collected here a second time, with ``database``
a DuckDB file; two are left out because their data is written per database kind (below).
"""

from __future__ import annotations

import inspect

import pytest

from tests.dbs import TestDatabase
from tests.test_anomaly import *  # noqa: F403
from tests.test_batching import *  # noqa: F403
from tests.test_rules import *  # noqa: F403
from tests.test_samples import *  # noqa: F403
from tests.test_semantics import *  # noqa: F403

#: tests whose data is keyed by database kind (a DATE type, a denied function per kind): none for DuckDB
NOT_ON_DUCKDB = {"test_schema_declared_columns_and_generic_types", "test_an_expression_goes_through_the_sandbox"}

for _name in [n for n in list(globals()) if n.startswith("test_")]:
    _test = globals()[_name]
    if _name in NOT_ON_DUCKDB or "database" not in inspect.signature(_test).parameters:
        del globals()[_name]


@pytest.fixture
def database(make_database) -> TestDatabase:
    """A fresh DuckDB database file (instead of each of SQLite, PostgreSQL and MariaDB)."""
    return make_database("duckdb")
