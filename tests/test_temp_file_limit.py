"""PostgreSQL: a statement's temporary files are bounded by ``temp_file_limit`` when the role may set it."""

from __future__ import annotations

import uuid

import pytest

from watchdog.errors import QueryError
from watchdog.sandbox import Sandbox, limits

#: a sort of two million integers spills far more than 1 MB to temporary files with the default work_mem
SPILL = "SELECT count(*) FROM (SELECT g FROM generate_series(1, 2000000) AS g ORDER BY g DESC OFFSET 0) AS x"


def test_superuser_statement_is_stopped_at_the_temp_file_limit(make_database, monkeypatch):
    db = make_database("postgresql")
    monkeypatch.setattr(limits, "TEMP_FILE_LIMIT_KB", 1024)
    with Sandbox(db.url, timeout_s=30) as box:
        assert box.query("SELECT current_setting('temp_file_limit')").scalar() == "1MB"
        with pytest.raises(QueryError, match="temp_file_limit"):
            box.query(SPILL)
        assert box.query("SELECT 1").scalar() == 1  # the session is still usable


def test_default_bound_is_set_for_a_superuser(make_database):
    db = make_database("postgresql")
    with Sandbox(db.url, timeout_s=30) as box:
        assert box.query("SELECT current_setting('temp_file_limit')").scalar() == "1GB"


def test_role_that_may_not_set_it_still_reads(make_database):
    db = make_database("postgresql")
    role = f"wd_plain_{uuid.uuid4().hex[:8]}"
    db.run(f"CREATE ROLE {role} LOGIN NOSUPERUSER")
    try:
        url = db.url.replace("postgres@", f"{role}@", 1)
        with Sandbox(url, timeout_s=30) as box:
            assert box.query("SELECT current_setting('temp_file_limit')").scalar() == "-1"
            assert box.query("SELECT count(*) FROM generate_series(1, 1000)").scalar() == 1000
    finally:
        db.run(f"DROP ROLE {role}")
