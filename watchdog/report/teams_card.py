"""A run as a Microsoft Teams message: one Adaptive Card (schema 1.5) with the same content as the Slack one.

The body of a Workflows webhook is ``{"type": "message", "attachments": [{"contentType":
"application/vnd.microsoft.card.adaptive", "content": <card>}]}``. Card text is Markdown-lite: data is written
with ``TextBlock``s, whose text Teams does not turn into links when it carries no Markdown link syntax.
"""

from __future__ import annotations

from typing import Any

from watchdog.report.chat import STATUS_WORD, ChatMessage

CARD_VERSION = "1.5"
COLOR = {"fail": "Attention", "error": "Attention", "warn": "Warning"}


def _plain(text: str) -> str:
    """Data shown as is: Markdown's link and emphasis characters escaped."""
    for char in "\\[]()*_`<>":
        text = text.replace(char, "\\" + char)
    return text


def card(msg: ChatMessage, owners: list[str] | None = None) -> dict[str, Any]:
    """The message as a card; ``owners``: the names of the listed checks' owners, shown under the checks."""
    body: list[dict[str, Any]] = [{"type": "TextBlock", "text": _plain(msg.headline), "size": "Large",
                                   "weight": "Bolder", "wrap": True}]
    if msg.database_error:
        body.append({"type": "TextBlock", "wrap": True, "color": "Attention",
                     "text": f"The database could not be checked: {_plain(msg.database_error)}"})
    for line in msg.problems:
        change = f" · {line.change}" if line.change and line.change != "unchanged" else ""
        items: list[dict[str, Any]] = [
            {"type": "TextBlock", "wrap": True, "weight": "Bolder", "color": COLOR.get(line.status, "Default"),
             "text": f"{STATUS_WORD[line.status]} {_plain(line.name)}"},
            {"type": "TextBlock", "wrap": True, "spacing": "None", "text": _plain(line.figure + change)}]
        if line.why:
            items.append({"type": "TextBlock", "wrap": True, "isSubtle": True, "spacing": "None",
                          "text": _plain(line.why)})
        body.append({"type": "Container", "separator": True, "items": items})
    if msg.more:
        body.append({"type": "TextBlock", "isSubtle": True, "text": f"and {msg.more} more problem checks"})
    if owners:
        body.append({"type": "TextBlock", "wrap": True, "text": "Owners: " + ", ".join(_plain(o) for o in owners)})
    content: dict[str, Any] = {"$schema": "http://adaptivecards.io/schemas/adaptive-card.json",
                               "type": "AdaptiveCard", "version": CARD_VERSION, "body": body}
    if msg.links:
        content["actions"] = [{"type": "Action.OpenUrl", "title": title, "url": url} for title, url in msg.links]
    return {"type": "message", "attachments": [{"contentType": "application/vnd.microsoft.card.adaptive",
                                                "contentUrl": None, "content": content}]}
