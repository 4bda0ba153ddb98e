"""The e-mail channel against a real SMTP server (aiosmtpd) on 127.0.0.1: plain, STARTTLS and SMTPS."""

from __future__ import annotations

import base64
import hashlib
import json
import sqlite3
from pathlib import Path

import pytest

from watchdog.delivery.base import DeliveryError, RunPackage
from watchdog.delivery.email import EmailSender, message_id
from watchdog.redact import redact_url, register_secret
from watchdog.run.scan_run import run_scan
from watchdog.settings import SmtpConfig
from watchdog.testing.smtp_sink import SmtpSink, self_signed_cert, tls_contexts, unused_port

SMTP_PASSWORD = "smtp-Pa55word-7Qx"
DB_PASSWORD = "db-S3cret-91zz"
LEAKED = "leaked-T0ken-4431"          # a registered secret that slipped into a DB error message
HOSTILE_TABLE = "<script>alert('x')</script>{{ config }}"
SUBJECT = "[watchdog] crm: 2 failed, 1 warned, 1 errors (3 new, 1 worse)"
TRENDS = {"customers.email.not_null": "new", "customers.id.unique": "worse",
          "customers.country.accepted_values": "new", "customers.row_count": "unchanged", "broken": "new"}


def make_package(tmp_path: Path, *, trends: dict[str, str] | None = None) -> RunPackage:
    """A real scan of a small SQLite database, filed like a run (findings.json, report.md, audit.json)."""
    db = tmp_path / "crm.db"
    with sqlite3.connect(db) as conn:
        conn.execute("CREATE TABLE customers (id INTEGER, email TEXT, country TEXT)")
        conn.executemany("INSERT INTO customers VALUES (?, ?, ?)", [
            (1, "a@example.com", "FR"), (2, None, "DE"), (3, "c@example.com", "<script>alert(1)</script>"),
            (3, "d@example.com", "US")])
    suite = tmp_path / "crm.yaml"
    suite.write_text(
        "tables:\n  customers:\n    - not_null: email\n    - unique: id\n      severity: warn\n"
        "    - accepted_values: {column: country, values: [FR, DE, US]}\n    - row_count: {min: 1}\n"
        "custom_sql:\n  - name: broken\n    sql: " + json.dumps(f'SELECT count(*) FROM "{HOSTILE_TABLE}"') + "\n")
    run_dir = tmp_path / "run"
    outcome = run_scan(f"sqlite:///{db}", [suite], out_dir=run_dir, run_id="20250102T030405Z-abc123")
    doc = outcome.doc
    meta = {"run_id": doc.run_id, "audit": "crm", "status": "failed", "summary": doc.summary.to_json_dict(),
            "trends": TRENDS if trends is None else trends}
    (run_dir / "audit.json").write_text(json.dumps(meta), encoding="utf-8")
    return RunPackage.load(run_dir)


@pytest.fixture
def package(tmp_path: Path) -> RunPackage:
    return make_package(tmp_path)


@pytest.fixture(scope="session")
def tls(tmp_path_factory: pytest.TempPathFactory):
    cert, key = self_signed_cert(tmp_path_factory.mktemp("tls"))
    return tls_contexts(cert, key)  # (server context, client context trusting that certificate)


def config(sink: SmtpSink, **kw) -> SmtpConfig:
    return SmtpConfig(host=sink.host, port=sink.port, sender="watchdog@dq.example", timeout_s=5, **kw)


def decoded(msg) -> str:
    """Every part of a message, decoded, joined (headers included)."""
    out = [str(msg)]
    for part in msg.walk():
        if not part.is_multipart():
            payload = part.get_payload(decode=True) or b""
            out.append(payload.decode("utf-8", "replace"))
    return "\n".join(out)


def body(msg, kind: str) -> str:
    """A text part as a string with the CRLFs of the SMTP transfer made newlines."""
    return msg.get_body((kind,)).get_content().replace("\r\n", "\n")


def test_one_message_per_recipient_with_exact_headers(package):
    with SmtpSink() as sink:
        channel = EmailSender(config(sink), ["ops@example.com", "data@example.com"])
        assert channel.kind == "email" and channel.targets() == ["ops@example.com", "data@example.com"]
        for target in channel.targets():
            channel.send(package, target)
    assert [r.rcpt_tos for r in sink.received] == [["ops@example.com"], ["data@example.com"]]
    assert all(r.mail_from == "watchdog@dq.example" for r in sink.received)
    for target, msg in zip(channel.targets(), sink.messages, strict=True):
        assert package.subject == SUBJECT
        assert msg["Subject"] == SUBJECT
        assert msg["From"] == "watchdog@dq.example"
        assert msg["To"] == target
        digest = hashlib.sha1(target.encode()).hexdigest()[:12]
        assert msg["Message-ID"] == f"<20250102T030405Z-abc123.{digest}@watchdog>"
        assert msg["X-Watchdog-Run"] == "20250102T030405Z-abc123"
        assert msg["Auto-Submitted"] == "auto-generated"


def test_message_id_is_stable_across_resends_and_distinct_per_recipient(package):
    with SmtpSink() as sink:
        channel = EmailSender(config(sink), ["ops@example.com"])
        channel.send(package, "ops@example.com")
        channel.send(package, "ops@example.com")   # a retry of the same delivery
        channel.send(package, "data@example.com")
    ids = [m["Message-ID"] for m in sink.messages]
    assert ids[0] == ids[1] == message_id(package.run_id, "ops@example.com") != ids[2]


def test_text_and_html_parts_list_the_problems_with_figures_and_trends(package):
    with SmtpSink() as sink:
        EmailSender(config(sink), ["ops@example.com"]).send(package, "ops@example.com")
    msg = sink.messages[0]
    assert msg.get_content_type() == "multipart/mixed"
    text = body(msg, "plain")
    html = body(msg, "html")
    assert text.startswith(SUBJECT + "\n")
    assert "Result:   FAILED: 2 failed, 1 warned, 1 passed, 1 errors (5 checks)" in text
    assert "Changes since the previous run: 3 new, 1 worse" in text
    assert "  FAIL   customers.email.not_null: 1 of 4 failing (25.00%) [new]" in text
    assert "  FAIL   customers.country.accepted_values: 1 of 4 failing (25.00%) [new]" in text
    assert "  WARN   customers.id.unique: 2 of 4 failing (50.00%) [worse]" in text
    assert "  ERROR  broken: could not run: " in text
    assert "customers.row_count" not in text          # passing, unchanged: not listed
    # without public_url: the server path, labelled as such, in the text part only (no link that opens nothing)
    assert f"Report (server path):   {package.run_dir / 'report.md'}" in text
    assert f"Findings (server path): {package.findings_path} (attached)" in text
    for needle in ("customers.email.not_null", "customers.id.unique", "1 of 4 failing (25.00%)",
                   "2 of 4 failing (50.00%)", "worse", "<table"):
        assert needle in html
    assert str(package.run_dir) not in html and "<a " not in html and "http" not in text


def test_resolved_checks_and_no_change_are_reported(tmp_path):
    package = make_package(tmp_path, trends={**TRENDS, "customers.row_count": "resolved"})
    text = body(EmailSender(SmtpConfig(), ["a@example.com"]).build_message(package, "a@example.com"), "plain")
    assert "Resolved since the previous run:\n  PASS   customers.row_count" in text
    assert package.subject.endswith("(3 new, 1 resolved, 1 worse)")


def test_findings_json_is_attached_as_filed(package):
    with SmtpSink() as sink:
        EmailSender(config(sink), ["ops@example.com"]).send(package, "ops@example.com")
    attachments = list(sink.messages[0].iter_attachments())
    assert len(attachments) == 1
    part = attachments[0]
    assert part.get_content_type() == "application/json" and part.get_filename() == "findings.json"
    assert json.loads(part.get_payload(decode=True)) == json.loads(package.findings_path.read_text())


def test_without_attachment_the_message_is_just_the_two_alternatives(package):
    with SmtpSink() as sink:
        EmailSender(config(sink), ["ops@example.com"], attach_findings=False).send(package, "ops@example.com")
    msg = sink.messages[0]
    assert msg.get_content_type() == "multipart/alternative"
    assert [p.get_content_type() for p in msg.iter_parts()] == ["text/plain", "text/html"]
    assert "(attached)" not in body(msg, "plain")


def test_login_over_starttls(package, tls):
    server_ctx, client_ctx = tls
    with SmtpSink(tls_context=server_ctx, users={"watchdog": SMTP_PASSWORD}) as sink:
        channel = EmailSender(config(sink, security="starttls", username="watchdog", password=SMTP_PASSWORD),
                               ["ops@example.com"], ssl_context=client_ctx)
        channel.send(package, "ops@example.com")
    [received] = sink.received
    assert received.tls and received.login == "watchdog"
    assert sink.auth_attempts == [("watchdog", True)]
    assert received.message["Subject"] == SUBJECT


def test_login_over_implicit_tls(package, tls):
    server_ctx, client_ctx = tls
    with SmtpSink(ssl_context=server_ctx, users={"watchdog": SMTP_PASSWORD}) as sink:
        channel = EmailSender(config(sink, security="ssl", username="watchdog", password=SMTP_PASSWORD),
                               ["ops@example.com"], ssl_context=client_ctx)
        channel.send(package, "ops@example.com")
    [received] = sink.received
    assert received.tls and received.login == "watchdog"


def test_the_server_certificate_is_verified_by_default(package, tls):
    server_ctx, _ = tls
    with SmtpSink(tls_context=server_ctx) as sink:
        channel = EmailSender(config(sink, security="starttls"), ["ops@example.com"])  # system CAs only
        with pytest.raises(DeliveryError, match="TLS certificate verification failed"):
            channel.send(package, "ops@example.com")
    assert sink.received == []


def test_wrong_password_is_a_clear_error_without_the_password(package, tls):
    server_ctx, client_ctx = tls
    with SmtpSink(ssl_context=server_ctx, users={"watchdog": "the-right-one"}) as sink:
        channel = EmailSender(config(sink, security="ssl", username="watchdog", password=SMTP_PASSWORD),
                               ["ops@example.com"], ssl_context=client_ctx)
        with pytest.raises(DeliveryError) as info:
            channel.send(package, "ops@example.com")
    message = str(info.value)
    assert "authentication failed (535" in message and f"127.0.0.1:{sink.port}" in message
    assert SMTP_PASSWORD not in message
    assert base64.b64encode(f"\0watchdog\0{SMTP_PASSWORD}".encode()).decode() not in message


def test_smtp_down_is_a_delivery_error_naming_the_server(package):
    port = unused_port()
    smtp = SmtpConfig(host="127.0.0.1", port=port, username="watchdog", password=SMTP_PASSWORD, timeout_s=2)
    with pytest.raises(DeliveryError) as info:
        EmailSender(smtp, ["ops@example.com"]).send(package, "ops@example.com")
    message = str(info.value)
    assert message == (f"cannot send the e-mail to ops@example.com through 127.0.0.1:{port} (security: none): "
                       "connection refused (is the SMTP server running?)")
    assert SMTP_PASSWORD not in message and info.value.__suppress_context__


def test_temporary_failure_then_success(package):
    with SmtpSink(fail="451 4.3.0 try again later", fail_times=1) as sink:
        channel = EmailSender(config(sink), ["ops@example.com"])
        with pytest.raises(DeliveryError, match=r"the server answered 451 4\.3\.0 try again later"):
            channel.send(package, "ops@example.com")
        channel.send(package, "ops@example.com")   # the retry goes through
    assert sink.failed_attempts == 1 and len(sink.received) == 1


def test_no_secret_anywhere_in_the_message(package):
    # what the scanner files for a PostgreSQL URL with a password, and a secret leaked into an error
    register_secret(DB_PASSWORD)
    register_secret(LEAKED)
    findings = package.findings()
    findings["database"] = redact_url(f"postgresql+psycopg://app:{DB_PASSWORD}@db.example/crm")
    findings["findings"][-1]["error"] = f"driver said: token {LEAKED} rejected"
    package.findings_path.write_text(json.dumps(findings), encoding="utf-8")
    with SmtpSink(users={"watchdog": SMTP_PASSWORD}) as sink:   # AUTH over a plain connection
        EmailSender(config(sink, username="watchdog", password=SMTP_PASSWORD), ["ops@example.com"]) \
            .send(package, "ops@example.com")
    [received] = sink.received
    assert received.login == "watchdog"
    everything = received.raw.decode("utf-8", "replace") + decoded(received.message)
    assert "postgresql+psycopg://app:***@db.example/crm" in everything
    assert "driver said: token *** rejected" in everything
    for secret in (SMTP_PASSWORD, DB_PASSWORD, LEAKED):
        assert secret not in everything
        assert base64.b64encode(secret.encode()).decode()[:12] not in everything


def test_hostile_database_text_is_escaped_in_the_html_part(package):
    with SmtpSink() as sink:
        EmailSender(config(sink), ["ops@example.com"]).send(package, "ops@example.com")
    html = body(sink.messages[0], "html")
    assert "no such table" in html                         # the DB error is shown...
    assert "<script" not in html and "&lt;script&gt;alert(&#39;x&#39;)&lt;/script&gt;" in html   # ...inert
    assert "{{ config }}" not in html and "&#123;&#123; config &#125;&#125;" in html
    text = body(sink.messages[0], "plain")
    assert "\x1b" not in text and HOSTILE_TABLE in text       # plain text: shown as it is, one line
