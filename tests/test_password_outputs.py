"""Passwords that cut a URL (``@ # : / ? %``, spaces, quotes, unicode), against servers that check them:

* a private PostgreSQL cluster with scram-sha-256 (``tests/pg_auth.py``: the machine's server trusts
  loopback and would take any password) and a MariaDB user created for the test: the URL as written, the
  URL percent-encoded, ``?password=``, a libpq keyword string and ``${VAR}`` in the config all connect, and
  a wrong password fails with one line that shows none of it and says how to percent-encode;
* every output of a scan and an audit: the terminal (with ``--debug`` logs and tracebacks), findings.json,
  report.md, report.html, audit.json, the history, an e-mail (aiosmtpd on loopback), a webhook (an HTTP
  receiver on loopback) and the MCP server's answers (the MCP SDK's client): no byte of any of them holds
  the password, encoded or not, or a piece of it.

``test_url_rule.py`` property-tests the same rule over every printable character.
"""

from __future__ import annotations

import asyncio
import base64
import json
import os
import re
import subprocess
import sys
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any
from urllib.parse import quote

import pytest
import sqlalchemy as sa
import yaml

from tests.pg_auth import PasswordServer, password_server
from tests.test_webhook_delivery import Receiver
from watchdog.errors import DatabaseUnavailable
from watchdog.sandbox import Sandbox
from watchdog.testing.smtp_sink import SmtpSink

NASTY = ["p@ss#word", "s3cr3t@tpass", "a:b/c?d%e f&g=h", "q'u\"o`te\\@#x;y", "ünï@cødé#✓ ok"]
SUITE = "tables:\n  items:\n    - not_null: sku\n"


def _pieces(password: str) -> list[str]:
    """The password and every piece a misreading could print: the whole, encoded, and what lies between
    the characters that cut a URL (from 5 characters on: shorter ones, "word", are ordinary text)."""
    out = {password, quote(password, safe=""), quote(password, safe="@"), password.replace(" ", "+")}
    out.update(p for p in re.split(r"[@#:/?%&;=\s'\"`\\]", password) if len(p) >= 5)
    return sorted(out)


def _leaks(outputs: dict[str, Any], passwords: list[str]) -> list[str]:
    found = []
    for where, data in outputs.items():
        blob = data if isinstance(data, bytes) else str(data).encode("utf-8", "replace")
        for password in passwords:
            for piece in _pieces(password):
                if piece.encode() in blob or json.dumps(piece)[1:-1].encode() in blob:
                    found.append(f"{piece!r} (of {password!r}) in {where}")
    return found


@pytest.fixture(scope="module")
def pg() -> Iterator[PasswordServer]:
    server = password_server()
    for i, password in enumerate(NASTY):
        server.add_role(f"r{i}", password)
    yield server
    server.stop()


@pytest.fixture
def maria(make_database) -> Iterator[tuple[Any, list[str]]]:
    db = make_database("mariadb")
    db.create_table("items", {"id": "int", "sku": "text"}, [(1, None), (2, "b"), (3, None), (4, "d")])
    name = db.url.rsplit("/", 1)[1]
    users = [f"wd{uuid.uuid4().hex[:10]}" for _ in NASTY]
    admin = sa.create_engine("mysql+pymysql://root@127.0.0.1:3306/")
    with admin.begin() as conn:
        for user, password in zip(users, NASTY, strict=True):
            conn.execute(sa.text(f"CREATE USER '{user}'@'%' IDENTIFIED BY :pw"), {"pw": password})
            conn.exec_driver_sql(f"GRANT SELECT ON `{name}`.* TO '{user}'@'%%'", {})
    yield db, users
    with admin.begin() as conn:
        for user in users:
            conn.exec_driver_sql(f"DROP USER IF EXISTS '{user}'@'%%'", {})
    admin.dispose()


def _count(url: str) -> int:
    with Sandbox(url, timeout_s=10) as box:
        return int(box.query("SELECT count(*) FROM items").scalar())


def test_each_form_connects_with_the_real_password(pg):
    for i, password in enumerate(NASTY):
        host = f"127.0.0.1:{pg.port}"
        forms = {
            "as written": f"postgresql+psycopg://r{i}:{password}@{host}/postgres",
            "postgres:// as written": f"postgres://r{i}:{password}@{host}/postgres",
            "encoded": f"postgresql+psycopg://r{i}:{quote(password, safe='')}@{host}/postgres",
            "psycopg2-free SQLAlchemy driver": f"postgresql+psycopg://r{i}:{password}@{host}/postgres?sslmode=disable",
            "?password=": f"postgresql+psycopg://r{i}@{host}/postgres?password={quote(password, safe='')}",
        }
        for form, url in forms.items():
            assert _count(url) == 4, (form, password)


def test_a_libpq_keyword_string_connects(pg, run_cli, tmp_path):
    (tmp_path / "suite.yaml").write_text(SUITE)
    for i, password in enumerate(NASTY[:3]):
        quoted = "'" + password.replace("\\", "\\\\").replace("'", "\\'") + "'"
        dsn = f"host=127.0.0.1 port={pg.port} user=r{i} password={quoted} dbname=postgres"
        result = run_cli("scan", "--db", dsn, "--checks", "suite.yaml", "--out", f"o{i}")
        assert result.returncode == 1, result.stderr  # connected; 2 NULL skus
        assert not _leaks({"stdout": result.stdout, "stderr": result.stderr,
                           "findings": (tmp_path / f"o{i}" / "findings.json").read_bytes()}, [password])


def test_mariadb_connects_with_the_password_as_written_and_encoded(maria):
    db, users = maria
    base = db.url.split("@", 1)[1]  # 127.0.0.1:3306/name
    for user, password in zip(users, NASTY, strict=True):
        assert _count(f"mysql+pymysql://{user}:{password}@{base}") == 4, password
        assert _count(f"mariadb+pymysql://{user}:{quote(password, safe='')}@{base}") == 4, password


def test_a_wrong_password_fails_in_one_line_that_shows_none_of_it(pg, maria):
    db, users = maria
    urls = {password: [f"postgresql+psycopg://r{i}:{password}X@127.0.0.1:{pg.port}/postgres",
                       f"mysql+pymysql://{users[i]}:{password}X@{db.url.split('@', 1)[1]}"]
            for i, password in enumerate(NASTY)}
    for password, tries in urls.items():
        for url in tries:
            with pytest.raises(DatabaseUnavailable) as caught:
                _count(url)
            message = str(caught.value)
            assert "\n" not in message
            assert "authentication failed" in message or "Access denied" in message, message
            assert "percent-encode @ as %40, # as %23" in message, message
            assert not _leaks({"message": message}, [password, password + "X"]), message


def _cli(root: Path, *args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess:
    full_env = {**os.environ, **(env or {})}
    full_env.pop("WATCHDOG_CONFIG", None)
    return subprocess.run([sys.executable, "-m", "watchdog", *args], capture_output=True, text=True, timeout=180,
                          env=full_env, cwd=root)


def _written(root: Path) -> dict[str, bytes]:
    return {str(p): p.read_bytes() for p in root.rglob("*") if p.is_file() and p.name != "suite.yaml"}


@pytest.mark.parametrize("index", [0, 2, 4])
def test_no_output_of_a_scan_or_an_audit_holds_any_of_the_password(pg, tmp_path, index):
    password, port = NASTY[index], pg.port
    url = f"postgresql+psycopg://r{index}:{password}@127.0.0.1:{port}/postgres"
    wrong = f"postgresql+psycopg://r{index}:{password}@127.0.0.1:{port}/nope"  # fails after connecting
    (tmp_path / "suite.yaml").write_text(SUITE + "  missing_table:\n    - not_null: x\n")
    outputs: dict[str, Any] = {}
    for debug in ((), ("--debug",)):
        for label, target in (("ok", url), ("no-db", wrong)):
            scan = _cli(tmp_path, *debug, "scan", "--db", target, "--checks", "suite.yaml",
                        "--out", f"out-{label}{'-d' if debug else ''}")
            outputs[f"scan {label} {debug} stdout"], outputs[f"scan {label} {debug} stderr"] = scan.stdout, scan.stderr
        bad = _cli(tmp_path, *debug, "query", "--db", url, "SELECT nope FROM items")
        outputs[f"query {debug} stderr"] = bad.stderr
    assert json.loads((tmp_path / "out-ok" / "findings.json").read_text())["findings"][0]["failing"] == 2
    assert any("Traceback" in v for k, v in outputs.items() if "--debug" in k)
    with SmtpSink(users={"watchdog": "smtp-pw-Q1"}) as sink, Receiver() as hook:
        config = tmp_path / "watchdog.yaml"
        config.write_text(yaml.safe_dump({
            "state_dir": "state", "history": {"url": "sqlite:///history.db"},
            "smtp": {"host": "127.0.0.1", "port": sink.port, "security": "none", "username": "watchdog",
                     "password": "smtp-pw-Q1", "sender": "watchdog@example.com"},
            "scheduler": {"delivery_attempts": 1, "delivery_wait_max_s": 0},
            "databases": {"shop": {"url": f"postgresql+psycopg://r{index}:${{TEST_DB_PASSWORD}}@127.0.0.1:{port}/"
                                          "postgres", "timeout_s": 10}},
            "audits": {"shop": {"database": "shop", "checks": ["suite.yaml"], "deliver": [
                {"file": {"dir": "reports"}}, {"email": {"to": ["dq@example.com"], "on": "always"}},
                {"webhook": {"url": "${TEST_HOOK_URL}", "on": "always"}}]}},
        }))
        # the webhook's own URL carries the password as written, too: it must arrive as Basic auth, intact
        env = {"TEST_DB_PASSWORD": password,
               "TEST_HOOK_URL": hook.url.replace("http://", f"http://bot:{password}@") + "/hook"}
        for debug in ((), ("--debug",)):
            run = _cli(tmp_path, *debug, "run", "shop", "--config", str(config), env=env)
            assert run.returncode in (1, 3), run.stderr
            outputs[f"run {debug} stdout"], outputs[f"run {debug} stderr"] = run.stdout, run.stderr
        history = _cli(tmp_path, "history", "shop", "--json", "--config", str(config), env=env)
        outputs["history"] = history.stdout + history.stderr
        dashboard = _cli(tmp_path, "dashboard", "--config", str(config), "--out", "dash", env=env)
        assert dashboard.returncode == 0, dashboard.stderr
        outputs["dashboard"] = dashboard.stdout + dashboard.stderr
        served = _cli(tmp_path, "--debug", "serve", "--config", str(_scheduled(config)), "--for", "3", env=env)
        outputs["serve log"] = served.stdout + served.stderr
        assert "audit shop" in outputs["serve log"], outputs["serve log"][-2000:]
        outputs["mcp"] = asyncio.run(_mcp_answers(tmp_path, config, env))
        mails = [m.raw for m in sink.received]
        bodies = [r["body"] for r in hook.requests]
    assert mails and bodies
    basic = "Basic " + base64.b64encode(f"bot:{password}".encode()).decode()
    assert {r["headers"].get("Authorization") for r in hook.requests} == {basic}
    assert all(r["path"] == "/hook" for r in hook.requests)
    runs = [p for p in (tmp_path / "reports").rglob("audit.json")]
    assert runs and any((p.parent / "report.html").is_file() for p in runs)
    assert any(json.loads(p.read_text()).get("database", "").startswith(f"postgresql+psycopg://r{index}:***@")
               for p in (tmp_path / "reports").rglob("findings.json"))
    outputs.update({f"mail {i}": raw for i, raw in enumerate(mails)})
    outputs.update({f"webhook {i}": body for i, body in enumerate(bodies)})
    outputs.update(_written(tmp_path))
    assert not _leaks(outputs, [password])


def _scheduled(config: Path) -> Path:
    data = yaml.safe_load(config.read_text())
    data["audits"]["shop"]["schedule"] = {"every": "1s"}
    data["scheduler"]["misfire_grace_s"] = 30
    served = config.with_name("served.yaml")
    served.write_text(yaml.safe_dump(data))
    return served


async def _mcp_answers(root: Path, config: Path, env: dict[str, str]) -> str:
    from mcp import Client
    from mcp.client.stdio import StdioServerParameters

    params = StdioServerParameters(command=sys.executable, args=["-m", "watchdog", "mcp", "--config", str(config)],
                                   cwd=str(root), env={**os.environ, **env})
    answers = []
    async with Client(params, cache=None) as client:
        for tool, arguments in (("list_databases", {}), ("list_tables", {"database": "shop"}),
                                ("query", {"database": "shop", "sql": "SELECT nope FROM items"}),
                                ("describe_table", {"database": "shop", "table": "nothing_here"}),
                                ("run_checks", {"database": "shop", "checks_yaml": SUITE})):
            result = await client.call_tool(tool, arguments)
            answers.append(json.dumps({"tool": tool, "error": result.is_error,
                                       "text": "".join(getattr(b, "text", "") for b in result.content),
                                       "structured": result.structured_content}, default=str))
    assert any('"error": false' in a and "items" in a for a in answers)  # it reached the database
    return "\n".join(answers)


def test_a_libpq_keyword_string_in_the_config_connects_and_a_broken_one_shows_none_of_it(pg, run_cli, tmp_path):
    password = NASTY[3]
    quoted = "'" + password.replace("\\", "\\\\").replace("'", "\\'") + "'"
    (tmp_path / "suite.yaml").write_text(SUITE)
    dsn = f"host=127.0.0.1 port={pg.port} user=r3 password={quoted} dbname=postgres"
    (tmp_path / "ok.yaml").write_text(yaml.safe_dump({"databases": {"shop": {"url": dsn}}}))
    ok = run_cli("scan", "--db", "shop", "--config", "ok.yaml", "--checks", "suite.yaml", "--out", "o")
    assert ok.returncode == 1, ok.stderr  # connected; 2 NULL skus
    (tmp_path / "bad.yaml").write_text(yaml.safe_dump({"databases": {"shop": {"url": dsn + " 'unclosed"}}}))
    bad = run_cli("scan", "--db", "shop", "--config", "bad.yaml", "--checks", "suite.yaml")
    assert bad.returncode == 3 and "not a valid keyword=value connection string" in bad.stderr, bad.stderr
    assert not _leaks({"ok": ok.stdout + ok.stderr, "bad": bad.stdout + bad.stderr,
                       "findings": (tmp_path / "o" / "findings.json").read_bytes()}, [password])
