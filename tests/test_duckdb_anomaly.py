"""The bucketed and history anomaly tests of ``test_anomaly.py``, with ``database`` a DuckDB file."""

from __future__ import annotations

import pytest

from tests.dbs import TestDatabase
from tests.test_anomaly import (  # noqa: F401 - collected again here, on DuckDB
    test_bucketed_anomalies_judge_complete_buckets_only,
    test_bucketed_anomaly_on_an_empty_table_and_on_the_first_day,
    test_explicit_thresholds_still_apply_with_an_anomaly,
    test_history_anomaly_first_run_one_run_and_a_drift,
    test_hour_and_week_buckets_and_bucketed_freshness,
)


@pytest.fixture
def database(make_database) -> TestDatabase:
    """A fresh DuckDB database file (instead of each of SQLite, PostgreSQL and MariaDB)."""
    return make_database("duckdb")
