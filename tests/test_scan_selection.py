"""``watchdog scan --tags/--owner/--exclude-tags``: only the matching checks run, in the same batched statements.

The command runs as a real process on SQLite and PostgreSQL; a two-line start-up hook records every statement
the sandbox sends, so the test can count them (the hook only listens: the command is the installed one).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

import watchdog
from watchdog.scan.selection import CheckSelection, select_checks
from watchdog.scan.suites import SuiteError, load_suites

SUITE = """\
owner: "@data-platform"
tables:
  orders:
    tags: [finance]
    checks:
      - not_null: amount
      - range: {column: amount, min: 0}
      - not_null: {column: email, tags: [pii], owner: "@alice"}
      - accepted_values: {column: status, values: [open, paid]}
  customers:
    tags: [crm]
    checks:
      - not_null: {column: email, tags: [pii]}
      - not_null: {column: name, owner: "@alice"}
"""

#: the ``watchdog`` command, with every statement the sandbox sends appended to $WD_STATEMENTS
RECORDING_CLI = """
import os, watchdog.sandbox.sandbox as sb
_init = sb.Sandbox.__init__
def _recording(self, *a, **k):
    _init(self, *a, **k)
    self.on_execute(lambda sql: open(os.environ["WD_STATEMENTS"], "a").write(" ".join(sql.split()) + "\\n"))
sb.Sandbox.__init__ = _recording
from watchdog.cli import run
run()
"""


def load_shop(db) -> None:
    db.create_table("orders", {"id": "int", "amount": "int", "email": "text", "status": "text"},
                    [(1, 10, "a@x.io", "open"), (2, None, None, "paid"), (3, -5, "c@x.io", "lost"),
                     (4, 7, None, "open")])
    db.create_table("customers", {"id": "int", "email": "text", "name": "text"},
                    [(1, "a@x.io", "Ann"), (2, None, "Bo"), (3, "c@x.io", None)])


def scan_cli(db_url: str, suite: Path, out: Path, *selection: str) -> tuple[subprocess.CompletedProcess, dict, list]:
    """Run ``watchdog scan`` in its own process; its exit, findings.json (or {}) and the statements it sent."""
    log = out.parent / f"{out.name}.sql"
    env = {**os.environ, "WD_STATEMENTS": str(log)}
    done = subprocess.run([sys.executable, "-c", RECORDING_CLI, "scan", "--db", db_url, "--checks", str(suite),
                           "--out", str(out), "--sample", "0", "--no-diagnose", "--json", *selection],
                          capture_output=True, text=True, timeout=120, env=env, cwd=out.parent)
    findings = json.loads((out / "findings.json").read_text()) if (out / "findings.json").exists() else {}
    statements = log.read_text().splitlines() if log.exists() else []
    return done, findings, statements


def reads(statements: list[str], table: str) -> list[str]:
    return [s for s in statements if f"FROM {table}" in s.replace('"', "").replace("`", "")]


@pytest.mark.parametrize("kind", ["sqlite", "postgresql"])
def test_scan_runs_only_the_selected_checks_in_the_same_statements(kind, make_database, tmp_path):
    db = make_database(kind)
    load_shop(db)
    suite = tmp_path / "shop.yaml"
    suite.write_text(SUITE)
    full, every, sent = scan_cli(db.url, suite, tmp_path / "full")
    assert full.returncode == 1, full.stderr
    assert len(every["findings"]) == 6
    assert len(reads(sent, "orders")) == 1 and len(reads(sent, "customers")) == 1  # one batch per table

    finance, doc, sent_finance = scan_cli(db.url, suite, tmp_path / "finance", "--tags", "finance",
                                          "--exclude-tags", "pii")
    assert finance.returncode == 1, finance.stderr
    assert [f["name"] for f in doc["findings"]] == ["orders.amount.not_null", "orders.amount.range",
                                                   "orders.status.accepted_values"]
    assert all("finance" in f["tags"] and "pii" not in f["tags"] for f in doc["findings"])
    assert reads(sent_finance, "customers") == []
    assert len(reads(sent_finance, "orders")) == 1  # the three checks still share one statement
    assert len(sent_finance) <= len(sent)
    by_name = {f["name"]: f for f in every["findings"]}
    for f in doc["findings"]:  # the same figures as in the full scan
        assert (f["failing"], f["total"], f["status"]) == tuple(by_name[f["name"]][k]
                                                                for k in ("failing", "total", "status"))

    alice, doc, sent_alice = scan_cli(db.url, suite, tmp_path / "alice", "--owner", "@alice")
    assert alice.returncode == 1, alice.stderr
    assert {f["name"]: f["owners"] for f in doc["findings"]} == {"orders.email.not_null": ["@alice"],
                                                               "customers.name.not_null": ["@alice"]}
    assert len(sent_alice) <= len(sent)

    both, doc, _ = scan_cli(db.url, suite, tmp_path / "both", "--tags", "crm,finance", "--owner", "@alice",
                            "--exclude-tags", "pii")
    assert both.returncode == 1, both.stderr
    assert [f["name"] for f in doc["findings"]] == ["customers.name.not_null"]


@pytest.mark.parametrize("kind", ["sqlite", "postgresql"])
def test_a_selection_that_matches_nothing_is_no_check_at_all(kind, make_database, tmp_path):
    db = make_database(kind)
    load_shop(db)
    suite = tmp_path / "shop.yaml"
    suite.write_text(SUITE)
    done, doc, sent = scan_cli(db.url, suite, tmp_path / "none", "--tags", "finanse")
    assert done.returncode == 3
    assert "nothing to check: the selection --tags finanse matches none of the 6 checks" in done.stderr
    assert "no check is tagged 'finanse' (did you mean 'finance'?)" in done.stderr
    assert "--allow-empty" in done.stderr
    assert sent == [] and doc == {}  # refused before any query

    allowed, doc, _ = scan_cli(db.url, suite, tmp_path / "allowed", "--tags", "finanse", "--allow-empty")
    assert allowed.returncode == 0, allowed.stderr
    assert doc["findings"] == [] and doc["summary"]["checks"] == 0


def test_the_selection_reads_inherited_owners_and_tags(tmp_path):
    suite = tmp_path / "shop.yaml"
    suite.write_text(SUITE)
    suites = load_suites([suite])

    def names(**given) -> list[str]:
        return [c.name for s in select_checks(suites, CheckSelection.of(**given), allow_empty=True) for c in s.checks]

    assert len(names()) == 6
    assert names(owners="@data-platform") == ["orders.amount.not_null", "orders.amount.range",
                                              "orders.status.accepted_values", "customers.email.not_null"]
    assert names(tags=["pii"]) == ["orders.email.not_null", "customers.email.not_null"]
    assert names(exclude_tags="finance,crm") == []
    assert names(tags="finance", owners=["@alice"]) == ["orders.email.not_null"]
    assert CheckSelection.of(tags=["a, b", "a"], owners=None).tags == ("a", "b")
    with pytest.raises(SuiteError, match="no check is owned by '@alcie' \\(did you mean '@alice'\\?\\)"):
        select_checks(suites, CheckSelection.of(owners="@alcie"))


def test_the_python_api_selects_as_the_command_does(make_database, tmp_path):
    db = make_database("sqlite")
    load_shop(db)
    doc = watchdog.scan(db.url, SUITE, tags="finance", exclude_tags=["pii"], sample=0)
    assert [f.name for f in doc.findings] == ["orders.amount.not_null", "orders.amount.range",
                                             "orders.status.accepted_values"]
    assert [f.name for f in watchdog.scan(db.url, SUITE, owners="@alice").findings] == [
        "orders.email.not_null", "customers.name.not_null"]
    with pytest.raises(watchdog.ConfigError, match="nothing to check"):
        watchdog.scan(db.url, SUITE, tags="nope")
    assert watchdog.scan(db.url, SUITE, tags="nope", allow_empty=True).findings == []
