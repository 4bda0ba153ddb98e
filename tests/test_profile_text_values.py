"""The profile's blanks, null markers (a configurable list) and numbers stored as text, on SQLite, PostgreSQL,
MariaDB and DuckDB alike. Every expected figure is counted by hand from the rows below."""

from __future__ import annotations

import json

import pytest

import watchdog
from tests.dbs import KINDS
from watchdog.errors import ConfigError
from watchdog.profile.suggest import profile_database
from watchdog.sandbox import Sandbox

ENGINES = (*KINDS, "duckdb")
COLUMNS = {"id": "int", "v": "text", "n": "text", "empty_col": "text"}
# id  v        n           empty_col
ROWS = [
    (1, "", " 1e3 ", None),    # '' is blank; 1000 with surrounding blanks is a number
    (2, "  ", "1,000", None),  # only spaces: blank; a locale separator is not a number
    (3, "?", "-0", None),      # a marker; minus zero is a number (0)
    (4, "N/A", "", None),      # a marker; '' is blank, not a number
    (5, "null", "12.5", None),  # a marker (default list); a number
    (6, "Null", "abc", None),  # not a marker (case); not a number
    (7, "n.a.", "\t2001\n", None),  # not a marker; a number with a tab and a line feed around it
    (8, None, None, None),     # NULL: neither blank, marker nor number
    (9, "-1", "-1", None),     # '-1' is a marker only when listed; a number
]


@pytest.fixture(params=ENGINES)
def url(request: pytest.FixtureRequest, make_database) -> str:
    db = make_database(request.param)
    db.create_table("m", COLUMNS, ROWS)
    db.create_table("nothing", COLUMNS, [])
    return db.url


def test_blanks_markers_and_numbers_as_text_are_counted_exactly(url: str) -> None:
    with Sandbox(url) as box:
        sent: list[str] = []
        box.on_execute(sent.append)
        [m] = profile_database(box, ["m"])
    v, n = m.column("v"), m.column("n")
    assert (v.blanks, v.empty, v.blank_rate) == (2, 1, round(2 / 9, 6))
    assert v.markers == {"?": 1, "N/A": 1, "null": 1} and v.marker_rate == round(3 / 9, 6)
    assert (v.numbers, v.numeric_text, v.numeric_min, v.numeric_max) == (1, 0.125, -1.0, -1.0)
    # n: ' 1e3 ', '-0', '12.5', '\t2001\n', '-1' are numbers: 5 of 8 non-null values
    assert (n.numbers, n.numeric_text, n.numeric_min, n.numeric_max) == (5, 0.625, -1.0, 2001.0)
    assert (n.blanks, n.empty, n.markers) == (1, 1, {})
    assert m.column("id").numeric_text is None and m.column("id").blank_rate is None
    # the number rule and the marker counts ride in the pass that counts the shapes: two statements on the table,
    # plus one GROUP BY per low-cardinality column (v, n, id: 9 distinct values or fewer)
    catalog = ("information_schema", "pragma_", "pg_", "duckdb_", "sqlite_master")
    reads = [s for s in sent if not any(c in s.lower() for c in catalog)]
    assert len(reads) == 2 + 3, reads


def test_a_configured_marker_list_replaces_the_default(url: str) -> None:
    """'-1' listed: a marker equal to a real value is counted as a marker, and it is also a number."""
    with Sandbox(url) as box:
        [m] = profile_database(box, ["m"], null_markers=["?", "-1", "", "Null"])
    v, n = m.column("v"), m.column("n")
    assert v.markers == {"?": 1, "-1": 1, "Null": 1} and v.marker_rate == round(3 / 9, 6)
    assert v.number_markers == ["-1"] and n.markers == {"-1": 1} and n.number_markers == ["-1"]
    assert v.blanks == 2  # '' listed is a blank, counted once as a blank, never as a marker
    assert m.null_markers == ["?", "-1", "Null"]
    with Sandbox(url) as box:
        [none] = profile_database(box, ["m"], null_markers=[])
    assert none.column("v").markers == {} and none.column("v").marker_rate == 0.0


def test_an_empty_table_and_an_all_null_column(url: str) -> None:
    with Sandbox(url) as box:
        [m, nothing] = profile_database(box, ["m", "nothing"])
    empty_col = m.column("empty_col")
    assert (empty_col.nulls, empty_col.blanks, empty_col.markers, empty_col.numbers) == (9, 0, {}, 0)
    assert empty_col.numeric_text is None and empty_col.numeric_min is None
    assert nothing.rows == 0 and nothing.column("n").numeric_text is None and nothing.column("n").blank_rate is None


def test_the_api_and_the_cli_take_a_marker_list(make_database, run_cli) -> None:
    db = make_database("sqlite")
    db.create_table("m", COLUMNS, ROWS)
    [m] = watchdog.profile_database(db.url, "m", null_markers=["n.a.", "Null"])
    assert m.column("v").markers == {"Null": 1, "n.a.": 1}
    shown = run_cli("profile", "--db", db.url, "--json", "--null-markers", "n.a.,Null")
    assert shown.returncode == 0, shown.stderr
    v = next(c for c in json.loads(shown.stdout)["tables"][0]["columns"] if c["name"] == "v")
    assert v["markers"] == {"n.a.": 1, "Null": 1} and v["numeric_text"] == 0.125
    table = run_cli("profile", "--db", db.url, "--null-markers", "?", env={"COLUMNS": "200"})
    assert "markers 11.1% (? 1)" in table.stdout and "numbers as text 62.5%" in table.stdout
    with pytest.raises(ConfigError, match="null_markers"):
        watchdog.profile_database(db.url, null_markers=["?", 3])  # type: ignore[list-item]
