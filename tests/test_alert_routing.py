"""Routing for e-mail and webhooks as for chat: the matrix tags x owners x severity x on against a real SMTP
server and a real HTTP receiver on loopback, the owners' addresses added as recipients, ``group_by: owner``
on every channel, and links under ``public_url`` that a running ``serve --ui`` answers."""

from __future__ import annotations

import itertools
import json
import re
import urllib.request
from pathlib import Path

from tests.test_chat_delivery import Receiver
from tests.test_chat_routing import make_project
from watchdog.run.audit import execute_audit
from watchdog.settings import load_settings
from watchdog.testing.smtp_sink import SmtpSink, unused_port

#: the problem checks of tests.test_chat_routing.SUITE: status, owners, tags (written out, not computed)
PROBLEMS = {
    "orders.amount.not_null": ("fail", {"@alice"}, {"shop", "finance"}),
    "orders.status.not_null": ("warn", {"@alice"}, {"shop", "finance"}),
    "customers.email.not_null": ("fail", {"@data-platform"}, {"shop"}),
    "customers.phone.not_null": ("fail", {"@bob"}, {"shop", "pii"}),
}
TAGS = (None, ["finance"], ["pii", "finance"], ["marketing"])
OWNERS = (None, ["@alice"], ["@bob", "@data-platform"])
SEVERITY = (None, "fail")
ON = ("problems", "always", "changes", "new")
MATRIX = list(itertools.product(TAGS, OWNERS, SEVERITY, ON))


def expected(tags, owners, severity, on, run: int) -> list[str] | None:
    """The checks a destination lists on run 1 or 2 of the same data (None: nothing sent)."""
    chosen = sorted(name for name, (status, who, labels) in PROBLEMS.items()
                    if (tags is None or set(tags) & labels) and (owners is None or set(owners) & who)
                    and (severity is None or status == "fail"))
    if on == "new" and run == 2:
        chosen = []                         # nothing became a problem since run 1
    if on == "always":
        return chosen
    if on == "changes" and run == 2:
        return None                         # the same findings as the run delivered last
    return chosen or None


def options(tags, owners, severity, on) -> str:
    parts = [f"on: {on}"]
    if tags:
        parts.append(f"tags: {json.dumps(tags)}")
    if owners:
        parts.append(f"owners: {json.dumps(owners)}")
    if severity:
        parts.append(f"severity: {severity}")
    return ", ".join(parts)


def with_smtp(config: Path, sink: SmtpSink, extra: str = "") -> Path:
    config.write_text(f"smtp: {{host: {sink.host}, port: {sink.port}, sender: dq@example.com, timeout_s: 5}}\n"
                      f"{extra}" + config.read_text())
    return config


def listed_in_text(msg) -> list[str]:
    text = msg.get_body(("plain",)).get_content()
    return sorted(m.group(1) for m in re.finditer(r"^  (?:FAIL|WARN|ERROR)\s+(\S+):", text, re.MULTILINE))


def test_the_routing_matrix_for_email_and_webhook(tmp_path: Path) -> None:
    hook = Receiver()
    try:
        with SmtpSink() as sink:
            lines = []
            for i, (tags, owners, severity, on) in enumerate(MATRIX):
                lines.append(f"      - email: {{to: [d{i}@example.com], mail_owners: false, "
                             f"{options(tags, owners, severity, on)}}}")
                lines.append(f'      - webhook: {{url: "{hook.url}/d{i}", {options(tags, owners, severity, on)}}}')
            settings = load_settings(with_smtp(make_project(tmp_path, "\n".join(lines) + "\n"), sink))
            for run_number in (1, 2):
                sent_before, posted_before = len(sink.messages), len(hook.requests)
                run = execute_audit(settings, "shop")
                mails = {m["To"]: m for m in sink.messages[sent_before:]}
                posts = {r["path"]: json.loads(r["raw"]) for r in hook.requests[posted_before:]}
                records = {(d["channel"], d["target"]): d for d in run.deliveries}
                assert len(records) == 2 * len(MATRIX)
                for i, combo in enumerate(MATRIX):
                    want = expected(*combo, run=run_number)
                    mail, post = mails.get(f"d{i}@example.com"), posts.get(f"/d{i}")
                    record = records[("email", f"d{i}@example.com")]
                    where = f"run {run_number}, destination {combo}"
                    if want is None:
                        assert mail is None and post is None, where
                        assert record["status"] == "skipped", where
                        reason = record["last_error"] or ""
                        assert "matched no problem check" in reason or "no change since" in reason, where
                    else:
                        assert record["status"] == "sent", where
                        assert listed_in_text(mail) == want, where
                        assert sorted(c["name"] for c in post["checks"]) == want, where
                        for check in post["checks"]:
                            status, who, labels = PROBLEMS[check["name"]]
                            assert (check["status"], set(check["owners"]), set(check["tags"])) == (
                                status, who, labels)
            assert len(sink.messages) == len(hook.requests)   # one message per destination per run, each way
    finally:
        hook.close()


def test_email_adds_the_owners_of_the_listed_checks_as_recipients(tmp_path: Path) -> None:
    with SmtpSink() as sink:
        deliver = ("      - email: {to: [team@example.com]}\n"
                   "      - email: {to: [fin@example.com], tags: [finance]}\n"
                   "      - email: {to: [quiet@example.com], mail_owners: false}\n")
        config = with_smtp(make_project(tmp_path, deliver), sink)
        config.write_text(config.read_text().replace(
            '"@data-platform": {slack: "<!subteam^S0123>", teams: "Data Platform"}',
            '"@data-platform": {slack: "<!subteam^S0123>", teams: "Data Platform", email: DP@example.com}'))
        run = execute_audit(load_settings(config), "shop")
    got = sorted((m["To"], tuple(listed_in_text(m))) for m in sink.messages)
    every = tuple(sorted(PROBLEMS))
    finance = ("orders.amount.not_null", "orders.status.not_null")
    # @alice and @data-platform have an e-mail address, @bob has none: he is not mailed
    assert got == sorted([("team@example.com", every), ("alice@example.com", every), ("DP@example.com", every),
                          ("fin@example.com", finance), ("alice@example.com", finance),
                          ("quiet@example.com", every)])
    assert [r.rcpt_tos for r in sink.received if r.message["To"] == "DP@example.com"] == [["DP@example.com"]]
    assert all(d["status"] == "sent" for d in run.deliveries) and len(run.deliveries) == 6
    # alice hears from both destinations: the second message is a delivery of its own
    assert sorted(d["target"] for d in run.deliveries if d["target"].startswith("alice")) == [
        "alice@example.com", "alice@example.com · deliver 2"]


GROUPED = """\
tables:
  orders:
    owners: ["@alice"]
    checks:
      - not_null: amount
  customers:
    checks:
      - not_null: email
      - not_null: {column: phone, owners: ["@bob", "@alice"]}
      - not_null: id
"""


def test_group_by_owner_sends_one_message_per_owner_on_every_channel(tmp_path: Path) -> None:
    slack, hook = Receiver(), Receiver()
    try:
        with SmtpSink() as sink:
            deliver = (f"      - email: {{to: [team@example.com], group_by: owner}}\n"
                       f'      - webhook: {{url: "{hook.url}/g", group_by: owner}}\n'
                       f'      - slack: {{webhook_url: "{slack.url}/s", group_by: owner}}\n')
            config = with_smtp(make_project(tmp_path, deliver), sink)
            (tmp_path / "checks" / "shop.yaml").write_text(GROUPED)
            config.write_text(config.read_text().replace(
                '"@alice": {slack', '"@bob": {slack: "<@U0789>", email: bob@example.com}\n  "@alice": {slack'))
            run = execute_audit(load_settings(config), "shop")
        groups = {"@alice": ["customers.phone.not_null", "orders.amount.not_null"],
                  "@bob": ["customers.phone.not_null"], "unowned": ["customers.email.not_null"]}
        mails = sorted((m["To"], m["Subject"].rpartition(" · owner ")[2], tuple(listed_in_text(m)))
                       for m in sink.messages)
        assert mails == sorted([("team@example.com", "@alice", tuple(groups["@alice"])),
                                ("alice@example.com", "@alice", tuple(groups["@alice"])),
                                ("team@example.com", "@bob", tuple(groups["@bob"])),
                                ("bob@example.com", "@bob", tuple(groups["@bob"])),
                                ("team@example.com", "unowned", tuple(groups["unowned"]))])
        posts = {b["owner"]: sorted(c["name"] for c in b["checks"]) for b in hook.bodies()}
        assert posts == groups
        keys = sorted(r["headers"]["Idempotency-Key"] for r in hook.requests)
        assert keys == sorted(f"{run.run_id}:{g}" for g in groups)
        by_owner = {}
        for body in slack.bodies():
            header = body["blocks"][0]["text"]["text"]
            by_owner[header.rpartition("owner ")[2]] = json.dumps(body)
        assert sorted(by_owner) == ["@alice", "@bob", "unowned"]
        assert "<@U0456>" in by_owner["@alice"] and "<@U0789>" not in by_owner["@alice"]   # only that owner
        assert "<@U0789>" in by_owner["@bob"] and "<@U0456>" not in by_owner["@bob"]
        assert "<@U0" not in by_owner["unowned"]
        targets = sorted(d["target"] for d in run.deliveries if d["channel"] == "email")
        assert "team@example.com · owner @alice" in targets and len(run.deliveries) == 5 + 3 + 3
    finally:
        slack.close()
        hook.close()


def test_links_under_public_url_open_pages_of_a_running_serve_ui(tmp_path: Path) -> None:
    from watchdog.daemon.ui import start_ui

    port = unused_port()
    slack, hook = Receiver(), Receiver()
    try:
        with SmtpSink() as sink:
            deliver = (f"      - email: {{to: [team@example.com]}}\n"
                       f'      - webhook: {{url: "{hook.url}/w"}}\n'
                       f'      - slack: {{webhook_url: "{slack.url}/s"}}\n')
            config = with_smtp(make_project(tmp_path, deliver), sink, f"public_url: http://127.0.0.1:{port}/\n")
            settings = load_settings(config)
            run = execute_audit(settings, "shop")
        ui = start_ui(settings, f"127.0.0.1:{port}")
        try:
            msg = sink.messages[0]
            text = msg.get_body(("plain",)).get_content()
            html = msg.get_body(("html",)).get_content()
            in_text = re.findall(r"http://127\.0\.0\.1:\d+/\S+", text)
            in_html = re.findall(r'href="([^"]+)"', html)
            assert in_text == in_html == [f"http://127.0.0.1:{port}/runs/{run.run_id}/report.html",
                                          f"http://127.0.0.1:{port}/shop.html"]
            assert "server path" not in text and str(run.run_dir) not in text + html
            links = hook.bodies()[0]["links"]
            buttons = [e["url"] for b in slack.bodies()[0]["blocks"] if b["type"] == "actions"
                       for e in b["elements"]]
            assert [links["report"], links["audit"]] == buttons == in_text
            for url in in_text:
                with urllib.request.urlopen(url, timeout=10) as answer:  # noqa: S310 - loopback
                    page = answer.read().decode()
                    assert answer.status == 200 and answer.headers["Content-Type"].startswith("text/html")
                assert "orders.amount.not_null" in page
        finally:
            ui.stop()
    finally:
        slack.close()
        hook.close()


def test_a_selection_on_email_is_checked_with_the_line(tmp_path: Path) -> None:
    from watchdog.errors import ConfigError

    config = make_project(tmp_path, "      - email: {to: [a@example.com], remind_after: soon, group_by: team}\n")
    try:
        load_settings(config)
    except ConfigError as exc:
        message = str(exc)
    else:
        raise AssertionError("accepted")
    assert "audits.shop.deliver[0].email.remind_after" in message and "not an interval like 30s" in message
    assert "audits.shop.deliver[0].email.group_by" in message and "'owner'" in message
    assert re.search(r"watchdog\.yaml:1\d: ", message)


def test_a_routed_message_retried_from_the_outbox_is_the_same_message(tmp_path: Path) -> None:
    from watchdog.delivery.outbox import flush_outbox
    from watchdog.history import HistoryStore
    from watchdog.history.alerts import announced

    with SmtpSink(fail="451 4.3.0 try again later") as sink:
        deliver = "      - email: {to: [team@example.com], group_by: owner, remind_after: 24h, mail_owners: false}\n"
        settings = load_settings(with_smtp(make_project(tmp_path, deliver), sink))
        run = execute_audit(settings, "shop")
        assert sorted((d["target"], d["status"]) for d in run.deliveries) == [
            (f"team@example.com · owner {o}", "pending") for o in ("@alice", "@bob", "@data-platform")]
        store = HistoryStore(settings.history_url())
        try:
            assert announced(store, "shop", "email:team@example.com · owner @bob") == {}   # nothing sent yet
            sink.fail = None
            retried = flush_outbox(settings, store)
            assert sorted(r.status for r in retried) == ["sent"] * 3
            assert flush_outbox(settings, store) == []                                    # once
            by_owner = {m["Subject"].rpartition(" · owner ")[2]: listed_in_text(m) for m in sink.messages}
            assert by_owner == {"@alice": ["orders.amount.not_null", "orders.status.not_null"],
                                "@bob": ["customers.phone.not_null"],
                                "@data-platform": ["customers.email.not_null"]}
            assert set(announced(store, "shop", "email:team@example.com · owner @bob")) == {
                "customers.phone.not_null"}
        finally:
            store.close()
