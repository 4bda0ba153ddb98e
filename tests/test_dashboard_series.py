"""The dashboard's charts in a real headless Chromium: problems first, flat all-passing series collapsed into
one line each, value and time axes with values, thresholds written as in the reports. Real audit runs on a
real SQLite database; the screenshot is kept as an artifact."""

from __future__ import annotations

import re
import shutil
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest

from tests.test_dashboard import chromium
from tests.test_report_html import Structure
from watchdog.report.charts import Point, series_svg

RUNS = 4


def write_shop(db: Path, run: int) -> None:
    """orders: 20 rows; ``run`` NULL emails (0, 1, 2, 3: the tolerated check crosses max_count 2 at run 3),
    a duplicate id in every run; the row count and the statuses never change."""
    with sqlite3.connect(db) as conn:
        conn.execute("DROP TABLE IF EXISTS orders")
        conn.execute("CREATE TABLE orders (id INTEGER, email TEXT, status TEXT)")
        conn.executemany("INSERT INTO orders VALUES (?, ?, ?)",
                         [(i, None if i <= run else f"u{i}@x.io", "ok") for i in range(1, 20)] + [(1, "d@x.io", "ok")])


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("dashboard-series") / "project"
    (root / "checks").mkdir(parents=True)
    (root / "checks" / "shop.yaml").write_text(
        "tables:\n  orders:\n    - not_null: {column: email, max_count: 10, name: lenient}\n"
        "    - row_count: {min: 1}\n    - accepted_values: {column: status, values: [ok]}\n"
        "    - not_null: {column: email, max_count: 2}\n    - unique: id\n")
    config = root / "watchdog.yaml"
    config.write_text(f"databases:\n  shop: {{url: 'sqlite:///{root / 'shop.db'}'}}\n"
                      "audits:\n  shop:\n    database: shop\n    checks: [checks/shop.yaml]\n"
                      f"history: {{url: 'sqlite:///{root / 'history.db'}'}}\n")
    for n in range(RUNS):
        write_shop(root / "shop.db", n)
        run = subprocess.run([sys.executable, "-m", "watchdog", "run", "shop", "--config", str(config)],
                             capture_output=True, text=True, cwd=root, timeout=120)
        assert run.returncode == 1, run.stderr  # the duplicate id fails every run
    built = subprocess.run([sys.executable, "-m", "watchdog", "dashboard", "--config", str(config), "--out",
                            str(root / "site")], capture_output=True, text=True, cwd=root, timeout=120)
    assert built.returncode == 0, built.stderr
    return root / "site"


def test_problems_come_first_and_flat_passing_series_are_one_line(site, tmp_path):
    dom, log = chromium(site / "shop.html", tmp_path)
    assert "CONSOLE" not in log and "Uncaught" not in log, log[-2000:]
    charts = dom.split('<div class="check"')[1:]
    names = [re.search(r"<h3>([^<]+)</h3>", chart).group(1) for chart in charts]
    # what fails in the newest run first (suite order: not_null crossed max 2 there, unique fails always),
    # then the passing check whose figure moved (first in the suite)
    assert names == ["orders.email.not_null", "orders.id.unique", "lenient"], names
    for chart in charts:
        assert chart.count('<circle class="point"') == RUNS
    page = Structure(dom)
    assert page.count("li", **{"class": "flat-check"}) == 2
    flat = dom.split('<ul class="flat">', 1)[1].split("</ul>", 1)[0]
    assert "orders.row_count" in flat and "20 rows (min 1) in 4 run(s)" in flat
    assert "orders.status.accepted_values" in flat and "0 failing rows in 4 run(s)" in flat


def test_charts_have_axes_with_values_and_the_threshold_as_in_the_reports(site, tmp_path):
    dom, _ = chromium(site / "shop.html", tmp_path)
    email = next(c for c in dom.split('<div class="check"')[1:] if "orders.email.not_null" in c)
    ticks = re.findall(r'<text class="tick"[^>]*>([^<]+)</text>', email)
    assert ticks[:2] == ["3", "0"]               # the value axis: highest and lowest figure
    assert re.fullmatch(r"\d\d-\d\d \d\d:\d\d", ticks[2]) and re.fullmatch(r"\d\d-\d\d \d\d:\d\d", ticks[3])
    assert email.count('class="axis"') == 2 and 'class="threshold"' in email
    assert "threshold 2 (dashed)" in email and "3 failing rows (max 2)" in email


def test_a_screenshot_shows_the_charts(site, tmp_path):
    shot = tmp_path / "series.png"
    chromium(site / "shop.html", tmp_path, screenshot=shot)
    assert shot.is_file() and shot.stat().st_size > 5_000
    artifacts = Path(__file__).resolve().parent.parent / "reports" / "test-artifacts"
    artifacts.mkdir(parents=True, exist_ok=True)
    shutil.copy(shot, artifacts / "dashboard-series.png")


def test_a_flat_line_at_zero_has_a_value_axis_from_zero():
    svg = str(series_svg([Point("20261201T010203Z-a", 0), Point("20261202T010203Z-b", 0)], axes="{:g}".format,
                         width=300, height=110))
    assert re.findall(r'<text class="tick"[^>]*>([^<]+)</text>', svg) == ["1", "0", "12-01 01:02", "12-02 01:02"]
