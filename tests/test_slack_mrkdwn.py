"""Data cannot format a Slack message: check names, sample values in the diagnosis sentence and errors that
hold mrkdwn's formatting characters (``*``, ``_``, ``~``, a backtick), emoji codes or URLs are posted, through
a real scan and a receiver on loopback, as code spans, where Slack formats nothing."""

from __future__ import annotations

import json
import re
import sqlite3
from pathlib import Path

from tests.test_chat_delivery import Receiver, check_block_kit
from watchdog.delivery.base import RunPackage
from watchdog.delivery.chat import SlackSender
from watchdog.run.scan_run import run_scan

HOSTILE = "*bold* _it_ ~gone~ `tick` :fire: https://evil.example"
#: the message's own markup: the status word, the change, the status icon
OURS = re.compile(r"\*(FAIL|WARN|ERROR)\*|\*The database could not be checked:\*|_(new|worse|better)_|"
                  r":(red_circle|warning|large_yellow_circle):")


def outside_code(text: str) -> tuple[str, str]:
    """(what Slack would format, what it shows as code) of a mrkdwn text."""
    parts = text.split("`")
    assert len(parts) % 2 == 1, f"an unclosed code span: {text!r}"
    return " ".join(parts[0::2]), " ".join(parts[1::2])


def test_hostile_data_cannot_format_a_slack_message(tmp_path: Path) -> None:
    db = tmp_path / "h.db"
    with sqlite3.connect(db) as conn:
        conn.execute("CREATE TABLE t (id INTEGER, tag TEXT)")
        conn.executemany("INSERT INTO t VALUES (?, ?)", [(i, HOSTILE if i % 3 == 0 else "ok") for i in range(60)])
    (tmp_path / "s.yaml").write_text(
        "tables:\n  t:\n    checks:\n      - accepted_values: {column: tag, values: [ok]}\n"
        "      - pattern: {column: tag, regex: '^ok$', name: 't.*bold*_x_~y~`z`'}\n")
    outcome = run_scan(f"sqlite:///{db}", [tmp_path / "s.yaml"], out_dir=tmp_path / "run")
    package = RunPackage(run_id="r-1", audit="shop_*x*", status="failed", run_dir=tmp_path / "run",
                         summary=outcome.doc.summary.to_json_dict(), trends={"t.tag.accepted_values": "new"},
                         findings_json=outcome.doc.to_json())
    slack = Receiver()
    try:
        SlackSender(webhook_url=f"{slack.url}/services/T0/B0/x").send(package, "slack")
        (body,) = slack.bodies()
    finally:
        slack.close()
    assert check_block_kit(body) == []
    sections = [b["text"]["text"] for b in body["blocks"] if b["type"] == "section"]
    assert len(sections) == 2 and any(HOSTILE.split()[0] in s for s in sections)   # the diagnosis names the value
    for text in [*sections, body["text"]]:
        formatted, shown = outside_code(text)
        assert not re.search(r"[*_~]|://|:[\w+-]+:", OURS.sub("", formatted)), text
        assert "`" not in shown
    shown = " ".join(outside_code(s)[1] for s in sections)
    for word in ("*bold*", "_it_", "~gone~", "\u02cbtick\u02cb", ":fire:", "https://evil.example'",
                 "t.*bold*_x_~y~\u02cbz\u02cb"):
        assert word in shown                                                # shown, as typed, in code
    assert "t.tag.accepted_values`." in json.dumps(body)                   # the sentence's period stays outside
    assert body["text"].startswith("`shop_*x*:` 2 failed")                 # the notification text too
