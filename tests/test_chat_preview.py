"""The docs' pictures of the Slack and Teams alerts cannot rot: bench/chat_preview.py draws every block and element
type the channels send (messages with 0, 1 and 60 problem checks, a database error, mentions, links, hostile data),
refuses any other, and Chromium renders each page with one drawn node per block and element."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest

from bench.chat_preview import (
    Unrendered,
    card_element,
    payloads,
    sample_package,
    screenshot,
    slack_block,
    slack_page,
    teams_page,
)
from tests.test_chat_delivery import check_block_kit, check_teams_card, scanned_package
from watchdog.delivery.base import RunPackage
from watchdog.delivery.chat import SlackSender, TeamsSender
from watchdog.findings import FindingsDoc


def variants(tmp_path: Path) -> list[tuple[str, dict[str, Any], dict[str, Any]]]:
    """(name, Slack body, Teams body) of every shape of message the channels produce."""
    out = []
    real = sample_package(tmp_path / "real")
    out.append(("real", *payloads(real)))
    for problems in (0, 1, 60):
        folder = tmp_path / f"p{problems}"
        folder.mkdir()
        package = scanned_package(folder, problems, hostile=problems == 1)
        for links in (None, "https://dq.example.com"):
            slack = SlackSender(webhook_url="https://hooks.slack.com/services/T/B/X", public_url=links,
                                mentions={"@a": "<@U1>"})
            text, blocks = slack.payload(package)
            teams = TeamsSender("https://example.webhook.office.com/x", public_url=links, max_checks=20,
                                timeout_s=5).payload(package)
            out.append((f"{problems}-{'links' if links else 'nolinks'}", {"text": text, "blocks": blocks}, teams))
    broken = FindingsDoc.from_json(real.findings_bytes())
    broken.error = "database unavailable: connection refused"
    failed = RunPackage(run_id="r-err", audit="shop", status="error", run_dir=real.run_dir, summary=real.summary,
                        findings_json=broken.to_json())
    out.append(("database-error", *payloads(failed)))
    return out


def teams_elements(node: dict[str, Any]) -> int:
    """The drawable nodes of a card: its body elements (nested too) and actions."""
    count = 0
    for element in node.get("body") or node.get("items") or []:
        count += 1 + teams_elements(element)
        count += len(element.get("actions") or []) if element.get("type") == "ActionSet" else 0
    return count + len(node.get("actions") or [])


def test_every_message_shape_is_drawn_in_chromium(tmp_path):
    from tests.test_dashboard import chromium

    shapes = variants(tmp_path)
    kinds = {b["type"] for _, slack, _ in shapes for b in slack["blocks"]}
    assert {"header", "section", "context", "actions"} <= kinds  # the variants reach every block watchdog sends
    for name, slack, teams in shapes:
        assert check_block_kit(slack) == [] and check_teams_card(teams) == [], name
        page = tmp_path / f"{name}-slack.html"
        page.write_text(slack_page(slack), encoding="utf-8")
        dom, log = chromium(page, tmp_path)
        assert "Uncaught" not in log
        assert len(re.findall(r'data-block="', dom)) == len(slack["blocks"]), name
        buttons = sum(len(b["elements"]) for b in slack["blocks"] if b["type"] == "actions")
        assert dom.count('data-element="button"') == buttons
        assert "<script>alert" not in dom and "<img" not in dom  # data stayed text
        card = teams["attachments"][0]["content"]
        page = tmp_path / f"{name}-teams.html"
        page.write_text(teams_page(teams), encoding="utf-8")
        dom, _ = chromium(page, tmp_path)
        assert len(re.findall(r'data-element="(?!AdaptiveCard)', dom)) == teams_elements(card), name


def test_types_it_does_not_draw_are_refused():
    with pytest.raises(Unrendered, match="Slack block 'image'"):
        slack_block({"type": "image", "image_url": "https://x/y.png", "alt_text": "y"})
    with pytest.raises(Unrendered, match="Slack actions element 'static_select'"):
        slack_block({"type": "actions", "elements": [{"type": "static_select"}]})
    with pytest.raises(Unrendered, match="emoji :rocket:"):
        slack_block({"type": "section", "text": {"type": "mrkdwn", "text": "go :rocket:"}})
    with pytest.raises(Unrendered, match="Adaptive Card element 'Image'"):
        card_element({"type": "Image", "url": "https://x/y.png"})
    with pytest.raises(Unrendered, match="action 'Action.Submit'"):
        card_element({"type": "ActionSet", "actions": [{"type": "Action.Submit", "title": "x"}]})


def test_slack_formatting_reads_as_slack_shows_it():
    block = slack_block({"type": "section", "text": {"type": "mrkdwn", "text":
                         "*FAIL* `a_b` snake_case_name _new_ &lt;b&gt; <https://x.example/r|Open> <@U0ALICE>"}})
    assert "<b>FAIL</b>" in block and "<code>a_b</code>" in block and "snake_case_name" in block
    assert "<i>new</i>" in block and "&lt;b&gt;" in block and '<a href="https://x.example/r">Open</a>' in block
    assert '<span class="mention">@Alice Martin</span>' in block


def test_the_screenshot_is_as_tall_as_the_message(tmp_path):
    slack, _ = payloads(sample_package(tmp_path))
    page = tmp_path / "slack.html"
    page.write_text(slack_page(slack), encoding="utf-8")
    png = tmp_path / "slack.png"
    dom = screenshot(page, png, 760)
    height = int(re.search(r'data-height="(\d+)"', dom).group(1))
    assert height > 400
    header = png.read_bytes()[:24]
    assert header[:8] == b"\x89PNG\r\n\x1a\n"
    assert int.from_bytes(header[20:24], "big") == 2 * height  # drawn at twice the CSS pixels
