"""An audit delivered by e-mail through a real SMTP server on loopback: content, policy, outbox, once only."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

import pytest

from watchdog.delivery.outbox import flush_outbox
from watchdog.history import HistoryStore
from watchdog.run.audit import execute_audit
from watchdog.settings import load_settings
from watchdog.testing.smtp_sink import SmtpSink

SMTP_PASSWORD = "smtp-Pa55word-xyz"


@pytest.fixture
def shop(tmp_path: Path) -> Path:
    db = tmp_path / "shop.db"
    with sqlite3.connect(db) as conn:
        conn.execute("CREATE TABLE items (id INTEGER PRIMARY KEY, sku TEXT)")
        conn.executemany("INSERT INTO items VALUES (?, ?)", [(i, None if i < 3 else f"S{i}") for i in range(1, 11)])
    (tmp_path / "suite.yaml").write_text("tables:\n  items:\n    - not_null: sku\n    - unique: id\n")
    return tmp_path


def config_for(root: Path, port: int, on: str = "problems") -> Path:
    path = root / "watchdog.yaml"
    path.write_text(f"""\
state_dir: state
databases:
  shop: {{url: "sqlite:///shop.db"}}
history: {{url: "sqlite:///history.db"}}
smtp:
  host: 127.0.0.1
  port: {port}
  security: none
  username: watchdog
  password: ${{TEST_SMTP_PASSWORD}}
  sender: watchdog@example.com
scheduler: {{delivery_attempts: 2, delivery_wait_max_s: 0}}
audits:
  shop:
    database: shop
    checks: [suite.yaml]
    deliver:
      - file: {{dir: reports}}
      - email: {{to: [dq@example.com, lead@example.com], on: {on}}}
""")
    return path


@pytest.fixture
def settings_for(shop, monkeypatch):
    monkeypatch.setenv("TEST_SMTP_PASSWORD", SMTP_PASSWORD)

    def make(port: int, on: str = "problems"):
        return load_settings(config_for(shop, port, on))

    return make


def test_the_mail_has_subject_both_parts_the_attachment_and_no_secret(settings_for):
    with SmtpSink(users={"watchdog": SMTP_PASSWORD}) as sink:
        settings = settings_for(sink.port)
        run = execute_audit(settings, "shop")
        assert [(d["channel"], d["status"]) for d in run.deliveries] == [
            ("file", "sent"), ("email", "sent"), ("email", "sent")]
        assert sorted(m["To"] for m in sink.messages) == ["dq@example.com", "lead@example.com"]
        message = sink.messages[0]
        raw = sink.received[0].raw.decode("utf-8", "replace")
    # a first run has no previous run to compare with, so no "(1 new)" (issue 11)
    assert message["Subject"] == "[watchdog] shop: 1 failed, 0 warned"
    assert message["From"] == "watchdog@example.com" and message["X-Watchdog-Run"] == run.run_id
    kinds = [part.get_content_type() for part in message.walk()]
    assert "text/plain" in kinds and "text/html" in kinds
    text = next(p for p in message.walk() if p.get_content_type() == "text/plain").get_content()
    assert "items.sku.not_null" in text and "2 of 10" in text
    attachment = next(p for p in message.walk() if p.get_filename() == "findings.json")
    assert json.loads(attachment.get_content()) == json.loads((run.run_dir / "findings.json").read_text())
    assert SMTP_PASSWORD not in raw


def test_on_problems_sends_nothing_for_a_clean_run(settings_for, shop):
    with sqlite3.connect(shop / "shop.db") as conn:
        conn.execute("UPDATE items SET sku = 'S' || id")
    with SmtpSink(users={"watchdog": SMTP_PASSWORD}) as sink:
        run = execute_audit(settings_for(sink.port), "shop")
        assert sink.messages == []
    assert {d["status"] for d in run.deliveries if d["channel"] == "email"} == {"skipped"}


def test_on_changes_sends_only_when_findings_differ(settings_for, shop):
    with SmtpSink(users={"watchdog": SMTP_PASSWORD}) as sink:
        settings = settings_for(sink.port, on="changes")
        execute_audit(settings, "shop")
        execute_audit(settings, "shop")  # same findings: no mail
        assert len(sink.messages) == 2
        with sqlite3.connect(shop / "shop.db") as conn:
            conn.execute("UPDATE items SET sku = NULL WHERE id = 5")
        execute_audit(settings, "shop")
        assert len(sink.messages) == 4


def test_smtp_down_keeps_the_mail_in_the_outbox_and_the_next_tick_delivers_it_once(settings_for):
    with SmtpSink(users={"watchdog": SMTP_PASSWORD}, fail="451 4.3.0 try again later") as sink:
        settings = settings_for(sink.port)
        run = execute_audit(settings, "shop")
        assert (run.run_dir / "findings.json").is_file() and (run.run_dir / "report.md").is_file()
        assert sink.messages == []
        store = HistoryStore(settings.history_url())
        pending = store.outbox()
        assert [(d.channel, d.target, d.attempts) for d in pending] == [
            ("email", "dq@example.com", 2), ("email", "lead@example.com", 2)]
        assert all("451" in d.last_error and SMTP_PASSWORD not in d.last_error for d in pending)
        assert "pending" in {d.status for d in store.get_run(run.run_id).deliveries}

        sink.fail = None  # the server is back
        flushed = flush_outbox(settings, store)
        assert [d.status for d in flushed] == ["sent", "sent"] and len(sink.messages) == 2
        assert flush_outbox(settings, store) == [] and len(sink.messages) == 2  # exactly once
        execute_audit(settings, "shop")  # the next run does not resend the old one either
        assert sorted(m["X-Watchdog-Run"] for m in sink.messages).count(run.run_id) == 2
        store.close()


def test_the_next_run_retries_the_outbox_first(settings_for):
    with SmtpSink(users={"watchdog": SMTP_PASSWORD}, fail="451 4.3.0 busy", fail_times=4) as sink:
        settings = settings_for(sink.port)
        first = execute_audit(settings, "shop")  # 2 recipients x 2 attempts: all refused
        assert sink.messages == []
        second = execute_audit(settings, "shop")
        runs = [m["X-Watchdog-Run"] for m in sink.messages]
        assert runs.count(first.run_id) == 2 and runs.count(second.run_id) == 2


def test_the_html_part_draws_each_problem_over_the_last_runs(settings_for, shop):
    """A compact inline SVG per problem row: one point per recorded run of the audit, drawn from the history."""
    with SmtpSink(users={"watchdog": SMTP_PASSWORD}) as sink:
        settings = settings_for(sink.port, on="always")
        for nulls in (3, 2, 1):  # more rows with a sku each run
            with sqlite3.connect(shop / "shop.db") as conn:
                conn.execute("UPDATE items SET sku = CASE WHEN id <= ? THEN NULL ELSE 'S' || id END", (nulls,))
            execute_audit(settings, "shop")
        last = [m for m in sink.messages if m["To"] == "dq@example.com"][-1]
    html = next(p for p in last.walk() if p.get_content_type() == "text/html").get_content()
    row = next(r for r in html.split("<tr>") if "items.sku.not_null" in r)
    assert "Last runs" in html and row.count("<svg") == 1 and row.count('<circle class="point"') == 3
    assert "<script" not in html
