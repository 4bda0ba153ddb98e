"""Slack and Teams delivery against HTTP receivers on loopback that check each payload as the service would
(Block Kit block types and limits, the Adaptive Card envelope), rate limits (429 + Retry-After), 5xx retries,
a receiver slower than the deadline, and webhook URLs kept secret everywhere."""

from __future__ import annotations

import json
import re
import sqlite3
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest

from watchdog.delivery.base import DeliveryError, RunPackage
from watchdog.delivery.chat import SlackSender, TeamsSender
from watchdog.run.audit import execute_audit
from watchdog.settings import load_settings

SLACK_BLOCKS = {"header", "section", "context", "actions", "divider"}
#: mrkdwn may hold '<' only as Slack's own syntax: a link <https://...|text>, a mention <@U..>, <!subteam^..>
SLACK_ANGLE = re.compile(r"<(https?://[^|>]+(\|[^>]*)?|@[UW][A-Z0-9]+|!subteam\^[A-Z0-9]+|#C[A-Z0-9]+)>")


def check_block_kit(body: dict[str, Any]) -> list[str]:
    """What Slack would refuse (or render wrongly) in a message, as it documents its limits."""
    problems = []
    if not isinstance(body.get("text"), str) or not body["text"]:
        problems.append("no fallback text")
    blocks = body.get("blocks") or []
    if len(blocks) > 50:
        problems.append(f"{len(blocks)} blocks (at most 50)")
    for block in blocks:
        problems.extend(_block_problems(block))
    return problems


def _block_problems(block: dict[str, Any]) -> list[str]:
    kind = block.get("type")
    if kind not in SLACK_BLOCKS:
        return [f"unknown block type {kind!r}"]
    if kind == "header" and (block["text"].get("type") != "plain_text" or len(block["text"]["text"]) > 150):
        return ["header must be plain_text of at most 150 characters"]
    if kind == "section":
        text = block["text"]["text"]
        if len(text) > 3000:
            return ["section text over 3,000 characters"]
        if SLACK_ANGLE.sub("", text).count("<"):
            return [f"unescaped '<' in mrkdwn: {text[:80]!r}"]
    if kind == "context" and len(block.get("elements") or []) > 10:
        return ["context with more than 10 elements"]
    if kind == "actions":
        for element in block["elements"]:
            if element.get("type") != "button" or len(element["text"]["text"]) > 75 or \
                    not element.get("url", "").startswith("http"):
                return ["a button needs plain text (at most 75) and an http(s) url"]
    return []


def check_teams_card(body: dict[str, Any]) -> list[str]:
    problems = []
    if body.get("type") != "message" or len(body.get("attachments") or []) != 1:
        return ["a Workflows message has type 'message' and exactly one attachment"]
    attachment = body["attachments"][0]
    if attachment.get("contentType") != "application/vnd.microsoft.card.adaptive":
        problems.append("the attachment is not an Adaptive Card")
    card = attachment.get("content") or {}
    if card.get("type") != "AdaptiveCard":
        problems.append("content.type must be AdaptiveCard")
    if tuple(int(x) for x in str(card.get("version", "9")).split(".")) > (1, 5):
        problems.append("card version above 1.5 (Teams renders up to 1.5)")
    def walk(elements: list[dict[str, Any]]) -> None:
        for element in elements:
            if element.get("type") not in ("TextBlock", "Container", "FactSet", "ColumnSet"):
                problems.append(f"unknown element {element.get('type')!r}")
            walk(element.get("items") or [])
    walk(card.get("body") or [])
    for action in card.get("actions") or []:
        if action.get("type") != "Action.OpenUrl" or not action.get("url", "").startswith("http"):
            problems.append("actions must be Action.OpenUrl with an http(s) url")
    if len(json.dumps(body).encode()) > 28_000:
        problems.append("payload over Teams' 28 KB")
    return problems


class Receiver:
    """An HTTP server on loopback that records each POST and answers as scripted."""

    def __init__(self, answers: list[tuple[int, dict[str, str]]] | None = None, delay_s: float = 0.0):
        self.requests: list[dict[str, Any]] = []
        self.answers = list(answers or [])
        self.delay_s = delay_s
        receiver = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:  # noqa: N802 - the stdlib's name
                length = int(self.headers.get("Content-Length") or 0)
                raw = self.rfile.read(length)
                receiver.requests.append({"path": self.path, "headers": dict(self.headers), "raw": raw,
                                          "at": time.monotonic()})
                time.sleep(receiver.delay_s)
                status, headers = receiver.answers.pop(0) if receiver.answers else (200, {})
                reply = b'{"ok": true}' if self.path.startswith("/api/") else b"ok"
                self.send_response(status)
                for name, value in headers.items():
                    self.send_header(name, value)
                self.send_header("Content-Length", str(len(reply)))
                self.end_headers()
                self.wfile.write(reply)

            def log_message(self, *args: Any) -> None:
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def bodies(self) -> list[dict[str, Any]]:
        out = []
        for r in self.requests:
            raw = r["raw"].decode()
            out.append(json.loads(raw) if raw.startswith("{") else {"form": raw})
        return out

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()


@pytest.fixture
def receiver():
    made: list[Receiver] = []

    def make(**kwargs: Any) -> Receiver:
        made.append(Receiver(**kwargs))
        return made[-1]

    yield make
    for r in made:
        r.close()


def scanned_package(tmp_path: Path, problems: int, *, hostile: bool = False) -> RunPackage:
    """A real scan's findings with ``problems`` failing not_null checks (and one passing check)."""
    from watchdog.run.scan_run import run_scan

    db = tmp_path / "t.db"
    columns = [f"c{i}" for i in range(max(problems, 1))]
    with sqlite3.connect(db) as conn:
        conn.execute(f"CREATE TABLE t (id INTEGER PRIMARY KEY, {', '.join(c + ' TEXT' for c in columns)})")
        conn.executemany(f"INSERT INTO t VALUES ({', '.join('?' * (len(columns) + 1))})",
                         [(i, *[None if i % 7 == 0 else "x" for _ in columns]) for i in range(1, 101)])
    checks = ["    - not_null: id"] + [f"    - not_null: {c}" for c in columns[:problems]]
    if hostile:
        checks.append("    - not_null: {column: c0, name: \"<!channel> & <https://evil.example|click> *x*\"}")
    (tmp_path / "s.yaml").write_text("tables:\n  t:\n" + "\n".join(checks) + "\n")
    out = tmp_path / "run"
    outcome = run_scan(f"sqlite:///{db}", [tmp_path / "s.yaml"], out_dir=out)
    return RunPackage(run_id="r-1", audit="shop", status="failed" if problems else "passed", run_dir=out,
                      summary=outcome.doc.summary.to_json_dict(), trends={"t.c0.not_null": "new"},
                      findings_json=outcome.doc.to_json())


@pytest.mark.parametrize("problems", [0, 1, 60])
def test_slack_and_teams_messages_keep_the_services_rules(tmp_path: Path, receiver, problems: int) -> None:
    package = scanned_package(tmp_path, problems)
    slack, teams = receiver(), receiver()
    SlackSender(webhook_url=f"{slack.url}/services/T0/B0/sekret", public_url="https://dq.example.com").send(
        package, "slack")
    TeamsSender(f"{teams.url}/workflows/abc?sig=sekret", public_url=None, max_checks=20, timeout_s=5).send(
        package, "teams")
    (s_body,), (t_body,) = slack.bodies(), teams.bodies()
    assert check_block_kit(s_body) == []
    assert check_teams_card(t_body) == []
    sections = [b for b in s_body["blocks"] if b["type"] == "section"]
    assert len(sections) == min(problems, 20)
    cards = t_body["attachments"][0]["content"]["body"]
    assert len([c for c in cards if c["type"] == "Container"]) == min(problems, 20)
    if problems > 20:
        assert any("and 40 more problem checks" in json.dumps(b) for b in s_body["blocks"])
        assert "and 40 more problem checks" in json.dumps(t_body)
    buttons = [e["url"] for b in s_body["blocks"] if b["type"] == "actions" for e in b["elements"]]
    assert buttons == ["https://dq.example.com/runs/r-1/report.html", "https://dq.example.com/shop.html"]
    assert "actions" not in t_body["attachments"][0]["content"]  # no public_url: no link that opens nothing
    if problems:
        assert "t.c0.not_null" in json.dumps(s_body) and "new" in sections[0]["text"]["text"]
        assert "14 of 100" in sections[0]["text"]["text"]


def test_data_cannot_become_links_or_mentions(tmp_path: Path, receiver) -> None:
    package = scanned_package(tmp_path, 1, hostile=True)
    slack, teams = receiver(), receiver()
    SlackSender(webhook_url=f"{slack.url}/services/T0/B0/x").send(package, "slack")
    TeamsSender(f"{teams.url}/w", public_url=None, max_checks=20, timeout_s=5).send(package, "teams")
    s_body, t_body = slack.bodies()[0], teams.bodies()[0]
    assert check_block_kit(s_body) == []
    text = json.dumps(s_body)
    assert "&lt;!channel&gt; &amp; &lt;https://evil.example|click&gt;" in text
    assert "<!channel>" not in text
    assert "\\\\[" not in json.dumps(t_body) and "<https://evil" not in json.dumps(t_body).replace("\\\\<", "")


def test_slack_waits_out_a_rate_limit_within_the_deadline(tmp_path: Path, receiver) -> None:
    package = scanned_package(tmp_path, 1)
    slack = receiver(answers=[(429, {"Retry-After": "1"})])
    SlackSender(webhook_url=f"{slack.url}/services/T0/B0/x", timeout_s=10).send(package, "slack")
    assert len(slack.requests) == 2
    assert slack.requests[1]["at"] - slack.requests[0]["at"] >= 1.0
    late = receiver(answers=[(429, {"Retry-After": "30"})])
    clock = time.monotonic()
    with pytest.raises(DeliveryError, match="HTTP 429"):
        SlackSender(webhook_url=f"{late.url}/services/T0/B0/x", timeout_s=5).send(package, "slack")
    assert time.monotonic() - clock < 5 and len(late.requests) == 1  # 30 s would pass the 5 s deadline


def test_server_errors_are_retried_once_and_a_slow_receiver_passes_the_deadline(tmp_path: Path, receiver) -> None:
    package = scanned_package(tmp_path, 1)
    flaky = receiver(answers=[(503, {})])
    SlackSender(webhook_url=f"{flaky.url}/services/T0/B0/x").send(package, "slack")
    assert len(flaky.requests) == 2
    teams = receiver(answers=[(502, {})])
    TeamsSender(f"{teams.url}/w", public_url=None, max_checks=20, timeout_s=5).send(package, "teams")
    assert len(teams.requests) == 2
    slow = receiver(delay_s=3)
    with pytest.raises(DeliveryError, match="timed out"):
        TeamsSender(f"{slow.url}/w", public_url=None, max_checks=20, timeout_s=1).send(package, "teams")


def test_the_web_api_posts_with_the_token(tmp_path: Path, receiver) -> None:
    package = scanned_package(tmp_path, 1)
    api = receiver()
    sender = SlackSender(token="xoxb-secret-token", channel="#dq")
    sender.api_url = f"{api.url}/api/"
    sender.send(package, sender.targets()[0])
    (request,) = api.requests
    assert request["path"] == "/api/chat.postMessage"
    assert request["headers"]["Authorization"] == "Bearer xoxb-secret-token"
    assert "#dq" in request["raw"].decode() or "%23dq" in request["raw"].decode()
    assert sender.targets()[0].startswith("slack:") and "xoxb" not in sender.targets()[0]


def test_an_audit_delivers_once_and_the_urls_stay_secret(tmp_path: Path, receiver, caplog) -> None:
    slack, teams = receiver(), receiver()
    root = tmp_path / "p"
    (root / "config").mkdir(parents=True)
    (root / "checks").mkdir()
    (root / "data").mkdir()
    with sqlite3.connect(root / "data" / "shop.db") as conn:
        conn.execute("CREATE TABLE items (id INTEGER, sku TEXT)")
        conn.executemany("INSERT INTO items VALUES (?, ?)", [(1, None), (2, "a")])
    (root / "checks" / "shop.yaml").write_text("tables:\n  items:\n    - not_null: sku\n")
    slack_url = f"{slack.url}/services/T0/B0/hook-secret-1"
    teams_url = f"{teams.url}/workflows/run?sig=hook-secret-2"
    (root / "config" / "watchdog.yaml").write_text(f"""\
base_dir: ..
state_dir: state
public_url: https://dq.example.com
databases:
  shop: {{url: "sqlite:///data/shop.db"}}
audits:
  shop:
    database: shop
    checks: [checks/shop.yaml]
    deliver:
      - file: {{dir: reports}}
      - slack: {{webhook_url: "{slack_url}"}}
      - teams: {{webhook_url: "{teams_url}"}}
""")
    settings = load_settings(root / "config" / "watchdog.yaml")
    run = execute_audit(settings, "shop")
    assert len(slack.requests) == 1 and len(teams.requests) == 1
    assert check_block_kit(slack.bodies()[0]) == [] and check_teams_card(teams.bodies()[0]) == []
    records = {d["channel"]: d for d in run.deliveries}
    assert records["slack"]["status"] == "sent" and records["teams"]["status"] == "sent"
    on_disk = "".join(p.read_text(errors="replace") for p in run.run_dir.rglob("*") if p.is_file())
    for secret in ("hook-secret-1", "hook-secret-2"):
        assert secret not in json.dumps(run.deliveries) and secret not in on_disk and secret not in caplog.text
    from watchdog.delivery.outbox import deliver_package
    from watchdog.history import HistoryStore

    store = HistoryStore(settings.history_url())
    try:  # the same run delivered again (a retry, a second instance): nothing is sent twice
        again = deliver_package(RunPackage.load(run.run_dir), settings.audit("shop").deliver, settings, store)
    finally:
        store.close()
    assert len(slack.requests) == 1 and len(teams.requests) == 1
    assert {r.status for r in again} <= {"sent", "skipped"}
