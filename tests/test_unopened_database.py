"""A database that cannot even be opened -- its driver is not installed, or ``--db`` is no URL at all -- is a
database-wide failure like a server that is down: said once at the top (terminal, report.md, report.html,
e-mail), every check marked not run, findings.json and the reports written, exit 3. A missing driver is one
line saying what to ``pip install``; no piece of a password shows anywhere, also in a string that is no URL.

Through the real CLI in subprocesses: drivers that are really not installed (pyodbc; DuckDB in an
environment made without it), a real SMTP server on loopback."""

from __future__ import annotations

import importlib.util
import json
import os
import re
import subprocess
import sys
import venv
from pathlib import Path

import pytest

from tests.test_password_outputs import _leaks
from tests.test_scan_output import SIXTEEN, Page
from watchdog.testing.smtp_sink import SmtpSink

NOT_RUN = "not run: the database could not be used (see the scan's error)"
PASSWORD = "p@ss#w0rd:x/y"


def _cli(*args: str, cwd: Path, python: str = sys.executable) -> subprocess.CompletedProcess:
    env = {**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parent.parent)}
    return subprocess.run([python, "-m", "watchdog", *args], cwd=cwd, text=True, capture_output=True,
                          timeout=120, env=env)


def _said_once(result: subprocess.CompletedProcess, out: Path, expected: str) -> dict:
    """The scan's error is ``database unavailable: <expected>``, said once on stderr and in report.md; the
    sixteen checks are not run; the summary line is printed, with no table of identical rows."""
    assert result.returncode == 3, result.stdout + result.stderr
    doc = json.loads((out / "findings.json").read_text())
    assert doc["error"] == f"database unavailable: {expected}"
    assert doc["summary"] == {"checks": 16, "passed": 0, "warned": 0, "failed": 0, "errors": 16}
    assert {f["error"] for f in doc["findings"]} == {NOT_RUN}
    assert result.stderr == f"error: {doc['error']}\n"
    assert result.stdout.startswith("16 checks: 0 failed, 0 warned, 0 passed, 16 errors (16 not run)\n")
    assert "orders.c0.not_null" not in result.stdout
    report = re.sub(r"\\([\\`*_{}\[\]()#+\-.!|<>])", r"\1", (out / "report.md").read_text())  # Markdown escapes
    assert report.count(expected) == 1 and "(16 of 16 checks not run)" in report
    assert report.count("| ERROR | – | – | not run |") == 16
    return doc


def test_a_missing_driver_is_one_line_saying_what_to_install(tmp_path):
    if importlib.util.find_spec("pyodbc") is not None:
        pytest.skip("pyodbc is installed here: this test needs a driver that is not")
    (tmp_path / "suite.yaml").write_text(SIXTEEN)
    url = f"mssql+pyodbc://reader:{PASSWORD}@sql.example.com/shop"
    result = _cli("scan", "--db", url, "--checks", "suite.yaml", "--out", "out", cwd=tmp_path)
    doc = _said_once(result, tmp_path / "out", "the driver of mssql+pyodbc:// is not installed (no module "
                                                "'pyodbc'): pip install pyodbc")
    assert doc["database"] == "mssql+pyodbc://reader:***@sql.example.com/shop"
    assert not _leaks({"stdout": result.stdout, "stderr": result.stderr,
                       **{p.name: p.read_bytes() for p in (tmp_path / "out").iterdir()}}, [PASSWORD])


def _python_without_duckdb(where: Path) -> str:
    """A virtual environment holding every package of this one but DuckDB (a real install without it)."""
    venv.EnvBuilder(with_pip=False).create(where)
    [site] = [p for p in sys.path if p.endswith("site-packages") and Path(p).is_dir()][:1]
    [target] = list(where.glob("lib/python*/site-packages"))
    for entry in Path(site).iterdir():
        if "duckdb" not in entry.name.lower():
            (target / entry.name).symlink_to(entry)
    python = str(where / "bin" / "python")
    probe = subprocess.run([python, "-c", "import duckdb"], capture_output=True, text=True)
    assert probe.returncode != 0 and "No module named 'duckdb'" in probe.stderr
    return python


def test_a_duckdb_url_without_duckdb_installed(tmp_path):
    python = _python_without_duckdb(tmp_path / "env")
    (tmp_path / "suite.yaml").write_text(SIXTEEN)
    for args, out in ((["--db", "duckdb:///shop.duckdb"], "o1"), (["--file", "orders=orders.csv"], "o2")):
        result = _cli("scan", *args, "--checks", "suite.yaml", "--out", out, cwd=tmp_path, python=python)
        _said_once(result, tmp_path / out, "DuckDB is not installed: pip install 'watchdog-dq[duckdb]'")


@pytest.mark.parametrize("db, password", [
    ("reader:s3cr3t-Pw@db.example.com/shop", "s3cr3t-Pw"),        # the scheme forgotten
    (f"postgresql:/reader:{PASSWORD}@db.example.com/shop", PASSWORD),  # one slash
    ("mysql+pymysql//reader:hunter2-hunter2@db/shop", "hunter2-hunter2"),  # no colon
])
def test_a_db_that_is_no_url_is_said_once_and_shows_no_password(tmp_path, db, password):
    (tmp_path / "suite.yaml").write_text(SIXTEEN)
    (tmp_path / "watchdog.yaml").write_text("databases:\n  crm: {url: 'sqlite:///crm.db'}\n")
    result = _cli("scan", "--db", db, "--checks", "suite.yaml", "--out", "out", "--config", "watchdog.yaml",
                  cwd=tmp_path)
    doc = json.loads((tmp_path / "out" / "findings.json").read_text())
    shown = doc["database"]
    assert "***" in shown and password not in shown
    _said_once(result, tmp_path / "out", f"{(tmp_path / 'watchdog.yaml').resolve()}: no database named "
                                         f"{shown!r} (configured: crm); nor a database URL: write a URL, e.g. "
                                         f"postgresql+psycopg://user@host/db or sqlite:///path/to/file.db")
    assert not _leaks({"stdout": result.stdout, "stderr": result.stderr,
                       **{p.name: p.read_bytes() for p in (tmp_path / "out").iterdir()}}, [password])
    query = _cli("query", "--db", db, "SELECT 1", "--config", "watchdog.yaml", cwd=tmp_path)
    assert query.returncode == 3 and query.stderr.count("\n") == 1 and "no database named" in query.stderr
    assert not _leaks({"query": query.stderr}, [password])


def test_a_name_that_is_not_configured_is_said_once(tmp_path):
    (tmp_path / "suite.yaml").write_text(SIXTEEN)
    (tmp_path / "watchdog.yaml").write_text("databases:\n  crm: {url: 'sqlite:///crm.db'}\n")
    result = _cli("scan", "--db", "crmm", "--checks", "suite.yaml", "--out", "out", "--config", "watchdog.yaml",
                  cwd=tmp_path)
    _said_once(result, tmp_path / "out", f"{(tmp_path / 'watchdog.yaml').resolve()}: no database named 'crmm' "
                                         "(configured: crm)")


def test_without_a_configuration_a_string_that_is_no_url_is_said_once(tmp_path):
    (tmp_path / "suite.yaml").write_text(SIXTEEN)
    result = _cli("scan", "--db", "reader:s3cr3t-Pw@db/shop", "--checks", "suite.yaml", "--out", "out",
                  "--config", "missing.yaml", cwd=tmp_path)
    _said_once(result, tmp_path / "out", "--db 'reader:***@db/shop' is not a database URL: write a URL, e.g. "
                                         "postgresql+psycopg://user@host/db or sqlite:///path/to/file.db")
    broken = _cli("scan", "--db", "crm", "--checks", "suite.yaml", "--out", "o2", "--config", "missing.yaml",
                  cwd=tmp_path)  # a name whose configuration cannot be read: that is the error
    assert broken.returncode == 3 and "cannot read the configuration" in broken.stderr
    assert not (tmp_path / "o2").exists()


def test_an_audit_files_every_report_and_mails_the_error_once(tmp_path):
    if importlib.util.find_spec("pyodbc") is not None:
        pytest.skip("pyodbc is installed here: this test needs a driver that is not")
    (tmp_path / "suite.yaml").write_text(SIXTEEN)
    expected = "the driver of mssql+pyodbc:// is not installed (no module 'pyodbc'): pip install pyodbc"
    with SmtpSink() as sink:
        (tmp_path / "watchdog.yaml").write_text(f"""\
databases:
  shop: {{url: "mssql+pyodbc://reader:{PASSWORD}@sql.example.com/shop"}}
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
        result = _cli("run", "shop", "--config", "watchdog.yaml", cwd=tmp_path)
        [message] = sink.messages
    assert result.returncode == 3, result.stderr
    assert result.stderr.count(expected) == 1
    run_dir = (tmp_path / "reports" / "shop" / "latest").resolve()
    doc = json.loads((run_dir / "findings.json").read_text())
    assert doc["error"] == f"database unavailable: {expected}"
    assert {f["error"] for f in doc["findings"]} == {NOT_RUN}
    assert (run_dir / "report.md").read_text().count("pip install pyodbc") == 1
    page = Page((run_dir / "report.html").read_text())
    assert page.all_text.count(expected) == 1 and expected in page.by_class["scan-error"][0]
    assert "error" not in page.by_class and len(page.rows) == 16
    text = next(p for p in message.walk() if p.get_content_type() == "text/plain").get_content()
    assert text.count(expected) == 1 and "(16 of 16 checks not run)" in text
    html = next(p for p in message.walk() if p.get_content_type() == "text/html").get_content()
    assert html.count("pip install pyodbc") == 1
    assert json.loads((run_dir / "audit.json").read_text())["status"] == "error"
    outputs = {"stdout": result.stdout, "stderr": result.stderr, "mail": message.as_bytes(),
               "history": (tmp_path / "history.db").read_bytes(),
               **{p.name: p.read_bytes() for p in run_dir.iterdir()}}
    assert not _leaks(outputs, [PASSWORD])
