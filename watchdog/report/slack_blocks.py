"""A run as a Slack Block Kit message: a header, one section per problem check, then links.

Slack's limits are kept: at most 50 blocks, 150 characters in a header, 3,000 in a section's text; data is
escaped as Slack's mrkdwn needs (``&``, ``<``, ``>``), so a value never turns into a link or a mention.
"""

from __future__ import annotations

from typing import Any

from watchdog.report.chat import STATUS_WORD, ChatMessage

MAX_BLOCKS = 50
HEADER_CHARS = 150
TEXT_CHARS = 3000
ICON = {"fail": ":red_circle:", "error": ":warning:", "warn": ":large_yellow_circle:"}


def escape(text: str) -> str:
    """Data as Slack mrkdwn shows it literally."""
    return text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")


def _cut(text: str, limit: int) -> str:
    return text if len(text) <= limit else text[:limit - 1] + "…"


def blocks(msg: ChatMessage, mentions: list[str] | None = None) -> tuple[str, list[dict[str, Any]]]:
    """(the notification text, the blocks). ``mentions``: Slack mention tokens (``<@U123>``) added as they are."""
    out: list[dict[str, Any]] = [{"type": "header", "text": {"type": "plain_text", "text": _cut(msg.headline,
                                                                                               HEADER_CHARS)}}]
    if msg.database_error:
        out.append({"type": "section", "text": {"type": "mrkdwn", "text": _cut(
            f"*The database could not be checked:* {escape(msg.database_error)}", TEXT_CHARS)}})
    for line in msg.problems:
        change = f" · _{line.change}_" if line.change and line.change != "unchanged" else ""
        text = f"{ICON.get(line.status, '')} *{STATUS_WORD[line.status]}* `{escape(line.name)}` — " \
               f"{escape(line.figure)}{change}"
        if line.why:
            text += f"\n{escape(line.why)}"
        out.append({"type": "section", "text": {"type": "mrkdwn", "text": _cut(text, TEXT_CHARS)}})
    if msg.more:
        out.append({"type": "context", "elements": [{"type": "mrkdwn",
                                                      "text": f"and {msg.more} more problem checks"}]})
    if mentions:
        out.append({"type": "context", "elements": [{"type": "mrkdwn", "text": " ".join(mentions)}]})
    if msg.links:
        out.append({"type": "actions", "elements": [
            {"type": "button", "text": {"type": "plain_text", "text": title}, "url": url}
            for title, url in msg.links]})
    return _cut(msg.headline, TEXT_CHARS), out[:MAX_BLOCKS]
