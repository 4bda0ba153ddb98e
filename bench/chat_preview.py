"""Pictures of the Slack and Teams alerts for the docs: a real run's messages, drawn by a small renderer.

Slack's Block Kit Builder and Microsoft's Adaptive Cards designer are web services; offline, this module draws
the block and element types watchdog sends (Slack: header, section, context, actions with buttons, divider;
Teams: TextBlock, Container, FactSet, ColumnSet, ActionSet and the card's actions) as HTML close to how the
apps show them, and headless Chromium takes the screenshots. Anything else in a payload is refused
(:class:`Unrendered`), so when the messages grow a new block type the test of this renderer fails instead of
the pictures quietly leaving it out. The run behind the messages is real: a SQLite shop scanned twice
(diagnosis on), its trends, owners and tags, sent through the channels' own payload code::

    .venv/bin/python -m bench.chat_preview --out docs/img
"""

from __future__ import annotations

import argparse
import html
import json
import re
import sqlite3
import subprocess
import tempfile
from pathlib import Path
from typing import Any

from watchdog.delivery.base import RunPackage

CHROMIUM = ("/usr/bin/chromium", "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
            "--disable-background-networking", "--disable-component-update", "--disable-sync",
            "--hide-scrollbars", "--force-device-scale-factor=2")
#: how Slack and Teams know the owners named in the suite (the configuration's ``owners:``)
SLACK_MENTIONS = {"@data-platform": "<!subteam^S0DP>", "@alice": "<@U0ALICE>"}
TEAMS_NAMES = {"@data-platform": "Data Platform", "@alice": "Alice Martin"}
#: what Slack shows for those mention tokens
SLACK_NAMES = {"S0DP": "data-platform", "U0ALICE": "Alice Martin"}
PUBLIC_URL = "https://dq.example.com"


class Unrendered(ValueError):
    """A block or element type this renderer does not draw."""


# ---- the run


SUITE = """\
owner: "@data-platform"
tables:
  orders:
    tags: [finance]
    checks:
      - not_null: customer_email
        owner: "@alice"
      - range: {column: amount, min: 0}
      - accepted_values: {column: status, values: [open, paid, shipped, refunded]}
      - unique: order_ref
  customers:
    tags: [crm, pii]
    checks:
      - not_null: country
      - pattern: {column: email, regex: '^[^@ ]+@[^@ ]+\\.[a-z]{2,}$'}
        severity: warn
        owner: "@alice"
"""


def _shop(db: Path, day: int) -> None:
    """Orders from three channels, where the ``import`` channel loses e-mails and statuses (day 2: more, since
    the 17th) and the app sends refunds as negative amounts; customers from a partner feed lack a country."""
    with sqlite3.connect(db) as conn:
        conn.executescript("DROP TABLE IF EXISTS orders; DROP TABLE IF EXISTS customers;"
                           "CREATE TABLE orders (id INTEGER, order_ref TEXT, channel TEXT, customer_email TEXT,"
                           " amount REAL, status TEXT, created_at TEXT);"
                           "CREATE TABLE customers (id INTEGER, email TEXT, country TEXT, source TEXT);")
        rows = []
        for i in range(2000):
            channel = ("web", "app", "import")[i % 3]
            imported_late = channel == "import" and i > 1200
            email = None if imported_late and i % (9 if day == 1 else 4) == 0 else f"c{i}@shop.example"
            amount = -12.5 if day == 2 and channel == "app" and i % 41 == 0 else 20 + i % 50
            status = "lost" if day == 2 and imported_late and i % 13 == 0 else "paid"
            ref = f"R{i - 3}" if imported_late and i % 131 == 0 else f"R{i}"
            rows.append((i, ref, channel, email, amount, status, f"2026-11-{1 + i * 28 // 2000:02d}"))
        conn.executemany("INSERT INTO orders VALUES (?, ?, ?, ?, ?, ?, ?)", rows)
        conn.executemany("INSERT INTO customers VALUES (?, ?, ?, ?)",
                         [(i, f"c{i} at shop" if i % 4 == 3 and i % 23 == 0 else f"c{i}@shop.example",
                           None if i % 4 == 3 and i % 9 == 0 else "FR", "partner" if i % 4 == 3 else "signup")
                          for i in range(800)])


def sample_package(work: Path) -> RunPackage:
    """A filed run of the ``shop`` audit against the one before it: several problem checks, owners, trends."""
    from watchdog.run.scan_run import run_scan
    from watchdog.trends import compare

    work.mkdir(parents=True, exist_ok=True)
    (work / "shop.yaml").write_text(SUITE)
    docs = []
    for day in (1, 2):
        _shop(work / "shop.db", day)
        outcome = run_scan(f"sqlite:///{work / 'shop.db'}", [work / "shop.yaml"], out_dir=work / f"run-{day}")
        docs.append(outcome.doc)
    before, now = ([f.to_json_dict() for f in d.findings] for d in docs)
    return RunPackage(run_id="20261205T060000Z-4f2a9c", audit="shop", status="failed", run_dir=work / "run-2",
                      summary=docs[1].summary.to_json_dict(), trends=compare(now, before))


def payloads(package: RunPackage) -> tuple[dict[str, Any], dict[str, Any]]:
    """The JSON the ``slack`` (incoming webhook) and ``teams`` channels would post for ``package``."""
    from watchdog.delivery.chat import SlackSender, TeamsSender

    slack = SlackSender(webhook_url="https://hooks.slack.com/services/T000/B000/XXXX", public_url=PUBLIC_URL,
                        mentions=SLACK_MENTIONS)
    text, blocks = slack.payload(package)
    teams = TeamsSender("https://example.webhook.office.com/workflows/x", public_url=PUBLIC_URL, max_checks=20,
                        timeout_s=10, mentions=TEAMS_NAMES)
    return {"text": text, "blocks": blocks}, teams.payload(package)


# ---- Slack


_EMOJI = {"red_circle": "dot red", "large_yellow_circle": "dot yellow", "warning": "warn"}
#: Slack's markers open and close only next to a non-word character (``snake_case`` stays as typed)
_TOKEN = re.compile(r"<([^>|]+)(?:\|([^>]*))?>|(?<!\w)\*(\S[^*\n]*?)\*(?!\w)|(?<!\w)_(\S[^_\n]*?)_(?!\w)"
                    r"|`([^`\n]+)`|(?<!\w):([a-z_]+):(?!\w)")


def mrkdwn(text: str) -> str:
    """Slack mrkdwn as HTML: links, mentions, *bold*, _italic_, `code`, the emoji watchdog uses. The text
    arrives escaped as Slack wants it (``&amp; &lt; &gt;``), which is already HTML."""
    out, at = [], 0
    for m in _TOKEN.finditer(text):
        out.append(text[at:m.start()])
        at = m.end()
        target, label, bold, italic, code, emoji = m.groups()
        if target is not None:
            if target.startswith(("@U", "@W")):
                out.append(f'<span class="mention">@{SLACK_NAMES.get(target[1:], target[1:])}</span>')
            elif target.startswith("!subteam^"):
                out.append(f'<span class="mention">@{SLACK_NAMES.get(target[9:], target[9:])}</span>')
            elif target.startswith("http"):
                out.append(f'<a href="{target}">{label or target}</a>')
            else:
                raise Unrendered(f"Slack angle-bracket token <{target}>")
        elif bold is not None:
            out.append(f"<b>{mrkdwn(bold)}</b>")
        elif italic is not None:
            out.append(f"<i>{mrkdwn(italic)}</i>")
        elif code is not None:
            out.append(f"<code>{code}</code>")
        elif emoji in _EMOJI:
            out.append(f'<span class="{_EMOJI[emoji]}"></span>')
        else:
            raise Unrendered(f"Slack emoji :{emoji}:")
    out.append(text[at:])
    return "".join(out).replace("\n", "<br>")


def _slack_text(obj: dict[str, Any]) -> str:
    if obj.get("type") == "plain_text":
        return html.escape(obj["text"])
    if obj.get("type") == "mrkdwn":
        return mrkdwn(obj["text"])
    raise Unrendered(f"Slack text object {obj.get('type')!r}")


def slack_block(block: dict[str, Any]) -> str:
    kind = block.get("type")
    if kind == "header":
        return f'<div class="b-header" data-block="header">{_slack_text(block["text"])}</div>'
    if kind == "section":
        return f'<div class="b-section" data-block="section">{_slack_text(block["text"])}</div>'
    if kind == "context":
        parts = [_slack_text(e) for e in block["elements"]]
        return f'<div class="b-context" data-block="context">{" ".join(parts)}</div>'
    if kind == "divider":
        return '<hr class="b-divider" data-block="divider">'
    if kind == "actions":
        buttons = []
        for element in block["elements"]:
            if element.get("type") != "button":
                raise Unrendered(f"Slack actions element {element.get('type')!r}")
            buttons.append(f'<a class="button" data-element="button" href="{html.escape(element["url"])}">'
                           f'{_slack_text(element["text"])}</a>')
        return f'<div class="b-actions" data-block="actions">{"".join(buttons)}</div>'
    raise Unrendered(f"Slack block {kind!r}")


SLACK_CSS = """
body { margin: 0; background: #fff; font: 15px/1.47 Lato, "Liberation Sans", "DejaVu Sans", Arial, sans-serif;
  color: #1d1c1d; }
.channel { border-bottom: 1px solid #e2e2e2; padding: 12px 20px; font-weight: 900; font-size: 17px; }
.message { display: flex; gap: 10px; padding: 14px 20px 18px; }
.avatar { width: 36px; height: 36px; border-radius: 6px; background: #2b5797; color: #fff; font-weight: 900;
  display: flex; align-items: center; justify-content: center; flex: none; }
.who { font-weight: 900; } .app { font-size: 11px; background: #e8e8e8; color: #616061; border-radius: 3px;
  padding: 1px 4px; margin-left: 4px; font-weight: 700; } .time { color: #616061; font-size: 12px; margin-left: 6px; }
.b-header { font-size: 18px; font-weight: 900; margin: 4px 0 6px; }
.b-section { margin: 6px 0; } .b-context { color: #616061; font-size: 13px; margin: 8px 0; }
.b-actions { margin-top: 10px; display: flex; gap: 8px; } .b-divider { border: 0; border-top: 1px solid #e2e2e2; }
.button { border: 1px solid #c8c8c8; border-radius: 4px; padding: 4px 12px; font-weight: 700; font-size: 14px;
  color: #1d1c1d; text-decoration: none; }
code { font: 12px "DejaVu Sans Mono", monospace; color: #c01343; background: #f8f8f8; border: 1px solid #e2e2e2;
  border-radius: 3px; padding: 1px 3px; }
a { color: #1264a3; } .mention { background: #e8f5fa; color: #1264a3; border-radius: 3px; padding: 0 2px; }
.dot { display: inline-block; width: 12px; height: 12px; border-radius: 50%; vertical-align: -1px; }
.red { background: #dd2e44; } .yellow { background: #fdcb58; }
.warn { display: inline-block; width: 0; height: 0; border: 7px solid transparent; border-bottom: 12px solid #ffcc4d;
  border-top: 0; vertical-align: 0; }
"""


def slack_page(body: dict[str, Any]) -> str:
    blocks = "\n".join(slack_block(b) for b in body["blocks"])
    return (f'<!DOCTYPE html><html><head><meta charset="utf-8"><style>{SLACK_CSS}</style></head><body>'
            '<div class="channel"># data-quality</div><div class="message"><div class="avatar">W</div><div>'
            '<span class="who">watchdog</span><span class="app">APP</span><span class="time">6:00 AM</span>'
            f'{blocks}</div></div>{_MEASURE}</body></html>')


# ---- Teams


_COLORS = {"Default": "#242424", "Attention": "#c4314b", "Warning": "#835c00", "Good": "#237b4b",
           "Accent": "#5b5fc7"}
_SIZES = {"Small": "12px", "Default": "14px", "Medium": "16px", "Large": "20px", "ExtraLarge": "24px"}
_SPACING = {"None": "0", "Small": "4px", "Default": "8px", "Medium": "16px", "Large": "24px"}


def card_text(text: str) -> str:
    """A TextBlock's text: Teams' Markdown subset (**bold**, [link](url)) with backslash escapes undone."""
    out, at = [], 0
    for m in re.finditer(r"\\(.)|\*\*(.+?)\*\*|\[([^\]]+)\]\(([^)]+)\)", text):
        out.append(html.escape(text[at:m.start()]))
        at = m.end()
        escaped, bold, label, url = m.groups()
        if escaped is not None:
            out.append(html.escape(escaped))
        elif bold is not None:
            out.append(f"<b>{card_text(bold)}</b>")
        else:
            out.append(f'<a href="{html.escape(url)}">{card_text(label)}</a>')
    out.append(html.escape(text[at:]))
    return "".join(out).replace("\n", "<br>")


def _style(element: dict[str, Any]) -> str:
    parts = [f"margin-top: {_SPACING.get(element.get('spacing', 'Default'), '8px')}"]
    if element.get("separator"):
        parts.append("border-top: 1px solid #e0e0e0; padding-top: 10px; margin-top: 10px")
    return "; ".join(parts)


def card_element(element: dict[str, Any]) -> str:
    kind = element.get("type")
    style = _style(element)
    if kind == "TextBlock":
        color = _COLORS.get(element.get("color", "Default"), "#242424")
        css = (f"{style}; color: {'#616161' if element.get('isSubtle') else color}; "
               f"font-size: {_SIZES.get(element.get('size', 'Default'), '14px')}; "
               f"font-weight: {700 if element.get('weight') == 'Bolder' else 400}")
        return f'<div class="TextBlock" data-element="TextBlock" style="{css}">{card_text(element["text"])}</div>'
    if kind == "Container":
        inner = "".join(card_element(e) for e in element.get("items") or [])
        return f'<div class="Container" data-element="Container" style="{style}">{inner}</div>'
    if kind == "FactSet":
        rows = "".join(f"<tr><th>{card_text(f['title'])}</th><td>{card_text(f['value'])}</td></tr>"
                       for f in element["facts"])
        return f'<table class="FactSet" data-element="FactSet" style="{style}">{rows}</table>'
    if kind == "ColumnSet":
        columns = []
        for column in element.get("columns") or []:
            if column.get("type", "Column") != "Column":
                raise Unrendered(f"Adaptive Card column {column.get('type')!r}")
            columns.append('<div class="Column">' + "".join(card_element(e) for e in column.get("items") or [])
                           + "</div>")
        return f'<div class="ColumnSet" data-element="ColumnSet" style="{style}">{"".join(columns)}</div>'
    if kind == "ActionSet":
        buttons = card_actions(element["actions"])
        return f'<div class="ActionSet" data-element="ActionSet" style="{style}">{buttons}</div>'
    raise Unrendered(f"Adaptive Card element {kind!r}")


def card_actions(actions: list[dict[str, Any]]) -> str:
    out = []
    for action in actions:
        if action.get("type") != "Action.OpenUrl":
            raise Unrendered(f"Adaptive Card action {action.get('type')!r}")
        out.append(f'<a class="action" data-element="Action.OpenUrl" href="{html.escape(action["url"])}">'
                   f'{html.escape(action["title"])}</a>')
    return "".join(out)


TEAMS_CSS = """
body { margin: 0; background: #f5f5f5; font: 14px/1.45 "Segoe UI", "Liberation Sans", "DejaVu Sans", Arial, sans-serif;
  color: #242424; }
.post { display: flex; gap: 10px; padding: 16px 20px; }
.avatar { width: 32px; height: 32px; border-radius: 50%; background: #5b5fc7; color: #fff; font-weight: 700;
  display: flex; align-items: center; justify-content: center; flex: none; }
.meta { font-size: 12px; color: #616161; margin-bottom: 4px; } .meta b { color: #242424; }
.card { background: #fff; border: 1px solid #e0e0e0; border-radius: 6px; padding: 14px 16px; width: 560px;
  box-shadow: 0 1px 2px rgba(0,0,0,.08); }
.actions { display: flex; gap: 8px; margin-top: 14px; }
.action { flex: 1; text-align: center; border: 1px solid #d1d1d1; border-radius: 4px; padding: 6px 10px;
  color: #242424; text-decoration: none; font-weight: 600; }
.FactSet th { text-align: left; padding-right: 12px; font-weight: 600; } .ColumnSet { display: flex; gap: 12px; }
"""


def teams_page(body: dict[str, Any]) -> str:
    if body.get("type") != "message":
        raise Unrendered(f"Teams envelope {body.get('type')!r}")
    [attachment] = body["attachments"]
    if attachment.get("contentType") != "application/vnd.microsoft.card.adaptive":
        raise Unrendered(f"Teams attachment {attachment.get('contentType')!r}")
    card = attachment["content"]
    inner = "".join(card_element(e) for e in card.get("body") or [])
    if card.get("actions"):
        inner += f'<div class="actions">{card_actions(card["actions"])}</div>'
    return (f'<!DOCTYPE html><html><head><meta charset="utf-8"><style>{TEAMS_CSS}</style></head><body>'
            '<div class="post"><div class="avatar">W</div><div><div class="meta"><b>Workflows</b> via watchdog · '
            f'6:00 AM</div><div class="card" data-element="AdaptiveCard">{inner}</div></div></div>'
            f'{_MEASURE}</body></html>')


# ---- screenshots

#: the page's height, written into the DOM so the screenshot can be cut to it
_MEASURE = "<script>document.body.dataset.height = document.documentElement.scrollHeight</script>"


def chromium(page: Path, *args: str) -> str:
    with tempfile.TemporaryDirectory() as profile:
        done = subprocess.run([*CHROMIUM, f"--user-data-dir={profile}", *args, page.as_uri()], capture_output=True,
                              text=True, timeout=120)
    if done.returncode != 0:
        raise RuntimeError(f"chromium failed: {done.stderr[-1500:]}")
    return done.stdout


def screenshot(page: Path, png: Path, width: int) -> str:
    """Draw ``page`` at ``width`` CSS pixels, as tall as its content; returns the DOM Chromium built."""
    dom = chromium(page, "--dump-dom", f"--window-size={width},800")
    height = int(re.search(r'data-height="(\d+)"', dom).group(1)) if 'data-height="' in dom else 800  # type: ignore[union-attr]
    chromium(page, f"--screenshot={png}", f"--window-size={width},{height}")
    return dom


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--out", type=Path, default=Path("docs/img"), help="folder of the PNGs (and their pages)")
    args = parser.parse_args(argv)
    args.out.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory() as tmp:
        slack, teams = payloads(sample_package(Path(tmp)))
    pages = {"alert-slack": (slack_page(slack), 760), "alert-teams": (teams_page(teams), 680)}
    with tempfile.TemporaryDirectory() as tmp:
        for name, (text, width) in pages.items():
            page = Path(tmp) / f"{name}.html"
            page.write_text(text, encoding="utf-8")
            screenshot(page, args.out / f"{name}.png", width)
            print(f"{args.out / name}.png")
    (Path(tempfile.gettempdir()) / "watchdog-chat-payloads.json").write_text(json.dumps([slack, teams], indent=1))


if __name__ == "__main__":
    main()
