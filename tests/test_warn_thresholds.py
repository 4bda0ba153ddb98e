"""Warn and fail thresholds on one check (``max_count: 100, warn: {max_count: 10}``), on SQLite, PostgreSQL,
MariaDB and DuckDB alike; every expected status below is worked out by hand from the rows."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.dbs import KINDS
from watchdog.sandbox import Sandbox
from watchdog.scan.scanner import scan
from watchdog.scan.suites import SuiteError, load_suites

ENGINES = (*KINDS, "duckdb")
# 30 rows: email NULL in rows 1-12 (5 of them in region a, rows 1-5; 7 of the 25 in region b); rows 13 and 14
# share an email (a duplicated group of 2); score negative in rows 1 and 2
ROWS = [(i, None if i <= 12 else ("dup@x.io" if i in (13, 14) else f"u{i}@x.io"), "a" if i <= 5 else "b",
         -1 if i <= 2 else i) for i in range(1, 31)]

SUITE = """
tables:
  people:
    - not_null: {column: email, name: over_fail, max_count: 10, warn: {max_count: 3}}      # 12 > 10: fail
    - not_null: {column: email, name: over_warn, max_count: 20, warn: {max_count: 10}}     # 12 > 10: warn
    - not_null: {column: email, name: on_warn_edge, max_count: 20, warn: {max_count: 12}}  # 12 is not > 12
    - not_null: {column: email, name: warn_only, warn: {max_rate: 0.3}}                    # 0.4 > 0.3: warn
    - not_null: {column: email, name: warn_only_b, where: "region = 'b'", warn: {max_rate: 0.3}}  # 7/25 = 0.28
    - not_null: {column: email, name: rate_and_count, max_rate: 0.5, warn: {max_count: 20, max_rate: 0.3}}  # 0.4: warn
    - range: {column: score, min: 0, name: range_warn, max_count: 5, warn: {max_count: 0}}  # 2 rows: warn
    - unique: {column: email, name: unique_warn, max_count: 5, warn: {max_count: 1}}       # 2 rows: warn
    - not_null: {column: email, name: plain}                                               # any row: fail
"""

EXPECTED = {
    "over_fail": ("fail", 12), "over_warn": ("warn", 12), "on_warn_edge": ("pass", 12), "warn_only": ("warn", 12),
    "warn_only_b": ("pass", 7), "rate_and_count": ("warn", 12), "range_warn": ("warn", 2),
    "unique_warn": ("warn", 2), "plain": ("fail", 12),
}


def checks_of(tmp_path: Path, text: str) -> list:
    path = tmp_path / "suite.yaml"
    path.write_text(text, encoding="utf-8")
    return [check for suite in load_suites([path]) for check in suite.checks]


@pytest.mark.parametrize("kind", ENGINES)
def test_a_check_fails_above_its_thresholds_and_warns_above_warn(kind, make_database, tmp_path):
    db = make_database(kind)
    db.create_table("people", {"id": "int", "email": "text", "region": "text", "score": "int"}, ROWS)
    with Sandbox(db.url) as sandbox:
        doc = scan(sandbox, checks_of(tmp_path, SUITE), sample=3)
    found = {f.name: f for f in doc.findings}
    assert {name: (f.status, f.failing) for name, f in found.items()} == EXPECTED
    assert found["over_warn"].severity == "fail"  # the severity of a breach; warn: said it warns
    assert found["over_warn"].params["warn"] == {"max_count": 10}
    assert len(found["over_warn"].sample) == 3  # a warning check shows its failing rows, as a failing one does
    assert (doc.summary.failed, doc.summary.warned) == (2, 5)


BAD = [
    ("    - not_null: {column: a, warn: {}}\n", ["suite.yaml:3", "give max_count, max_rate or both"]),
    ("    - not_null: {column: a, max_count: 100, warn: {max_count: 200}}\n",
     ["suite.yaml:3", "warn.max_count (200) is above max_count (100)", "give warn a lower max_count"]),
    ("    - not_null: {column: a, max_rate: 0.1, warn: {max_rate: 0.2}}\n", ["suite.yaml:3", "warn.max_rate"]),
    ("    - unique: {column: a, max_count: 1, warn: {max_count: 2}}\n", ["suite.yaml:3", "warn.max_count (2)"]),
    ("    - not_null: {column: a, severity: warn, warn: {max_count: 2}}\n",
     ["suite.yaml:3", "drop severity: warn"]),
    ("    - not_null: {column: a, warn: {max_cnt: 2}}\n", ["suite.yaml:3", "warn.max_cnt", "max_count"]),
    ("    - row_count: {min: 1, warn: {max_count: 2}}\n", ["suite.yaml:3", "unknown option 'warn'"]),
]


@pytest.mark.parametrize(("check", "said"), BAD)
def test_bad_warn_thresholds_name_file_line_and_what_to_do(check, said, tmp_path):
    with pytest.raises(SuiteError) as caught:
        checks_of(tmp_path, "tables:\n  t:\n" + check)
    message = str(caught.value)
    for part in said:
        assert part in message, message
