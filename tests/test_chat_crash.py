"""kill -9 between sending a chat message and recording it: after a restart, the channel has the message once.

A real ``watchdog run`` process posts to a loopback receiver that plays Slack (an incoming webhook, or the Web
API through slack_sdk: chat.postMessage, conversations.list and conversations.history) or a Teams workflow. The
receiver SIGKILLs the process while it handles the post, before answering: the message has arrived (or, in one
case, is lost on the way) and the process never learns it. A second ``watchdog run`` (which flushes the outbox
first) then settles the abandoned delivery, and the receiver counts the messages of the killed run.
"""

from __future__ import annotations

import json
import os
import signal
import sqlite3
import subprocess
import sys
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, urlparse

import pytest

from watchdog.history import HistoryStore

LEASE_S = 2


class ChatReceiver:
    """Slack (webhook and Web API) and Teams on 127.0.0.1: keeps every message; kills ``victim`` on the first."""

    def __init__(self, *, lose_first: bool = False) -> None:
        self.messages: list[dict[str, Any]] = []
        self.victim: int | None = None
        self.lose_first = lose_first  # the killed post never arrives (the connection broke on the way)
        self.killed = threading.Event()
        receiver = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:  # noqa: N802 - the stdlib's name
                raw = self.rfile.read(int(self.headers.get("Content-Length") or 0)).decode()
                if not raw.startswith("{"):  # a Web API call with form fields (slack_sdk's reads)
                    self.path += "?" + raw
                    self.do_GET()
                    return
                body = json.loads(raw)
                first = receiver.victim is not None and not receiver.killed.is_set()
                if not (first and receiver.lose_first):
                    receiver.messages.append({"path": self.path, "body": body, "at": time.time()})
                if first:
                    os.kill(receiver.victim, signal.SIGKILL)  # before the answer: the sender never learns
                    receiver.killed.set()
                    return
                self.answer({"ok": True, "channel": "C0DQ", "ts": f"{time.time():.6f}"}
                            if self.path.startswith("/api/") else "1")

            def do_GET(self) -> None:  # noqa: N802
                url = urlparse(self.path)
                query = {k: v[0] for k, v in parse_qs(url.query).items()}
                if url.path == "/api/conversations.list":
                    self.answer({"ok": True, "channels": [{"id": "C0OTHER", "name": "general"},
                                                          {"id": "C0DQ", "name": "dq"}]})
                elif url.path == "/api/conversations.history" and query.get("channel") == "C0DQ":
                    kept = [{"type": "message", "ts": f"{m['at']:.6f}", "text": m["body"].get("text"),
                             **({"metadata": m["body"]["metadata"]} if "metadata" in m["body"] else {})}
                            for m in receiver.messages if m["at"] >= float(query.get("oldest") or 0)]
                    self.answer({"ok": True, "messages": kept[::-1], "has_more": False})
                else:
                    self.answer({"ok": False, "error": "channel_not_found"})

            def answer(self, payload: Any) -> None:
                raw = payload.encode() if isinstance(payload, str) else json.dumps(payload).encode()
                self.send_response(200)
                self.send_header("Content-Type", "application/json" if not isinstance(payload, str) else "text/plain")
                self.send_header("Content-Length", str(len(raw)))
                self.end_headers()
                self.wfile.write(raw)

            def log_message(self, *args: Any) -> None:
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"
        threading.Thread(target=self.server.serve_forever, args=(0.05,), daemon=True).start()

    def of_run(self, run_id: str) -> list[dict[str, Any]]:
        return [m for m in self.messages if run_id in json.dumps(m["body"])]

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()


@pytest.fixture
def chat_receiver():
    made: list[ChatReceiver] = []

    def make(**kwargs: Any) -> ChatReceiver:
        made.append(ChatReceiver(**kwargs))
        return made[-1]

    yield make
    for receiver in made:
        receiver.close()


DESTINATIONS = {
    "slack-webhook": ('slack: {{webhook_url: "{url}/services/T0/B0/hook-secret"}}', "unconfirmed"),
    "slack-web-api": ('slack: {{token: "xoxb-crash-secret", channel: "#dq", api_url: "{url}/api/"}}', "sent"),
    "teams": ('teams: {{webhook_url: "{url}/workflows/run?sig=teams-secret"}}', "unconfirmed"),
}


def project(root: Path, destination: str) -> Path:
    root.mkdir()
    with sqlite3.connect(root / "shop.db") as conn:
        conn.execute("CREATE TABLE items (id INTEGER, name TEXT)")
        conn.executemany("INSERT INTO items VALUES (?, ?)", [(1, None), (2, "a"), (3, None)])
    (root / "shop.yaml").write_text('owner: "@alice"\ntables:\n  items:\n    - not_null: name\n')
    config = root / "watchdog.yaml"
    config.write_text(f"""\
state_dir: state
public_url: https://dq.example.com
history: {{url: "sqlite:///history.db"}}
scheduler: {{delivery_attempts: 1, delivery_lease_s: {LEASE_S}}}
databases:
  shop: {{url: "sqlite:///shop.db"}}
audits:
  quick:
    database: shop
    checks: [shop.yaml]
    deliver:
      - file: {{dir: reports}}
      - {destination}
""")
    return config


def run(root: Path, config: Path) -> subprocess.Popen:
    env = {k: v for k, v in os.environ.items() if k not in ("WATCHDOG_CONFIG", "WATCHDOG_STATE_DIR")}
    return subprocess.Popen([sys.executable, "-m", "watchdog", "run", "quick", "--config", str(config)], cwd=root,
                            env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


def chat_deliveries(root: Path) -> dict[str, Any]:
    store = HistoryStore(f"sqlite:///{root / 'history.db'}")
    try:
        return {r.id: next(d for d in r.deliveries if d.channel in ("slack", "teams"))
                for r in store.list_runs("quick", limit=10)}
    finally:
        store.close()


@pytest.mark.parametrize("name", list(DESTINATIONS))
def test_kill_9_between_posting_and_recording_leaves_one_message(tmp_path, chat_receiver, name):
    template, settled = DESTINATIONS[name]
    receiver = chat_receiver()
    root = tmp_path / "p"
    config = project(root, template.format(url=receiver.url))
    first = run(root, config)
    receiver.victim = first.pid
    first.communicate(timeout=120)
    assert first.returncode == -signal.SIGKILL and receiver.killed.is_set()
    [(crashed, record)] = chat_deliveries(root).items()
    assert record.status == "posting"  # the message was in flight when the process died
    assert len(receiver.of_run(crashed)) == 1

    time.sleep(LEASE_S + 0.5)  # the abandoned claim's lease runs out
    second = run(root, config)  # a restart: every run flushes the outbox first
    out, err = second.communicate(timeout=120)
    assert second.returncode == 1, err  # the findings fail; the run itself went through
    assert len(receiver.of_run(crashed)) == 1, "the killed run's message was posted again"
    records = chat_deliveries(root)
    assert records[crashed].status == settled
    if settled == "unconfirmed":
        assert "cannot be asked whether it arrived" in (records[crashed].last_error or "")
    [later] = [run_id for run_id in records if run_id != crashed]
    assert records[later].status == "sent" and len(receiver.of_run(later)) == 1
    for secret in ("hook-secret", "xoxb-crash-secret", "teams-secret"):
        assert secret not in out + err + json.dumps([vars(r) for r in records.values()])


def test_a_web_api_message_lost_in_flight_is_posted_after_the_restart(tmp_path, chat_receiver):
    """The other side of asking Slack: the killed post never arrived, so the restart posts it, once."""
    receiver = chat_receiver(lose_first=True)
    root = tmp_path / "p"
    config = project(root, DESTINATIONS["slack-web-api"][0].format(url=receiver.url))
    first = run(root, config)
    receiver.victim = first.pid
    first.communicate(timeout=120)
    assert first.returncode == -signal.SIGKILL
    [crashed] = chat_deliveries(root)
    assert receiver.of_run(crashed) == []
    time.sleep(LEASE_S + 0.5)
    second = run(root, config)
    second.communicate(timeout=120)
    assert len(receiver.of_run(crashed)) == 1
    assert chat_deliveries(root)[crashed].status == "sent"
