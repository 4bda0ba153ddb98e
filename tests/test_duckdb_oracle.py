"""Great Expectations' own test cases (``test_oracle_great_expectations.py``) with DuckDB as the backend.

Every case compared on PostgreSQL (same count rule, same outcome) runs again on a DuckDB file holding
the same GX datasets, and must give GX's failing count and pass/fail, or, where GX raises, an error.
``DUCKDB_DIFFERS`` lists the cases DuckDB answers otherwise, each with the reason.
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from tests.dbs import create_database
from tests.test_oracle_great_expectations import COMPARED, TABLES, Case, assert_as_great_expectations, run_case
from watchdog.sandbox import Sandbox

#: case key -> why DuckDB's answer differs (none may differ silently)
DUCKDB_DIFFERS: dict[str, str] = {}
CASES = [c for c in COMPARED if c.backend == "postgresql" and c.key not in DUCKDB_DIFFERS]


@pytest.fixture(scope="module")
def duckdb_box(tmp_path_factory) -> Iterator[Sandbox]:
    db = create_database("duckdb", tmp_path_factory.mktemp("gx_duckdb"))
    for table in TABLES:
        db.create_table(table.name, table.columns, table.rows)
    db.engine.dispose()
    with Sandbox(db.url) as box:
        yield box
    db.close()


@pytest.mark.parametrize("case", [pytest.param(c, id=c.key) for c in CASES])
def test_duckdb_counts_as_great_expectations(case: Case, duckdb_box, tmp_path):
    assert_as_great_expectations(case, run_case(case, duckdb_box, tmp_path), "DuckDB")


def test_dozens_of_cases_run_on_duckdb():
    assert len(CASES) >= 40
    assert {next(iter(c.entry)) for c in CASES} == {  # type: ignore[arg-type]
        "not_null", "accepted_values", "pattern", "range", "unique", "row_count"}
