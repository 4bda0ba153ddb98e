"""Owners and tags shown where people read a run: report.md, report.html, the terminal table and the dashboard
(its pages rendered by a real headless Chromium). Owner and tag names are data: a hostile one stays text."""

from __future__ import annotations

import os
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest

from tests.test_dashboard import chromium
from tests.test_report_html import Structure
from watchdog.findings import FindingsDoc
from watchdog.report import render_markdown
from watchdog.report.html import render_html
from watchdog.run.scan_run import run_scan

HOSTILE_OWNER = "<img src=x onerror=alert(1)>|`x`"
SUITE = f"""\
owner: "@data-platform"
tags: [shop]
tables:
  orders:
    tags: [finance]
    checks:
      - not_null: amount
      - not_null: {{column: email, tags: [pii], owners: ["@alice", "@bob"]}}
      - not_null: id
  notes:
    checks:
      - not_null: {{column: body, owner: {HOSTILE_OWNER!r}, tags: ["<b>bold</b>"]}}
"""


def build_shop(db: Path, missing_amounts: int = 1) -> None:
    with sqlite3.connect(db) as conn:
        conn.execute("DROP TABLE IF EXISTS orders")
        conn.execute("DROP TABLE IF EXISTS notes")
        conn.execute("CREATE TABLE orders (id INTEGER, amount INTEGER, email TEXT)")
        conn.executemany("INSERT INTO orders VALUES (?, ?, ?)",
                         [(i, None if i < missing_amounts else 5, None if i == 3 else "a@x.io") for i in range(6)])
        conn.execute("CREATE TABLE notes (id INTEGER, body TEXT)")
        conn.executemany("INSERT INTO notes VALUES (?, ?)", [(1, None), (2, "ok")])


@pytest.fixture
def doc(tmp_path: Path) -> FindingsDoc:
    build_shop(tmp_path / "shop.db")
    (tmp_path / "s.yaml").write_text(SUITE)
    return run_scan(f"sqlite:///{tmp_path / 'shop.db'}", [tmp_path / "s.yaml"], out_dir=tmp_path / "out").doc


def test_report_md_names_the_owners_of_the_problems_and_each_problem_s_labels(doc):
    text = render_markdown(doc)
    assert ("**Owners of the problem checks:** `@data-platform` (1), `@alice` (1), `@bob` (1), "
            "`` <img src=x onerror=alert(1)>\\|`x` `` (1).") in text
    section = text.split("### `orders.email.not_null` (FAIL)", 1)[1].split("###", 1)[0]
    assert "Owners: `@alice`, `@bob` · Tags: `shop`, `finance`, `pii`" in section
    assert "Owner: `@data-platform` · Tags: `shop`, `finance`" in text.split("### `orders.amount.not_null`")[1]
    assert text.count("<img") == text.count("`` <img") == 2  # only inside code spans


def test_report_html_shows_owners_and_tags_as_inert_labels(doc):
    page = Structure(render_html(doc))
    assert page.count("img") == 0 and page.count("b") == 0  # the hostile names stayed text
    owners = [t for t, a in page.tags if a.get("class") == "chip chip-owner"]
    tags = [t for t, a in page.tags if a.get("class") == "chip chip-tag"]
    # the checks table (4 checks) and the three problem sections, plus the owners line (4 owners)
    assert len(owners) == (1 + 2 + 1 + 1) + (1 + 2 + 1) + 4
    assert len(tags) == (2 + 3 + 2 + 2) + (2 + 3 + 2)
    text = "".join(page.text)
    assert "Owners of the problem checks:" in text and HOSTILE_OWNER in text and "<b>bold</b>" in text


def test_the_terminal_table_has_owner_and_tags_columns_only_when_checks_carry_them(tmp_path):
    build_shop(tmp_path / "shop.db")
    (tmp_path / "s.yaml").write_text(SUITE)
    (tmp_path / "plain.yaml").write_text("tables:\n  orders:\n    - not_null: amount\n")

    def scan(suite: str) -> str:
        done = subprocess.run([sys.executable, "-m", "watchdog", "scan", "--db", f"sqlite:///{tmp_path / 'shop.db'}",
                               "--checks", suite, "--out", str(tmp_path / f"out-{suite}"), "--no-diagnose"],
                              capture_output=True, text=True, cwd=tmp_path, timeout=120)
        assert done.returncode == 1, done.stderr
        return done.stdout

    out = scan("s.yaml")
    header = next(line for line in out.splitlines() if "Check" in line)
    assert "Owner" in header and "Tags" in header
    row = next(line for line in out.splitlines() if "orders.email.not_null" in line)
    assert "@alice, @bob" in row and "shop, finance, pii" in row
    assert HOSTILE_OWNER in out and "<b>bold</b>" in out  # as written, not read as rich markup
    plain = scan("plain.yaml")
    assert "Owner" not in plain and "Tags" not in plain


def test_the_dashboard_shows_owners_and_tags_in_chromium(tmp_path):
    root = tmp_path / "project"
    root.mkdir()
    (root / "s.yaml").write_text(SUITE)
    config = root / "watchdog.yaml"
    config.write_text(f"databases:\n  shop: {{url: 'sqlite:///{root / 'shop.db'}'}}\n"
                      "audits:\n  shop:\n    database: shop\n    checks: [s.yaml]\n"
                      f"history: {{url: 'sqlite:///{root / 'history.db'}'}}\n")
    for missing in (1, 2):
        build_shop(root / "shop.db", missing_amounts=missing)
        done = subprocess.run([sys.executable, "-m", "watchdog", "run", "shop", "--config", str(config)],
                              capture_output=True, text=True, cwd=root, timeout=120)
        assert done.returncode == 1, done.stderr
    built = subprocess.run([sys.executable, "-m", "watchdog", "dashboard", "--config", str(config), "--out",
                            str(root / "site")], capture_output=True, text=True, cwd=root, timeout=120)
    assert built.returncode == 0, built.stderr
    dom, log = chromium(root / "site" / "shop.html", tmp_path)
    assert "Uncaught" not in log
    page = Structure(dom)
    assert page.count("img") == 0 and page.count("b") == 0
    cards = dom.split('class="check"')[1:]
    email = next(c for c in cards if "orders.email.not_null" in c.split("</h3>")[0])
    assert '<span class="chip chip-owner" title="owner">@alice</span>' in email
    assert '<span class="chip chip-tag" title="tag">pii</span>' in email
    assert "Owners of the problem checks:" in dom
    flat = dom.split('class="flat"')[1]  # orders.id passed unchanged: listed with its owner
    assert "orders.id.not_null" in flat and "@data-platform" in flat
    # the run's own page, report.html as serve --ui shows it, carries the labels too
    [run_dir] = [p for p in (root / "reports" / "shop").iterdir() if p.is_dir() and p.name != "latest"][-1:]
    report_dom, _ = chromium(run_dir / "report.html", tmp_path)
    assert '<span class="chip chip-owner" title="owner">@bob</span>' in report_dom


def test_a_narrow_terminal_keeps_the_room_for_the_check_names(doc):
    from rich.console import Console

    from watchdog.cli.console import LABEL_COLUMNS_MIN_WIDTH, show_scan

    for width, labelled in ((80, False), (LABEL_COLUMNS_MIN_WIDTH, True)):
        console = Console(width=width, record=True, file=open(os.devnull, "w"))  # noqa: SIM115
        with pytest.MonkeyPatch.context() as patch:
            patch.setattr("watchdog.cli.console.stdout", lambda console=console: console)
            show_scan(doc)
        text = console.export_text()
        assert ("Owner" in text) is labelled
        assert labelled or "orders.email.not_null" in text  # narrow: the names stay whole
