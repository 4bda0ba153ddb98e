"""``group_by: owner`` on Teams (one Adaptive Card per owner, validated as the service would, on a receiver on
loopback), and owner names that contain the separators a delivery's target is written with (`` · ``,
``owner``, ``deliver 2``): each message still goes to the right address, and is retried as the same message."""

from __future__ import annotations

import json
from pathlib import Path

from tests.test_alert_routing import listed_in_text, with_smtp
from tests.test_chat_delivery import Receiver, check_teams_card
from tests.test_chat_routing import make_project
from watchdog.run.audit import execute_audit
from watchdog.settings import load_settings

GROUPED = """\
tables:
  orders:
    owners: ["@alice"]
    checks:
      - not_null: amount
      - not_null: {column: status, severity: warn}
  customers:
    checks:
      - not_null: email
      - not_null: {column: phone, owners: ["@bob", "@alice"]}
      - not_null: id
"""


def card_text(body: dict) -> str:
    """Every TextBlock of a card, Markdown escapes removed (as Teams shows them)."""
    texts: list[str] = []

    def walk(elements: list[dict]) -> None:
        for element in elements:
            if element.get("type") == "TextBlock":
                texts.append(element["text"].replace("\\", ""))
            walk(element.get("items") or [])

    walk(body["attachments"][0]["content"]["body"])
    return "\n".join(texts)


def test_teams_group_by_owner_posts_one_card_per_owner(tmp_path: Path) -> None:
    teams = Receiver()
    try:
        deliver = f'      - teams: {{webhook_url: "{teams.url}/workflows/g?sig=grp-secret", group_by: owner}}\n'
        config = make_project(tmp_path, deliver)
        (tmp_path / "checks" / "shop.yaml").write_text(GROUPED)
        config.write_text(config.read_text().replace(
            '"@alice": {slack', '"@bob": {teams: "Bob Builder"}\n  "@alice": {slack'))
        run = execute_audit(load_settings(config), "shop")
        assert len(teams.requests) == 3                              # @alice, @bob, the unowned: one card each
        cards = {}
        for body in teams.bodies():
            assert check_teams_card(body) == []
            text = card_text(body)
            headline = text.splitlines()[0]
            cards[headline.rpartition(" · owner ")[2]] = text
        assert sorted(cards) == ["@alice", "@bob", "unowned"]
        listed = {owner: sorted(line.split()[1] for line in text.splitlines() if line.startswith(("FAIL ", "WARN ")))
                  for owner, text in cards.items()}
        assert listed == {"@alice": ["customers.phone.not_null", "orders.amount.not_null", "orders.status.not_null"],
                          "@bob": ["customers.phone.not_null"], "unowned": ["customers.email.not_null"]}
        # each card names its owner only (as the owners: mapping gives the Teams name); the unowned card no one
        assert "Owners: Alice Example" in cards["@alice"] and "Bob Builder" not in cards["@alice"]
        assert "Owners: Bob Builder" in cards["@bob"] and "Alice Example" not in cards["@bob"]
        assert "Owners:" not in cards["unowned"]
        chat = [d for d in run.deliveries if d["channel"] == "teams"]
        assert sorted(d["status"] for d in chat) == ["sent"] * 3
        assert all("grp-secret" not in json.dumps(d) for d in chat)
        assert sorted(d["group"] for d in chat) == ["@alice", "@bob", "unowned"]
    finally:
        teams.close()


#: owners whose names hold the marks a target is written with
ODD = """\
tables:
  orders:
    owners: ["@ops · night"]
    checks:
      - not_null: amount
  customers:
    checks:
      - not_null: {column: email, owner: "@x · owner @y"}
      - not_null: {column: phone, owner: "@z · deliver 2"}
"""


def test_owner_names_with_separators_do_not_confuse_the_delivery_record(tmp_path: Path) -> None:
    from watchdog.delivery.outbox import flush_outbox
    from watchdog.history import HistoryStore
    from watchdog.testing.smtp_sink import SmtpSink

    with SmtpSink(fail="451 4.3.0 try again later") as sink:
        deliver = ("      - email: {to: [team@example.com], group_by: owner}\n"
                   "      - email: {to: [team@example.com], group_by: owner, mail_owners: false}\n")
        config = with_smtp(make_project(tmp_path, deliver), sink)
        (tmp_path / "checks" / "shop.yaml").write_text(ODD)
        config.write_text(config.read_text().replace('owners:\n', 'owners:\n'
                                                     '  "@ops · night": {email: night@example.com}\n'
                                                     '  "@x · owner @y": {email: xy@example.com}\n'
                                                     '  "@z · deliver 2": {email: z@example.com}\n', 1))
        settings = load_settings(config)
        run = execute_audit(settings, "shop")
        assert {d["status"] for d in run.deliveries} == {"pending"}    # the server refuses: all in the outbox
        assert len(run.deliveries) == 2 * 3 + 3                          # team x 3 groups, twice; 3 owners once
        assert len({d["target"] for d in run.deliveries}) == len(run.deliveries)
        sink.fail = None
        store = HistoryStore(settings.history_url())
        try:
            retried = flush_outbox(settings, store)
            assert flush_outbox(settings, store) == []
            records = {(d["target"], store.delivery(run.run_id, "email", d["target"]).spec["destination"], d["group"])
                       for d in run.deliveries}
        finally:
            store.close()
    assert sorted(r.status for r in retried) == ["sent"] * 9
    got = sorted((r.rcpt_tos[0], r.message["To"], r.message["Subject"].split(" · owner ", 1)[1],
                  tuple(listed_in_text(r.message))) for r in sink.received)
    expected = []
    for owner, address, check in (("@ops · night", "night@example.com", "orders.amount.not_null"),
                                  ("@x · owner @y", "xy@example.com", "customers.email.not_null"),
                                  ("@z · deliver 2", "z@example.com", "customers.phone.not_null")):
        expected += [("team@example.com", "team@example.com", owner, (check,))] * 2
        expected.append((address, address, owner, (check,)))
    assert got == sorted(expected)
    assert ("team@example.com · owner @z · deliver 2", "team@example.com", "@z · deliver 2") in records
    assert ("z@example.com · owner @z · deliver 2", "z@example.com", "@z · deliver 2") in records


def test_a_delivery_recorded_without_its_destination_is_read_from_its_target() -> None:
    """Deliveries an earlier version left in the outbox carry no ``destination``: it is cut from the target."""
    from watchdog.delivery.routing import destination_of

    assert destination_of("a@example.com · owner @x · owner @y", {"group": "@x · owner @y"}) == "a@example.com"
    assert destination_of("a@example.com · owner @z · deliver 2", {"group": "@z"}) == "a@example.com"
    assert destination_of("a@example.com · deliver 3", {}) == "a@example.com"
    assert destination_of("whatever · owner @x", {"destination": "b@example.com", "group": "@x"}) == "b@example.com"
