"""Secrets in every form a URL can carry them never reach a byte watchdog writes.

Each secret form goes through the real CLI (``scan``, ``query``, ``run``, ``history``, ``serve``, and
``--debug`` tracebacks) against a real PostgreSQL server, a real SMTP server (aiosmtpd) and a real
HTTP webhook receiver on loopback. Afterwards every byte is searched: stdout, stderr, the daemon log,
every file under the project folder (findings, reports, the history database's bytes, state), and
every received mail and HTTP body.

Forms: an unescaped ``@`` in the password (everything up to the authority's last ``@`` is
credentials), a ``password=`` query parameter (libpq accepts it), other secret query parameters
(``sslpassword``, ``api_key``, ``access_token``), user:password and a token in a webhook URL, and the
SMTP password.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.dbs import TestDatabase
from tests.test_webhook_delivery import Receiver
from watchdog.redact import redact, redact_url
from watchdog.testing.smtp_sink import SmtpSink

AT_TAIL = "SecretTailQ7"          # after an unescaped @ in the password
AT_HEAD = "AbcHeadW3"              # before it
PARAM_PASSWORD = "S3cretParamK9"   # ?password=
SSL_PASSWORD = "SslPw4Secret"      # ?sslpassword=
API_KEY = "ApiKey5Secret"          # ?api_key=
ACCESS_TOKEN = "AccessTok6Secret"  # ?access_token=
HOOK_PASSWORD = "HookPw8Secret"    # http://user:password@ in the webhook URL
HOOK_TOKEN = "HookTok9Secret"      # ?token= in the webhook URL
SMTP_PASSWORD = "SmtpPw1Secret"
SECRETS = (AT_TAIL, AT_HEAD, PARAM_PASSWORD, SSL_PASSWORD, API_KEY, ACCESS_TOKEN, HOOK_PASSWORD, HOOK_TOKEN,
           SMTP_PASSWORD)

SUITE = "tables:\n  items:\n    - not_null: sku\n    - unique: id\n"


def test_redact_url_rules():
    assert redact_url(f"postgresql+psycopg://u:{AT_HEAD}@{AT_TAIL}@db.example:5432/x") == \
        "postgresql+psycopg://u:***@db.example:5432/x"
    assert redact_url(f"postgresql://u:x@h/db?password={PARAM_PASSWORD}&sslmode=require") == \
        "postgresql://u:***@h/db?password=***&sslmode=require"
    assert redact_url(f"postgresql://h/db?sslpassword={SSL_PASSWORD}&api_key={API_KEY}&access_token={ACCESS_TOKEN}"
                      "&passfile=/home/u/.pgpass&application_name=a@b") == \
        "postgresql://h/db?sslpassword=***&api_key=***&access_token=***&passfile=***&application_name=a@b"
    assert redact_url("postgresql://u:pa/ss?w@h/db") == "postgresql://u:***@h/db"
    assert redact_url("mysql+pymysql://root@127.0.0.1:3306/shop") == "mysql+pymysql://root@127.0.0.1:3306/shop"
    assert redact_url("sqlite:///reports/demo/crm.db") == "sqlite:///reports/demo/crm.db"
    assert redact_url(f"https://bot:{HOOK_PASSWORD}@hooks.example/x?token={HOOK_TOKEN}#f") == \
        "https://***@hooks.example/x?***"
    # once seen, each secret is masked wherever it shows up, e.g. a driver reading TAIL@host as the host
    assert AT_TAIL not in redact(f'could not translate host name "{AT_TAIL}@db.example"')
    assert PARAM_PASSWORD not in redact(f"connection string: host=h password={PARAM_PASSWORD}")


@pytest.fixture
def project(make_database, tmp_path: Path) -> dict:
    db: TestDatabase = make_database("postgresql")
    db.create_table("items", {"id": "int", "sku": "text"}, [(i, None if i < 3 else f"S{i}") for i in range(1, 11)])
    base = db.url.split("@", 1)[1]  # 127.0.0.1:5432/name
    urls = {
        "at": f"postgresql+psycopg://postgres:{AT_HEAD}@{AT_TAIL}@{base}",
        "param": f"postgresql+psycopg://postgres:pw@{base}?password={PARAM_PASSWORD}",
        "params": f"postgresql+psycopg://postgres@{base}?sslpassword={SSL_PASSWORD}&api_key={API_KEY}"
                  f"&access_token={ACCESS_TOKEN}",
    }
    (tmp_path / "suite.yaml").write_text(SUITE)
    return {"root": tmp_path, "urls": urls}


def _written(root: Path, skip: set[str]) -> dict[str, bytes]:
    return {str(p): p.read_bytes() for p in root.rglob("*") if p.is_file() and p.name not in skip}


def _leaks(outputs: dict[str, bytes | str]) -> list[str]:
    found = []
    for where, data in outputs.items():
        blob = data if isinstance(data, bytes) else data.encode("utf-8", "replace")
        for secret in SECRETS:
            if secret.encode() in blob:
                found.append(f"{secret} in {where}")
    return found


def _cli(root: Path, *args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess:
    full_env = {**os.environ, **(env or {})}
    full_env.pop("WATCHDOG_CONFIG", None)
    return subprocess.run([sys.executable, "-m", "watchdog", *args], capture_output=True, text=True, timeout=180,
                          env=full_env, cwd=root)


def test_scan_and_query_with_each_secret_form_write_no_secret(project):
    root, urls = project["root"], project["urls"]
    outputs: dict[str, bytes | str] = {}
    for form, url in urls.items():
        for debug in ((), ("--debug",)):
            label = f"{form}{'-debug' if debug else ''}"
            scan = _cli(root, *debug, "scan", "--db", url, "--checks", "suite.yaml", "--out", f"out-{label}")
            outputs[f"scan {label} stdout"], outputs[f"scan {label} stderr"] = scan.stdout, scan.stderr
            query = _cli(root, *debug, "query", "--db", url, "SELECT count(*) FROM items")
            outputs[f"query {label} stdout"], outputs[f"query {label} stderr"] = query.stdout, query.stderr
            bad = _cli(root, *debug, "query", "--db", url, "SELECT nope FROM items")
            outputs[f"bad query {label} stderr"] = bad.stderr
    # the URL forms that reach the server really scan (exit 1: one failing check); the @-form cannot connect
    assert json.loads((root / "out-param" / "findings.json").read_text())["findings"][0]["failing"] == 2
    doc = json.loads((root / "out-param" / "findings.json").read_text())
    assert doc["database"].endswith("?password=***")
    assert "postgres:***@" in json.loads((root / "out-at" / "findings.json").read_text())["database"]
    assert any("Traceback" in str(v) for k, v in outputs.items() if "debug" in k)  # --debug did print tracebacks
    outputs.update(_written(root, skip={"suite.yaml"}))
    assert not _leaks(outputs)


def _config(root: Path, db_url: str, hook_url: str, smtp_port: int, schedule: str = "") -> Path:
    config = root / "watchdog.yaml"
    config.write_text(f"""\
state_dir: state
history: {{url: "sqlite:///history.db"}}
smtp:
  host: 127.0.0.1
  port: {smtp_port}
  security: none
  username: watchdog
  password: ${{TEST_SMTP_PASSWORD}}
  sender: watchdog@example.com
scheduler: {{delivery_attempts: 1, delivery_wait_max_s: 0, misfire_grace_s: 30}}
databases:
  shop: {{url: "${{TEST_DB_URL}}", timeout_s: 5}}
audits:
  shop:
    database: shop
    checks: [suite.yaml]{schedule}
    deliver:
      - file: {{dir: reports}}
      - email: {{to: [dq@example.com], on: always}}
      - webhook: {{url: "${{TEST_HOOK_URL}}", on: always}}
""")
    return config


@pytest.mark.parametrize("form", ["at", "param", "params"])
def test_run_history_serve_mail_and_webhook_write_no_secret(project, form):
    root, url = project["root"], project["urls"][form]
    outputs: dict[str, bytes | str] = {}
    with SmtpSink(users={"watchdog": SMTP_PASSWORD}) as sink, Receiver() as hook:
        hook_url = hook.url.replace("http://", f"http://bot:{HOOK_PASSWORD}@") + f"/hook?token={HOOK_TOKEN}"
        env = {"TEST_SMTP_PASSWORD": SMTP_PASSWORD, "TEST_DB_URL": url, "TEST_HOOK_URL": hook_url}
        config = _config(root, url, hook_url, sink.port)
        for debug in ((), ("--debug",)):
            run = _cli(root, *debug, "run", "shop", "--config", str(config), env=env)
            outputs[f"run{debug} stdout"], outputs[f"run{debug} stderr"] = run.stdout, run.stderr
            assert run.returncode in (1, 3), run.stderr
        for args in (("history", "--config", str(config)), ("history", "shop", "--json", "--config", str(config))):
            listed = _cli(root, *args, env=env)
            assert listed.returncode == 0, listed.stderr
            outputs[" ".join(args[:2]) + " stdout"], outputs[" ".join(args[:2]) + " stderr"] = \
                listed.stdout, listed.stderr
        served_config = _config(root, url, hook_url, sink.port, schedule="\n    schedule: {every: 1s}")
        log_path = root / "serve.log"
        with log_path.open("wb") as log:
            served = subprocess.Popen([sys.executable, "-m", "watchdog", "--debug", "serve", "--config",
                                       str(served_config), "--for", "3"], stdout=log, stderr=subprocess.STDOUT,
                                      env={**os.environ, **env}, cwd=root)
            try:
                served.wait(timeout=90)
            finally:
                if served.poll() is None:
                    served.send_signal(signal.SIGTERM)
                    time.sleep(1)
                    served.kill()
        outputs["serve log"] = log_path.read_bytes()
        assert b"audit shop" in outputs["serve log"]
        mails = [m.raw for m in sink.received]
        bodies = [r["body"] for r in hook.requests]
    assert mails and bodies, "every run is delivered (on: always) by mail and webhook"
    outputs.update({f"mail {i}": raw for i, raw in enumerate(mails)})
    outputs.update({f"webhook body {i}": body for i, body in enumerate(bodies)})
    outputs.update(_written(root, skip={"suite.yaml", "watchdog.yaml"}))
    assert not _leaks(outputs)
