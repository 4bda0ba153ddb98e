"""Owners and tags on checks (inherited suite -> table -> check), carried into findings.json, and routing: each
chat destination hears only of the problem checks it selects (tags x owners x severity x on), mentions their
owners, and records a skip when its selection matches nothing."""

from __future__ import annotations

import json
import re
import sqlite3
from pathlib import Path

from tests.test_chat_delivery import Receiver, check_block_kit, check_teams_card
from watchdog.run.audit import execute_audit
from watchdog.scan.suites import load_suites
from watchdog.settings import load_settings

SUITE = """\
owner: "@data-platform"
tags: [shop]
tables:
  orders:
    tags: [finance]
    owners: ["@alice"]
    checks:
      - not_null: amount                                   # fails: @alice, shop+finance
      - not_null: {column: status, severity: warn}         # warns: @alice
  customers:
    checks:
      - not_null: email                                    # fails: @data-platform, shop
      - not_null: {column: phone, owner: "@bob", tags: [pii]}   # fails: @bob, shop+pii
      - not_null: id                                       # passes
"""


def make_project(root: Path, deliver: str) -> Path:
    (root / "config").mkdir(parents=True, exist_ok=True)
    (root / "checks").mkdir(exist_ok=True)
    (root / "data").mkdir(exist_ok=True)
    with sqlite3.connect(root / "data" / "shop.db") as conn:
        conn.executescript("""
            DROP TABLE IF EXISTS orders; DROP TABLE IF EXISTS customers;
            CREATE TABLE orders (id INTEGER, amount REAL, status TEXT);
            CREATE TABLE customers (id INTEGER, email TEXT, phone TEXT);
            INSERT INTO orders VALUES (1, NULL, NULL), (2, 3.5, 'new');
            INSERT INTO customers VALUES (1, NULL, NULL), (2, 'a@b.c', '555');
        """)
    (root / "checks" / "shop.yaml").write_text(SUITE)
    config = root / "config" / "watchdog.yaml"
    config.write_text(f"""\
base_dir: ..
state_dir: state
owners:
  "@alice": {{slack: "<@U0456>", teams: "Alice Example", email: alice@example.com}}
  "@data-platform": {{slack: "<!subteam^S0123>", teams: "Data Platform"}}
databases:
  shop: {{url: "sqlite:///data/shop.db"}}
audits:
  shop:
    database: shop
    checks: [checks/shop.yaml]
    deliver:
{deliver}""")
    return config


def test_owners_and_tags_are_inherited_and_carried_into_findings(tmp_path: Path) -> None:
    suite = tmp_path / "s.yaml"
    suite.write_text(SUITE)
    checks = {c.name: c for s in load_suites([suite]) for c in s.checks}
    assert checks["orders.amount.not_null"].owners == ("@alice",)
    assert checks["orders.amount.not_null"].tags == ("shop", "finance")
    assert checks["customers.email.not_null"].owners == ("@data-platform",)
    assert checks["customers.phone.not_null"].owners == ("@bob",)
    assert checks["customers.phone.not_null"].tags == ("shop", "pii")


def test_each_destination_hears_only_what_it_selects(tmp_path: Path) -> None:
    hooks = {name: Receiver() for name in ("all", "finance", "bob", "fail", "none", "new", "teams")}
    try:
        deliver = "\n".join([
            f'      - slack: {{webhook_url: "{hooks["all"].url}/h/all", on: always}}',
            f'      - slack: {{webhook_url: "{hooks["finance"].url}/h/fin", tags: [finance]}}',
            f'      - slack: {{webhook_url: "{hooks["bob"].url}/h/bob", owners: ["@bob"]}}',
            f'      - slack: {{webhook_url: "{hooks["fail"].url}/h/fail", severity: fail, tags: [finance]}}',
            f'      - slack: {{webhook_url: "{hooks["none"].url}/h/none", tags: [marketing]}}',
            f'      - slack: {{webhook_url: "{hooks["new"].url}/h/new", on: new}}',
            f'      - teams: {{webhook_url: "{hooks["teams"].url}/h/teams", owners: ["@alice"]}}',
        ]) + "\n"
        settings = load_settings(make_project(tmp_path / "p", deliver))
        run = execute_audit(settings, "shop")
        doc = json.loads((run.run_dir / "findings.json").read_text())
        by_name = {f["name"]: f for f in doc["findings"]}
        assert by_name["customers.phone.not_null"]["owner"] == "@bob"
        assert by_name["orders.amount.not_null"]["tags"] == ["shop", "finance"]

        def listed(receiver: Receiver) -> list[str]:
            body = receiver.bodies()[-1]
            text = json.dumps(body).replace("\\\\_", "_")  # Teams text escapes Markdown's _
            # a listed check's own line: "*FAIL* `name`" (Slack), "FAIL name" (Teams); the diagnosis may name
            # other checks, in code too
            return sorted(n for n in by_name if re.search(rf"(\*(FAIL|WARN)\* `|(FAIL|WARN) ){re.escape(n)}\b", text))

        assert listed(hooks["all"]) == ["customers.email.not_null", "customers.phone.not_null",
                                        "orders.amount.not_null", "orders.status.not_null"]
        assert listed(hooks["finance"]) == ["orders.amount.not_null", "orders.status.not_null"]
        assert listed(hooks["bob"]) == ["customers.phone.not_null"]
        assert listed(hooks["fail"]) == ["orders.amount.not_null"]          # the warning is not a fail
        assert hooks["none"].requests == []                                 # matched nothing: nothing sent
        assert len(hooks["new"].requests) == 1                              # no previous run: all are new
        assert listed(hooks["teams"]) == ["orders.amount.not_null", "orders.status.not_null"]
        for name in ("all", "finance", "bob", "fail", "new"):
            assert check_block_kit(hooks[name].bodies()[-1]) == []
        assert check_teams_card(hooks["teams"].bodies()[-1]) == []
        mentions = json.dumps(hooks["all"].bodies()[-1])
        assert "<@U0456>" in mentions and "<!subteam^S0123>" in mentions     # owners of the listed checks
        assert "<@U0456>" not in json.dumps(hooks["bob"].bodies()[-1])
        assert "Alice Example" in json.dumps(hooks["teams"].bodies()[-1])
        skipped = [d for d in run.deliveries if d["status"] == "skipped"]
        assert len(skipped) == 1 and "matched no problem check" in (skipped[0].get("last_error") or "")

        second = execute_audit(settings, "shop")  # the same problems again: none is new
        assert len(hooks["new"].requests) == 1
        assert len(hooks["all"].requests) == 2
        assert any("matched no problem check" in (d.get("last_error") or "") and "new problems" in d["last_error"]
                   for d in second.deliveries)
    finally:
        for receiver in hooks.values():
            receiver.close()
