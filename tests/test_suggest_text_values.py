"""``suggest`` proposes table ``null_values`` (and ``trim_blanks``) and ``range … numeric_text: true`` with headroom,
on SQLite, PostgreSQL, MariaDB and DuckDB alike; every expected option below is worked out by hand from the rows.
"""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from tests.dbs import KINDS
from watchdog.profile.null_values import _judge
from watchdog.profile.stats import ColumnProfile
from watchdog.profile.suggest import profile_database, suggest_suite
from watchdog.sandbox import Sandbox
from watchdog.scan.scanner import scan
from watchdog.scan.suites import load_suite

ENGINES = (*KINDS, "duckdb")
SHOP = {"id": "int", "amount": "text", "region": "text", "note": "text", "seq": "text", "zip": "text"}


def _amount(i: int) -> str:
    """48 numbers (1.5 .. 88.5), '?' on multiples of 10, 'NA' on the other multiples of 5."""
    return "?" if i % 10 == 0 else "NA" if i % 5 == 0 else f"{i * 1.5}"


def _note(i: int) -> str:
    """57 different notes, '' twice (rows 30 and 60) and only spaces once (row 7): 3 blanks, 5% of 60."""
    return "" if i % 30 == 0 else "  " if i == 7 else f"note {i}"


def shop_rows() -> list[tuple]:
    regions = ["EU", "NA", "AS"]  # 'NA' is a region here: one of three values, 20 rows each
    return [(i, _amount(i), regions[i % 3], _note(i), str(i), str(10000 + i)) for i in range(1, 61)]


@pytest.fixture(params=ENGINES)
def url(request: pytest.FixtureRequest, make_database) -> str:
    db = make_database(request.param)
    db.create_table("shop", SHOP, shop_rows())
    db.create_table("raw", {"a": "text", "b": "text"}, [(f"a{i % 4}", f"{i}") for i in range(40)])  # a CSV load
    db.create_table("plain", {"id": "int", "qty": "int", "name": "text"}, [(i, i, f"n{i}") for i in range(40)])
    return db.url


def _entries(result, table: str) -> list[dict]:
    body = yaml.safe_load(result.text)["tables"][table]
    return body["checks"] if isinstance(body, dict) else body


def test_null_values_and_numeric_text_ranges_from_the_data(url: str, tmp_path: Path) -> None:
    with Sandbox(url) as box:
        result = suggest_suite(box, profile_database(box, ["shop", "raw", "plain"]))
        path = tmp_path / "suite.yaml"
        path.write_text(result.text, encoding="utf-8")
        doc = scan(box, load_suite(path).checks, sample=0)
    assert doc.summary.failed == 0 and doc.summary.errors == 0, [f for f in doc.findings if f.status != "pass"]
    shop = yaml.safe_load(result.text)["tables"]["shop"]
    # '?' and 'NA' stand among the numbers of amount; 'NA' is one of region's three values; row 7's note is spaces
    assert {k: v for k, v in shop.items() if k != "checks"} == {"null_values": ["", "?", "NA"], "trim_blanks": True}
    checks = shop["checks"]
    ranges = [c["range"] for c in checks if "range" in c and c["range"].get("numeric_text")]
    # amount: 1.5 .. 88.5, spread 87, margin 8.7: 0 (never below 0) .. 98; seq: all different: the floor only;
    # zip: a code, no range
    assert ranges == [{"column": "amount", "min": 0, "max": 98, "numeric_text": True},
                      {"column": "seq", "min": 0, "numeric_text": True}]
    accepted = [c["accepted_values"] for c in checks if "accepted_values" in c]
    assert accepted == [{"column": "region", "values": ["AS", "EU", "NA"], "null_values": ["", "?"]}]
    assert {"not_null": {"column": "note", "max_rate": 0.075}} in checks  # 3 of 60 (5%), with headroom
    assert not any(c.get("not_null") == "amount" for c in checks)  # 12 of 60 missing
    assert "'?' in amount 10.0% of rows: a missing value, as it stands among numbers" in result.text
    assert "'NA' is a value in region (one of few values there)" in result.text
    # amount: the mean of 1.5 x (1..59 but the multiples of 5) is 45.0; 10% of the spread (8.7) on each side, rounded
    # outward: 36..54; 12 of 60 rows missing (20%, too many for not_null): null_rate with max 1.5 x 20%. No average of
    # seq, id or qty (all-different whole numbers) nor of zip (a code)
    metrics = [c["metric"] for c in checks if "metric" in c]
    assert metrics == [{"column": "amount", "agg": "avg", "numeric_text": True, "min": 36, "max": 54},
                       {"column": "amount", "agg": "null_rate", "max": 0.3}]
    assert "# average 45 today over values 1.5..88.5; bounds 36..54 leave 10% of the spread on each side" in result.text
    assert not any("metric" in c for c in _entries(result, "plain"))
    raw = yaml.safe_load(result.text)["tables"]["raw"]
    assert raw["null_values"] == [""] and "every column is text, numbers too (b)" in result.text
    assert isinstance(yaml.safe_load(result.text)["tables"]["plain"], list)  # a typed table: no options


def test_no_markers_no_marker_null_values(url: str) -> None:
    """With no marker list, '?' and 'NA' are values: amount is 80% numbers, under the 90% a range needs."""
    with Sandbox(url) as box:
        result = suggest_suite(box, profile_database(box, ["shop"], null_markers=[]))
    shop = yaml.safe_load(result.text)["tables"]["shop"]
    assert shop["null_values"] == [""] and shop["trim_blanks"] is True
    assert [c["range"]["column"] for c in shop["checks"] if c.get("range", {}).get("numeric_text")] == ["seq"]


def test_the_cli_writes_the_options_and_the_suite_scans(make_database, run_cli, tmp_path: Path) -> None:
    db = make_database("sqlite")
    db.create_table("shop", SHOP, shop_rows())
    out = tmp_path / "shop.yaml"
    made = run_cli("suggest", "--db", db.url, "--out", str(out), "--null-markers", "?")
    assert made.returncode == 0, made.stderr
    shop = yaml.safe_load(out.read_text())["tables"]["shop"]
    assert shop["null_values"] == ["", "?"]
    # 'NA' is a value now, so the rest of amount is 48 numbers of 54 (under 90%); but 50 different values vary
    assert "'?' in amount 10.0% of rows: a missing value, as it repeats where the values vary" in out.read_text()
    scanned = run_cli("scan", "--db", db.url, "--checks", str(out), "--out", str(tmp_path / "run"))
    assert scanned.returncode == 0, scanned.stdout + scanned.stderr


def _col(**kw) -> ColumnProfile:
    return ColumnProfile("c", "TEXT", "text", True, blanks=0, empty=0, **kw)


def test_when_a_marker_is_a_missing_value() -> None:
    among_numbers = _col(nonnull=100, numbers=90, markers={"?": 10}, distinct=50)
    assert "stands among numbers" in (_judge(among_numbers, "?") or "")
    a_number_itself = _col(nonnull=100, numbers=100, markers={"-1": 10}, number_markers=["-1"], distinct=50)
    assert _judge(a_number_itself, "-1") is None  # '-1' among numbers cannot be told from one
    many_values = _col(nonnull=100, numbers=0, markers={"N/A": 10}, distinct=91)
    assert "repeats where the values vary" in (_judge(many_values, "N/A") or "")
    few_values = _col(nonnull=100, numbers=0, markers={"NA": 30}, distinct=3, top_values=[("NA", 30)])
    assert _judge(few_values, "NA") is None
    nothing_else = _col(nonnull=100, numbers=0, markers={"-": 100}, distinct=1, top_values=[("-", 100)])
    assert _judge(nothing_else, "-") == "the column holds nothing else"
