"""``watchdog dashboard``: the static site drawn from a seeded history, rendered in a real headless Chromium
(Debian's package): no console errors, one chart point per run, hostile values inert in the rendered DOM,
a screenshot kept as an artifact."""

from __future__ import annotations

import shutil
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest

from tests.test_report_html import HOSTILE, Structure
from watchdog.report.charts import Point, series_svg

CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
RUNS = 4


def write_notes(db: Path, extra_bad: int) -> None:
    with sqlite3.connect(db) as conn:
        conn.execute("DROP TABLE IF EXISTS notes")
        conn.execute("CREATE TABLE notes (id INTEGER, body TEXT, status TEXT)")
        conn.executemany("INSERT INTO notes VALUES (?, ?, ?)", [(i, v, "bad") for i, v in enumerate(HOSTILE)])
        conn.executemany("INSERT INTO notes VALUES (?, ?, ?)",
                         [(100 + i, None if i < extra_bad else "fine", "ok") for i in range(10)])


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A project whose audit ran RUNS times on changing data (more null bodies each time); its dashboard
    (built once for the module: each test only reads it)."""
    root = tmp_path_factory.mktemp("dashboard") / "project"
    (root / "checks").mkdir(parents=True)
    (root / "checks" / "notes.yaml").write_text(
        "tables:\n  notes:\n    - accepted_values: {column: status, values: [ok]}\n"
        "    - not_null: {column: body, max_count: 2}\n    - row_count: {min: 1}\n")
    config = root / "watchdog.yaml"
    config.write_text(f"databases:\n  notes: {{url: 'sqlite:///{root / 'notes.db'}'}}\n"
                      "audits:\n  hostile<b>audit:\n    database: notes\n    checks: [checks/notes.yaml]\n"
                      f"    sample: {len(HOSTILE)}\n"
                      f"history: {{url: 'sqlite:///{root / 'history.db'}'}}\n")
    for n in range(RUNS):
        write_notes(root / "notes.db", extra_bad=n)
        run = subprocess.run([sys.executable, "-m", "watchdog", "run", "hostile<b>audit", "--config", str(config)],
                             capture_output=True, text=True, cwd=root, timeout=120)
        assert run.returncode in (0, 1), run.stderr
    built = subprocess.run([sys.executable, "-m", "watchdog", "dashboard", "--config", str(config), "--out",
                            str(root / "site")], capture_output=True, text=True, cwd=root, timeout=120)
    assert built.returncode == 0, built.stderr
    return root / "site"


def chromium(page: Path | str, tmp_path: Path, screenshot: Path | None = None) -> tuple[str, str]:
    """The DOM Chromium builds from ``page`` (a file, or a URL) and its log (JavaScript off is irrelevant:
    the pages have none)."""
    assert CHROMIUM, "Chromium is needed (Debian: apt-get install chromium; .ci/run installs it)"
    args = [CHROMIUM, "--headless", "--no-sandbox", "--disable-gpu", "--no-first-run", "--disable-sync",
            "--disable-background-networking", "--disable-component-update", "--enable-logging=stderr", "--v=0",
            f"--user-data-dir={tmp_path / 'chrome-profile'}", "--window-size=1200,1600"]
    args += [f"--screenshot={screenshot}"] if screenshot else ["--dump-dom"]
    target = page.as_uri() if isinstance(page, Path) else page
    done = subprocess.run([*args, target], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr[-2000:]
    return done.stdout, done.stderr


def test_the_dashboard_renders_in_chromium_with_one_point_per_run(site, tmp_path):
    pages = sorted(p.name for p in site.glob("*.html"))
    assert pages == ["hostile<b>audit.html", "index.html"]
    dom, log = chromium(site / "hostile<b>audit.html", tmp_path)
    assert "CONSOLE" not in log and "Uncaught" not in log, log[-2000:]
    page = Structure(dom)
    assert page.count("div", **{"class": "check", "id": "check-1"}) == 1
    charts = dom.split('<div class="check"')[1:]
    assert len(charts) == 2  # notes.row_count passed with the same figure in every run: one line, no chart
    assert page.count("li", **{"class": "flat-check"}) == 1 and "notes.row_count</code>: 19 rows (min 1)" in dom
    for chart in charts:
        assert chart.count('<circle class="point"') == RUNS
    # the null-body check crossed its threshold (max_count 2) on the way: its threshold line is drawn
    body = next(c for c in charts if "notes.body.not_null" in c)
    assert 'class="threshold"' in body and "failing rows" in body
    index, log = chromium(site / "index.html", tmp_path)
    assert Structure(index).count("span", **{"role": "listitem"}) == RUNS


def test_hostile_values_stay_text_in_the_rendered_dom(site, tmp_path):
    dom, _ = chromium(site / "hostile<b>audit.html", tmp_path)
    page = Structure(dom)
    tags = {tag for tag, _ in page.tags}
    assert "script" not in tags and "img" not in tags and "b" not in tags and "h1" in tags
    assert dom.count("<h2>") == 3  # Runs, Checks over time, Passed…: the injected "<h2>Injected</h2>" is text
    text = "".join(page.text)
    assert "<script>alert('x')</script>" in text and "<h2>Injected</h2>" in text and "hostile<b>audit" in text


def test_a_screenshot_is_kept_as_an_artifact(site, tmp_path):
    shot = tmp_path / "dashboard.png"
    chromium(site / "index.html", tmp_path, screenshot=shot)
    assert shot.is_file() and shot.stat().st_size > 5_000
    artifacts = Path(__file__).resolve().parent.parent / "reports" / "test-artifacts"
    artifacts.mkdir(parents=True, exist_ok=True)
    shutil.copy(shot, artifacts / "dashboard-index.png")


def test_series_svg_draws_gaps_threshold_and_escaped_labels():
    svg = str(series_svg([Point("r1", 1), Point("<r2>", None), Point("r3", 5, "fail")], threshold=2, title="<t>"))
    assert svg.count("<circle") == 2 and 'class="threshold"' in svg
    assert "<r2>" not in svg and "&lt;t&gt;" in svg
