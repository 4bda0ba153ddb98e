"""What a scan says, on every rendering: a database-wide failure once at the top (terminal, report.md,
report.html, e-mail) with the checks marked not run; problems listed first with thresholds written the same
way everywhere; ``--llm`` without an endpoint shows the summary and both paths before its error.
Real CLI in subprocesses, real SQLite/PostgreSQL/MariaDB, a real SMTP server on loopback."""

from __future__ import annotations

import json
import os
import re
import sqlite3
import subprocess
import sys
from html.parser import HTMLParser
from pathlib import Path

import pytest

from tests.dbs import TestDatabase
from watchdog.run.audit import execute_audit
from watchdog.settings import load_settings
from watchdog.testing.smtp_sink import SmtpSink

#: 16 checks, like the issue's report: every one of them needs the database
SIXTEEN = "tables:\n  orders:\n" + "".join(
    f"    - not_null: {{column: c{i}, name: orders.c{i}.not_null}}\n" for i in range(15)) + \
    "    - row_count: {min: 1}\n"


class Page(HTMLParser):
    """A report page as a real HTML parser reads it: its text, the cells of each check row, the text of
    each element by class."""

    def __init__(self, html: str):
        super().__init__(convert_charrefs=True)
        self.text: list[str] = []
        self.rows: list[list[str]] = []
        self.by_class: dict[str, list[str]] = {}
        self._open: list[tuple[str, str]] = []  # (tag, class) of the open elements
        self.feed(html)

    def handle_starttag(self, tag, attrs):
        cls = dict(attrs).get("class") or ""
        if tag == "tr" and cls == "check-row":
            self.rows.append([])
        if tag == "td" and any(c == "check-row" for _, c in self._open):
            self.rows[-1].append("")
        self._open.append((tag, cls))
        if cls:
            self.by_class.setdefault(cls, []).append("")

    def handle_endtag(self, tag):
        while self._open:
            if self._open.pop()[0] == tag:
                break

    def handle_data(self, data):
        self.text.append(data)
        in_row = self._open and self._open[-1][0] != "tr" and any(c == "check-row" for _, c in self._open)
        if in_row and self.rows and self.rows[-1]:
            self.rows[-1][-1] += data
        for _, cls in {c for c in self._open if c[1]}:
            self.by_class[cls][-1] += data

    @property
    def all_text(self) -> str:
        return "".join(self.text)


def cli(*args: str, cwd: Path, env: dict[str, str] | None = None, merged: bool = False) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "watchdog", *args], cwd=cwd, text=True, timeout=120,
                          env=env if env is not None else dict(os.environ), stdout=subprocess.PIPE,
                          stderr=subprocess.STDOUT if merged else subprocess.PIPE)


def _unavailable_urls(make_database) -> dict[str, tuple[str, str]]:
    """(URL, the message's tail) of databases that cannot be used at all, on real servers."""
    pg = make_database("postgresql")
    maria = make_database("mariadb")
    return {
        "server down": ("postgresql+psycopg://postgres@127.0.0.1:1/shop", "Connection refused"),
        "no such database": (pg.url.rsplit("/", 1)[0] + "/no_such_database_zz", 'database "no_such_database_zz" '
                             "does not exist"),
        "wrong password": (maria.url.replace("root@", "root:not-the-password@"), "Access denied for user 'root'"),
        "no such file": ("sqlite:///missing/shop.db", "SQLite database file not found"),
    }


@pytest.mark.parametrize("case", ["server down", "no such database", "wrong password", "no such file"])
def test_a_database_wide_failure_is_said_once_and_the_checks_are_not_run(case, tmp_path, make_database):
    url, tail = _unavailable_urls(make_database)[case]
    (tmp_path / "suite.yaml").write_text(SIXTEEN)
    out = tmp_path / "out"
    result = cli("scan", "--db", url, "--checks", "suite.yaml", "--out", str(out), cwd=tmp_path)
    assert result.returncode == 3, result.stderr

    doc = json.loads((out / "findings.json").read_text())
    message = doc["error"]
    assert message.startswith("database unavailable: ") and tail in message
    assert "not-the-password" not in message
    assert doc["summary"] == {"checks": 16, "passed": 0, "warned": 0, "failed": 0, "errors": 16}
    assert {f["status"] for f in doc["findings"]} == {"error"}
    assert {f["error"] for f in doc["findings"]} == {"not run: the database could not be used (see the scan's error)"}

    # the terminal: the whole message once, first; no table of sixteen identical rows
    assert result.stderr.count(tail) == 1 and message in result.stderr
    assert result.stdout.startswith("16 checks: 0 failed, 0 warned, 0 passed, 16 errors (16 not run)")
    assert "orders.c0.not_null" not in result.stdout and "…" not in result.stderr

    report = (out / "report.md").read_text()
    assert report.count(tail) == 1
    assert f"**The scan could not complete:** {message.replace('_', chr(92) + '_')}" in report \
        or f"**The scan could not complete:** {message}" in report
    assert "(16 of 16 checks not run)" in report
    assert report.count("| ERROR | – | – | not run |") == 16
    assert "## Checks that could not run" not in report  # nothing but the scan's own error to say


def test_the_html_report_and_the_email_say_it_once(tmp_path, make_database):
    maria = make_database("mariadb")
    url = maria.url.replace("root@", "root:not-the-password@")
    (tmp_path / "suite.yaml").write_text(SIXTEEN)
    with SmtpSink() as sink:
        config = tmp_path / "watchdog.yaml"
        config.write_text(f"""\
databases:
  shop: {{url: "{url}"}}
history: {{url: "sqlite:///history.db"}}
smtp: {{host: 127.0.0.1, port: {sink.port}, security: none, sender: watchdog@example.com}}
audits:
  shop:
    database: shop
    checks: [suite.yaml]
    deliver:
      - file: {{dir: reports}}
      - email: {{to: [dq@example.com], on: problems}}
""")
        run = execute_audit(load_settings(config), "shop")
        assert run.status == "error" and run.exit_code == 3
        [message] = sink.messages
    assert run.scan is not None and run.scan.doc.error
    error = run.scan.doc.error
    assert "Access denied for user 'root'" in error and "not-the-password" not in error

    text = next(p for p in message.walk() if p.get_content_type() == "text/plain").get_content()
    assert text.count("Access denied") == 1 and f"The scan could not complete: {error}" in text
    assert "(16 of 16 checks not run)" in text and "could not run" not in text and "No check ran." in text
    html = next(p for p in message.walk() if p.get_content_type() == "text/html").get_content()
    assert html.count("Access denied") == 1

    page = Page((run.run_dir / "report.html").read_text())
    assert page.all_text.count("Access denied") == 1
    assert error in page.by_class["scan-error"][0]
    assert "error" not in page.by_class  # no section per check that could not run
    assert len(page.rows) == 16


def test_checks_sharing_one_error_are_listed_under_it_once(tmp_path, make_database):
    db = make_database("postgresql")
    db.create_table("orders", {"id": "int"}, [(1,)])
    (tmp_path / "suite.yaml").write_text(
        "tables:\n  orders:\n    - unique: id\n  gone:\n    - not_null: a\n    - not_null: b\n    - unique: a\n")
    out = tmp_path / "out"
    result = cli("scan", "--db", db.url, "--checks", "suite.yaml", "--out", str(out), cwd=tmp_path)
    assert result.returncode == 3
    report = (out / "report.md").read_text()
    section = report.split("## Checks that could not run", 1)[1]
    assert "### 3 checks (ERROR)" in section
    assert "`gone.a.not_null`, `gone.b.not_null`, `gone.a.unique`:" in section
    assert section.count('relation "gone" does not exist') == 1


def test_a_long_check_error_is_shown_whole_in_the_terminal_table(tmp_path, make_database):
    db = make_database("sqlite")
    db.create_table("orders", {"id": "int"}, [(1,)])
    long_name = "a_column_whose_name_is_long_enough_to_push_the_message_past_eighty_characters"
    (tmp_path / "suite.yaml").write_text(f"tables:\n  orders:\n    - not_null: {long_name}\n")
    result = cli("scan", "--db", db.url, "--checks", "suite.yaml", "--out", "out", cwd=tmp_path)
    assert result.returncode == 3
    error = json.loads((tmp_path / "out" / "findings.json").read_text())["findings"][0]["error"]
    assert len(error) > 120
    assert "chars in all" not in result.stdout
    last_column = "".join(line.split("│")[-2].strip() for line in result.stdout.splitlines() if line.count("│") > 2)
    assert re.sub(r"\s+", "", error) in re.sub(r"\s+", "", last_column)


# ---------------------------------------------------------------- order and thresholds

SUITE = """\
tables:
  orders:
    - not_null: email
      max_count: 5
    - unique: id
    - not_null: {column: status, severity: warn}
    - row_count: {min: 1}
    - freshness: {column: placed_at, max_age: 30d}
custom_sql:
  - name: no_such_table_check
    sql: SELECT count(*) FROM no_such_table
"""
SUITE_ORDER = ["orders.email.not_null", "orders.id.unique", "orders.status.not_null", "orders.row_count",
               "orders.placed_at.freshness", "no_such_table_check"]
PROBLEMS_ORDER = ["orders.id.unique", "no_such_table_check", "orders.status.not_null", "orders.email.not_null",
                  "orders.row_count", "orders.placed_at.freshness"]


@pytest.fixture(params=["sqlite", "postgresql"])
def orders(request, make_database) -> TestDatabase:
    db = make_database(request.param)
    rows = [(i, None if i <= 3 else f"u{i}@x.io", None if i == 9 else "ok", "2999-01-01 00:00:00")
            for i in range(1, 21)]
    rows.append((1, "dup@x.io", "ok", "2999-01-01 00:00:00"))
    db.create_table("orders", {"id": "int", "email": "text", "status": "text", "placed_at": "timestamp"}, rows)
    return db


def _names_in(text: str) -> list[str]:
    found = [(text.find(name), name) for name in SUITE_ORDER if name in text]
    return [name for _, name in sorted(found)]


def test_problems_come_first_everywhere_and_order_suite_keeps_the_suites_order(orders, tmp_path):
    (tmp_path / "suite.yaml").write_text(SUITE)
    result = cli("scan", "--db", orders.url, "--checks", "suite.yaml", "--out", "out", cwd=tmp_path)
    assert result.returncode == 3, result.stderr
    assert _names_in(result.stdout) == PROBLEMS_ORDER
    table = (tmp_path / "out" / "report.md").read_text().split("## ", 1)[0]
    assert _names_in(table) == PROBLEMS_ORDER
    doc = json.loads((tmp_path / "out" / "findings.json").read_text())
    assert [f["name"] for f in doc["findings"]] == SUITE_ORDER  # findings.json keeps the suites' order

    result = cli("scan", "--db", orders.url, "--checks", "suite.yaml", "--out", "suite-order", "--order", "suite",
                 cwd=tmp_path)
    assert _names_in(result.stdout) == SUITE_ORDER
    assert _names_in((tmp_path / "suite-order" / "report.md").read_text().split("## ", 1)[0]) == SUITE_ORDER


def test_thresholds_read_the_same_in_the_terminal_report_md_and_report_html(orders, tmp_path):
    (tmp_path / "suite.yaml").write_text(SUITE)
    config = tmp_path / "watchdog.yaml"
    config.write_text(f"""\
databases:
  shop: {{url: "{orders.url}"}}
history: {{url: "sqlite:///history.db"}}
audits:
  shop: {{database: shop, checks: [suite.yaml], deliver: [{{file: {{dir: reports}}}}]}}
""")
    result = cli("run", "shop", "--config", str(config), cwd=tmp_path)
    assert result.returncode == 3, result.stderr
    [run_dir] = (tmp_path / "reports" / "shop").glob("2*")
    report = (run_dir / "report.md").read_text()
    cells = {row[0]: row for row in Page((run_dir / "report.html").read_text()).rows}
    for figure in ("3 (max 5)", "21 rows (min 1)", "(max 30d)"):
        assert figure in result.stdout, figure
        assert figure in report, figure
    assert "| `orders.email.not_null` | PASS | 3 (max 5) | 21 | 14.29% |" in report
    assert cells["orders.email.not_null"][2:] == ["3 (max 5)", "21", "14.29%"]
    assert cells["orders.row_count"][4] == "21 rows (min 1)"
    assert cells["orders.placed_at.freshness"][4].endswith("(max 30d)")
    assert [name for name in cells] == PROBLEMS_ORDER


# ---------------------------------------------------------------- --llm without an endpoint

def test_llm_without_an_endpoint_shows_the_summary_and_both_paths_before_the_error(tmp_path, make_database):
    db = make_database("sqlite")
    db.create_table("orders", {"id": "int", "email": "text"}, [(1, None), (2, "b@x.io")])
    (tmp_path / "suite.yaml").write_text("tables:\n  orders:\n    - not_null: email\n")
    env = {k: v for k, v in os.environ.items() if not k.startswith("OPENAI_")}
    result = cli("scan", "--db", db.url, "--checks", "suite.yaml", "--out", "out", "--llm", cwd=tmp_path,
                 env=env, merged=True)
    assert result.returncode == 3
    text = result.stdout
    table, paths, error = text.find("orders.email.not_null"), text.find("report:   out/report.md"), \
        text.find("error: --llm needs a model endpoint")
    assert 0 <= table < text.find("findings: out/findings.json") < paths < error, text
    assert "1 checks: 1 failed" in text
    assert (tmp_path / "out" / "findings.json").is_file() and (tmp_path / "out" / "report.md").is_file()


# ---------------------------------------------------------------- reproducing SQL that needs watchdog's functions

PATTERN = "tables:\n  people:\n    - pattern: {column: email, regex: '^[^ @]+@[^ @]+$'}\n"


def _reproduce_blocks(report: str) -> dict[str, tuple[str, str]]:
    """check name -> (its reproducing SQL, the text after it up to the next section) in report.md."""
    out = {}
    for section in report.split("\n### ")[1:]:
        name = section.split("`", 2)[1]
        if "Reproduce with:" in section:
            after = section.split("```sql\n", 1)[1]
            sql, rest = after.split("\n```\n", 1)
            out[name] = (sql, rest)
    return out


def test_sqlite_sql_that_calls_regexp_says_it_runs_through_watchdog_query(tmp_path, make_database):
    db = make_database("sqlite")
    db.create_table("people", {"id": "int", "email": "text"}, [(1, "a@x.io"), (2, "not an address"), (3, None)])
    (tmp_path / "suite.yaml").write_text(PATTERN +
                                         "    - not_null: email\n")
    result = cli("scan", "--db", db.url, "--checks", "suite.yaml", "--out", "out", cwd=tmp_path)
    assert result.returncode == 1, result.stderr
    report = (tmp_path / "out" / "report.md").read_text()
    blocks = _reproduce_blocks(report)
    sql, note = blocks["people.email.pattern"]
    assert "REGEXP" in sql
    command = f"watchdog query --db {db.url} -"
    assert "This statement calls `REGEXP` as watchdog defines it on SQLite" in note and f"`{command}`" in note
    assert "watchdog query" not in blocks["people.email.not_null"][1]  # said where it applies only
    assert report.count("as watchdog defines it on SQLite") == 1

    # the stock sqlite3 shell cannot run it (no REGEXP, or its own without Python's syntax); the command the
    # report gives can, and finds the failing row
    path = db.url.removeprefix("sqlite:///")
    stock = subprocess.run(["sqlite3", path, sql + ";"], capture_output=True, text=True, timeout=60)
    assert stock.returncode != 0 and ("no such function: REGEXP" in stock.stderr or "without operand" in stock.stderr)
    plain = sqlite3.connect(path)
    with pytest.raises(sqlite3.OperationalError, match="no such function: REGEXP"):
        plain.execute(sql).fetchall()
    plain.close()
    ran = subprocess.run([sys.executable, "-m", "watchdog", "query", "--db", db.url, "--json", "-"], input=sql,
                         capture_output=True, text=True, timeout=60, cwd=tmp_path)
    assert ran.returncode == 0, ran.stderr
    assert json.loads(ran.stdout)["rows"] == [[2, "not an address"]]


def test_the_note_is_left_out_where_the_database_has_the_function(tmp_path, make_database):
    db = make_database("postgresql")
    db.create_table("people", {"id": "int", "email": "text"}, [(1, "a@x.io"), (2, "not an address")])
    (tmp_path / "suite.yaml").write_text(PATTERN)
    result = cli("scan", "--db", db.url, "--checks", "suite.yaml", "--out", "out", cwd=tmp_path)
    assert result.returncode == 1, result.stderr
    assert "as watchdog defines" not in (tmp_path / "out" / "report.md").read_text()


def test_the_html_report_says_it_too(tmp_path, make_database):
    from watchdog.findings import FindingsDoc
    from watchdog.report.html import render_html

    db = make_database("sqlite")
    db.create_table("people", {"id": "int", "email": "text"}, [(1, "a@x.io"), (2, "not an address")])
    (tmp_path / "suite.yaml").write_text(PATTERN +
                                         "    - not_null: email\n")
    assert cli("scan", "--db", db.url, "--checks", "suite.yaml", "--out", "out", cwd=tmp_path).returncode == 1
    page = Page(render_html(FindingsDoc.load(tmp_path / "out" / "findings.json")))
    [note] = page.by_class["own-functions"]
    assert note.startswith("This statement calls REGEXP as watchdog defines it on SQLite")
    assert f"watchdog query --db {db.url} -" in note


def test_run_json_keeps_stdout_json_and_says_the_database_error_once_on_stderr(tmp_path):
    (tmp_path / "suite.yaml").write_text(SIXTEEN)
    config = tmp_path / "watchdog.yaml"
    config.write_text("databases:\n  shop: {url: 'sqlite:///missing/shop.db'}\n"
                      "history: {url: 'sqlite:///history.db'}\n"
                      "audits:\n  shop: {database: shop, checks: [suite.yaml], deliver: [{file: {dir: reports}}]}\n")
    result = cli("run", "shop", "--json", "--config", str(config), cwd=tmp_path)
    assert result.returncode == 3
    doc = json.loads(result.stdout)
    assert doc["error"].startswith("database unavailable: SQLite database file not found")
    assert result.stderr.count("SQLite database file not found") == 1 and doc["error"] in result.stderr
