"""``suggest`` does not overfit: range headroom, low-support rules left out, near-dependencies kept commented out.

Rules are tested on profiles built by hand (one rule at a time), then end to end on a real SQLite database:
the suggested suite still passes when the table grows by rows drawn from its own distribution
(``bench/grow.py``).
"""

from __future__ import annotations

import shutil
import sqlite3
from pathlib import Path

import pytest
import yaml

from bench.grow import grow
from watchdog.profile.fds import fd_candidates
from watchdog.profile.rules import headroom, rules
from watchdog.profile.stats import ColumnProfile, TableProfile
from watchdog.profile.suggest import profile_database, suggest_suite
from watchdog.sandbox import Sandbox
from watchdog.scan.scanner import scan
from watchdog.scan.suites import load_suite


def table(rows: int, *columns: ColumnProfile, key: list[str] | None = None) -> TableProfile:
    return TableProfile("t", rows, list(columns), key or [], [])


def kinds(profile: TableProfile, column: str, strictness: str = "normal") -> dict[str, dict]:
    return {c.kind: c.options for c in rules(profile, {"t": profile}, strictness) if c.column == column}


@pytest.mark.parametrize("low, high, widened", [
    ((0.99, 25.86), None, (0, 29)),           # money: a floor at 0, a round ceiling above today's maximum
    ((1071, 5286953), None, (0, 5_900_000)),
    ((-5, 5), None, (-6, 6)),                 # a signed column is widened below too
    ((0.05, 0.128), None, (0.042, 0.136)),
    ((3, 3), None, (3, 3)),                   # no spread, no headroom
])
def test_headroom_rule(low, high, widened) -> None:
    assert headroom(*low) == pytest.approx(widened)


def test_range_bounds_leave_headroom_and_say_so() -> None:
    total = ColumnProfile("Total", "NUMERIC", "real", True, min=0.99, max=25.86, distinct=100, distinct_method="exact")
    (cand,) = [c for c in rules(table(412, total), {}) if c.kind == "range"]
    assert (cand.options["min"], cand.options["max"]) == (0, 29)
    assert "observed min 0.99, max 25.86" in cand.evidence and "10% of the spread" in cand.evidence
    day = ColumnProfile("day", "DATE", "date", True, min="2021-01-01", max="2025-12-22")
    (dates,) = [c for c in rules(table(412, day), {}) if c.kind == "range"]
    assert dates.options == {"column": "day", "min": "2020-07-03"}  # 10% of the span (182 days) earlier


def test_low_support_rules_are_not_proposed() -> None:
    title = ColumnProfile("Title", "TEXT", "text", True, distinct=3, distinct_method="exact",
                          top_values=[("Manager", 4), ("Agent", 3), ("Staff", 1)])
    small = table(8, title)
    assert "accepted_values" not in kinds(small, "Title")  # 8 rows: too few
    seen_once = table(300, ColumnProfile("Title", "TEXT", "text", True, distinct=3, distinct_method="exact",
                                         top_values=[("Manager", 200), ("Agent", 99), ("Staff", 1)]))
    assert "accepted_values" not in kinds(seen_once, "Title")  # a value seen once: more unseen ones will come
    enough = table(300, ColumnProfile("Title", "TEXT", "text", True, distinct=3, distinct_method="exact",
                                      top_values=[("Manager", 200), ("Agent", 98), ("Staff", 2)]))
    assert kinds(enough, "Title")["accepted_values"]["values"] == ["Agent", "Manager", "Staff"]
    price = ColumnProfile("price", "REAL", "real", True, min=1.0, max=9.0)
    assert "range" not in kinds(table(8, price), "price") and "range" in kinds(table(300, price), "price")


def test_unique_only_on_identifiers() -> None:
    def text(name: str, shapes: dict[str, float] | None = None) -> ColumnProfile:
        return ColumnProfile(name, "TEXT", "text", True, distinct=347, distinct_method="exact", shapes=shapes or {})
    assert "unique" not in kinds(table(347, text("Title")), "Title")  # titles repeat in the world
    assert "unique" not in kinds(table(347, text("Name")), "Name")
    assert "unique" in kinds(table(347, text("Email", {"email": 1.0})), "Email")
    assert "unique" in kinds(table(347, text("contact", {"email": 1.0})), "contact")  # shaped like an email
    assert "unique" in kinds(table(347, text("ProductCode")), "ProductCode")
    assert "unique" in kinds(table(347, text("Title"), key=["Title"]), "Title")  # a declared key stays one


def test_dependencies_need_support() -> None:
    x = ColumnProfile("x", "TEXT", "text", True, distinct=4, distinct_method="exact")
    y = ColumnProfile("y", "TEXT", "text", True, distinct=3, distinct_method="exact")
    assert fd_candidates(table(8, x, y)) == []  # 4 rows repeat a value of x: chance, not a rule
    assert {(c.options["determinant"][0], c.options["dependent"]) for c in fd_candidates(table(200, x, y))} >= {
        ("x", "y")}


def _sites(db: Path, rows: int = 400) -> None:
    conn = sqlite3.connect(db)
    conn.execute("CREATE TABLE sites (id INTEGER PRIMARY KEY, zip TEXT, city TEXT, state TEXT, amount REAL)")
    cities = [("10001", "New York", "NY"), ("60601", "Chicago", "IL"), ("94105", "San Francisco", "CA"),
              ("73301", "Austin", "TX"), ("02108", "Boston", "MA")]
    out = []
    for i in range(1, rows + 1):
        zip_code, city, state = cities[i % len(cities)]
        if i % 20 == 0:
            state = "ZZ"  # city -> state holds on 95% of rows: a near-dependency
        # amounts as money has them: many small ones, a thin tail of large ones
        out.append((i, zip_code, city, state, round(10 + (i * 7919 % 1000) ** 2 / 10_000, 2)))
    conn.executemany("INSERT INTO sites VALUES (?, ?, ?, ?, ?)", out)
    conn.commit()
    conn.close()


def test_near_dependency_is_written_commented_out_with_its_failure(tmp_path: Path) -> None:
    db = tmp_path / "sites.db"
    _sites(db)
    with Sandbox(f"sqlite:///{db}") as box:
        result = suggest_suite(box, profile_database(box), kinds=["functional_dependency"])
    near = [c for c in result.commented if c.options.get("dependent") == "state"]
    assert near and all(c.status == "fail" for c in near)
    text = result.text
    assert "# - functional_dependency: {determinant: [city], dependent: state}" in text
    assert "city nearly determines state: holds on 95% of 400 rows" in text
    assert "FAILS on today's data: 20 of 400 rows fail (5%)" in text
    active = yaml.safe_load(text)["tables"]["sites"]
    assert {"functional_dependency": {"determinant": ["zip"], "dependent": "city"}} in active


def test_suggested_suite_survives_growth_from_the_same_distribution(tmp_path: Path) -> None:
    db = tmp_path / "sites.db"
    _sites(db)
    suite = tmp_path / "suite.yaml"
    with Sandbox(f"sqlite:///{db}") as box:
        suite.write_text(suggest_suite(box, profile_database(box)).text, encoding="utf-8")
    ranges = [c for c in load_suite(suite).checks if c.kind == "range"]
    assert [(c.options.min, c.options.max) for c in ranges] == [(0, 120)]  # observed 10.0 .. 109.8, + 10% of spread
    for seed in (1, 2, 3):
        grown = tmp_path / f"grown{seed}.db"
        shutil.copy(db, grown)
        added = grow(grown, 0.1, seed)
        assert added == {"sites": 40}
        with Sandbox(f"sqlite:///{grown}") as box:
            doc = scan(box, load_suite(suite).checks, sample=0)
        assert [f.name for f in doc.findings if f.status != "pass"] == []


def test_growth_is_seeded(tmp_path: Path) -> None:
    a, b = tmp_path / "a.db", tmp_path / "b.db"
    _sites(a)
    shutil.copy(a, b)
    grow(a, 0.1, 7)
    grow(b, 0.1, 7)
    read = "SELECT * FROM sites ORDER BY id"
    assert sqlite3.connect(a).execute(read).fetchall() == sqlite3.connect(b).execute(read).fetchall()
    assert sqlite3.connect(a).execute("SELECT count(*), max(id) FROM sites").fetchone() == (440, 440)
