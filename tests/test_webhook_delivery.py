"""The webhook channel against a real HTTP server on 127.0.0.1."""

from __future__ import annotations

import base64
import json
import sqlite3
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest

from watchdog.delivery.base import DeliveryError, RunPackage
from watchdog.delivery.webhook import WebhookSender
from watchdog.redact import redact_url
from watchdog.run.scan_run import run_scan
from watchdog.testing.smtp_sink import unused_port

RUN_ID = "20250102T030405Z-abc123"
TRENDS = {"orders.status.accepted_values": "new", "orders.row_count": "unchanged"}


class Receiver:
    """A real HTTP server that records each POST and answers with the next scripted status."""

    def __init__(self, statuses: list[int] | None = None, location: str | None = None, echo_auth: bool = False):
        self.requests: list[dict] = []
        self.statuses = list(statuses or [])
        receiver = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:  # noqa: N802
                body = self.rfile.read(int(self.headers.get("Content-Length") or 0))
                receiver.requests.append({"path": self.path, "headers": dict(self.headers), "body": body})
                status = receiver.statuses.pop(0) if receiver.statuses else 204
                reply = b'{"error": "boom <b>token=abc</b>"}' if status >= 400 else b""
                if echo_auth:
                    reply = f"bad credentials: {self.headers.get('Authorization')}".encode()
                self.send_response(status)
                if location:
                    self.send_header("Location", location)
                self.send_header("Content-Length", str(len(reply)))
                self.end_headers()
                self.wfile.write(reply)

            def log_message(self, *args) -> None:
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"
        self.thread = threading.Thread(target=self.server.serve_forever, args=(0.02,), daemon=True)

    def __enter__(self) -> Receiver:
        self.thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.server.shutdown()
        self.server.server_close()


@pytest.fixture
def package(tmp_path: Path) -> RunPackage:
    db = tmp_path / "shop.db"
    with sqlite3.connect(db) as conn:
        conn.execute("CREATE TABLE orders (id INTEGER, status TEXT)")
        conn.executemany("INSERT INTO orders VALUES (?, ?)", [(1, "paid"), (2, "lost"), (3, "paid")])
    suite = tmp_path / "shop.yaml"
    suite.write_text("tables:\n  orders:\n    - accepted_values: {column: status, values: [paid]}\n"
                     "    - row_count: {min: 1}\n")
    run_dir = tmp_path / "run"
    doc = run_scan(f"sqlite:///{db}", [suite], out_dir=run_dir, run_id=RUN_ID).doc
    (run_dir / "audit.json").write_text(json.dumps({"run_id": RUN_ID, "audit": "shop", "status": "failed",
                                                    "summary": doc.summary.to_json_dict(), "trends": TRENDS}))
    return RunPackage.load(run_dir)


@pytest.fixture
def receiver() -> Iterator[Receiver]:
    with Receiver() as r:
        yield r


def test_posts_the_run_summary_as_json_with_an_idempotency_key(package, receiver):
    channel = WebhookSender(receiver.url + "/hooks/dq?token=abc", headers={"X-Team": "data"}, timeout_s=5)
    assert channel.kind == "webhook" and channel.targets() == [receiver.url + "/hooks/dq?***"]
    channel.send(package, channel.targets()[0])
    [request] = receiver.requests
    assert request["path"] == "/hooks/dq?token=abc"
    headers = {k.lower(): v for k, v in request["headers"].items()}
    assert headers["content-type"].startswith("application/json")
    assert headers["idempotency-key"] == RUN_ID
    assert headers["x-team"] == "data"
    body = json.loads(request["body"])
    checks = body.pop("checks")
    assert body == {
        "run_id": RUN_ID, "audit": "shop", "status": "failed",
        "summary": {"checks": 2, "passed": 1, "warned": 0, "failed": 1, "errors": 0},
        "trends": TRENDS, "subject": "[watchdog] shop: 1 failed, 0 warned (1 new)",
        "report_path": str(package.run_dir / "report.md"), "resolved": []}
    assert [(c["name"], c["status"], c["change"], c["failing"], c["owners"], c["tags"]) for c in checks] == [
        ("orders.status.accepted_values", "fail", "new", 1, [], [])]


def test_a_retry_carries_the_same_idempotency_key(package, receiver):
    channel = WebhookSender(receiver.url)
    channel.send(package, receiver.url)
    channel.send(package, receiver.url)
    keys = [{k.lower(): v for k, v in r["headers"].items()}["idempotency-key"] for r in receiver.requests]
    assert keys == [RUN_ID, RUN_ID]


def test_http_500_is_a_delivery_error_with_a_masked_url(package):
    with Receiver(statuses=[500]) as r:
        url = r.url.replace("http://", "http://bot:hunter22@") + "/hook?token=s3cr3t-token"
        with pytest.raises(DeliveryError) as info:
            WebhookSender(url).send(package, url)
    message = str(info.value)
    assert message.startswith(f"webhook http://***@127.0.0.1:{r.url.rsplit(':', 1)[1]}/hook?*** answered HTTP 500")
    assert "boom" in message                         # an excerpt of the answer helps
    assert "s3cr3t-token" not in message and "hunter22" not in message


def test_a_redirect_is_not_followed(package):
    with Receiver(statuses=[302], location="/elsewhere") as r, pytest.raises(DeliveryError, match="answered HTTP 302"):
        WebhookSender(r.url).send(package, r.url)
    assert len(r.requests) == 1                      # not re-sent as a GET without the body


def test_connection_refused_is_a_delivery_error(package):
    url = f"http://127.0.0.1:{unused_port()}/hook?key=abcdef"
    with pytest.raises(DeliveryError) as info:
        WebhookSender(url, timeout_s=2).send(package, url)
    assert str(info.value) == (f"cannot POST to webhook {url.split('?')[0]}?***: "
                               "connection refused (is the receiver running?)")


def test_secret_header_values_never_appear_in_errors(package):
    token = "Bearer tok-998877665544"
    with Receiver(statuses=[401], echo_auth=True) as r, pytest.raises(DeliveryError) as info:   # echoes the header
        WebhookSender(r.url, headers={"Authorization": token}).send(package, r.url)
    assert r.requests[0]["headers"]["Authorization"] == token
    assert "answered HTTP 401" in str(info.value) and "tok-998877665544" not in str(info.value)


def test_user_info_in_the_url_is_sent_as_basic_auth(package, receiver):
    url = receiver.url.replace("http://", "http://bot:hunter%4022@") + "/hook"
    WebhookSender(url).send(package, url)
    auth = receiver.requests[0]["headers"]["Authorization"]
    assert auth == "Basic " + base64.b64encode(b"bot:hunter@22").decode()


def test_redact_url_masks_credentials_queries_and_token_paths():
    assert redact_url("https://u:p@hooks.example.com/services/T0001/B0001/a1b2c3d4e5f6g7h8i9?x=1#f") == \
        "https://***@hooks.example.com/services/T0001/B0001/***?***"
    assert redact_url("http://127.0.0.1:8080/hook") == "http://127.0.0.1:8080/hook"
