"""``remind_after``: an unchanged problem is not announced again before the interval, a worse one is, a resolved
one is announced once; the state is in the history database, shared by separate processes (SQLite and
PostgreSQL histories), on e-mail, webhook and Slack alike."""

from __future__ import annotations

import json
import os
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest
import sqlalchemy as sa

from tests.test_chat_delivery import Receiver
from tests.test_chat_routing import make_project
from watchdog.history import HistoryStore
from watchdog.testing.smtp_sink import SmtpSink

EVERY = ["customers.email.not_null", "customers.phone.not_null", "orders.amount.not_null", "orders.status.not_null"]


def run_in_process(config: Path, cwd: Path, history_url: str) -> dict:
    """``watchdog run shop`` in a process of its own (PYTHONPATH kept: this checkout's code); its run as the
    history recorded it."""
    done = subprocess.run([sys.executable, "-m", "watchdog", "run", "shop", "--json", "--config", str(config)],
                          capture_output=True, text=True, timeout=180, cwd=cwd, env=dict(os.environ))
    assert done.stdout.strip(), done.stderr
    store = HistoryStore(history_url)
    try:
        run = store.get_run(json.loads(done.stdout)["run_id"])
        assert run is not None
        return run.to_json_dict()
    finally:
        store.close()


@pytest.mark.parametrize("history", ["sqlite", "postgresql"])
def test_remind_after_across_processes_sharing_the_history(tmp_path: Path, history: str, make_database) -> None:
    history_url = (make_database("postgresql").url if history == "postgresql"
                   else f"sqlite:///{tmp_path / 'history.db'}")
    hook, slack = Receiver(), Receiver()
    try:
        with SmtpSink() as sink:
            deliver = (f'      - webhook: {{url: "{hook.url}/w", remind_after: 24h}}\n'
                       f"      - email: {{to: [team@example.com], mail_owners: false, remind_after: 24h}}\n"
                       f'      - slack: {{webhook_url: "{slack.url}/s", remind_after: 24h}}\n')
            config = make_project(tmp_path, deliver)
            config.write_text(f"history: {{url: \"{history_url}\"}}\n"
                              f"smtp: {{host: {sink.host}, port: {sink.port}, timeout_s: 5}}\n" + config.read_text())
            shop = tmp_path / "data" / "shop.db"
            first, second = tmp_path / "a", tmp_path / "b"   # two processes, each from its own folder
            first.mkdir()
            second.mkdir()

            def step(cwd: Path) -> tuple[dict, list[dict]]:
                before = len(hook.requests)
                out = run_in_process(config, cwd, history_url)
                counts = (len(hook.requests) - before, len(slack.requests), len(sink.messages))
                return out, [*hook.bodies()[before:], {"counts": counts}]

            out, posts = step(first)                       # 1: every problem is announced
            assert sorted(c["name"] for c in posts[0]["checks"]) == EVERY
            assert posts[-1]["counts"] == (1, 1, 1)

            out, posts = step(second)                      # 2: unchanged, within 24 h: nothing on any channel
            assert posts[-1]["counts"] == (0, 1, 1)
            reasons = {d["channel"]: d["last_error"] for d in out["deliveries"]}
            assert all(d["status"] == "skipped" for d in out["deliveries"])
            assert set(reasons) == {"webhook", "email", "slack"}
            assert all("4 unchanged problem checks already announced within remind_after" in r
                       for r in reasons.values())

            engine = sa.create_engine(history_url.replace("postgresql://", "postgresql+psycopg://", 1)
                                      if history_url.startswith("postgresql://") else history_url)
            with engine.begin() as conn:                   # a day goes by
                changed = conn.execute(sa.text("UPDATE wd_alerts SET announced_at = '2000-01-01T00:00:00Z'"))
                assert changed.rowcount == 3 * 4           # three destinations, four problems each
            engine.dispose()
            out, posts = step(first)                       # 3: past remind_after: announced again
            assert sorted(c["name"] for c in posts[0]["checks"]) == EVERY
            assert posts[-1]["counts"] == (1, 2, 2)

            with sqlite3.connect(shop) as conn:
                conn.execute("UPDATE customers SET email = 'x@example.com' WHERE email IS NULL")
            out, posts = step(second)                      # 4: one resolved: announced, the rest kept quiet
            assert posts[0]["checks"] == [] and posts[0]["resolved"] == ["customers.email.not_null"]
            assert posts[-1]["counts"] == (1, 3, 3)
            mail = sink.messages[-1].get_body(("plain",)).get_content()
            assert "Resolved since the previous run:" in mail and "customers.email.not_null" in mail
            assert "Checks needing attention" not in mail
            assert "1 resolved" in json.dumps(slack.bodies()[-1])

            out, posts = step(first)                       # 5: resolved is said once
            assert posts[-1]["counts"] == (0, 3, 3)
            assert all(d["status"] == "skipped" for d in out["deliveries"])

            with sqlite3.connect(shop) as conn:
                conn.execute("INSERT INTO orders VALUES (3, NULL, 'new')")
            out, posts = step(second)                      # 6: worse: announced at once, alone
            assert [c["name"] for c in posts[0]["checks"]] == ["orders.amount.not_null"]
            assert posts[0]["checks"][0]["change"] == "worse"
            assert posts[-1]["counts"] == (1, 4, 4)
            assert "orders.amount.not_null" in json.dumps(slack.bodies()[-1])
            assert "customers.phone.not_null" not in json.dumps(slack.bodies()[-1])
    finally:
        hook.close()
        slack.close()
