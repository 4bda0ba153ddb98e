"""A run as a Slack Block Kit message: a header, one section per problem check, then links.

Slack's limits are kept: at most 50 blocks, 150 characters in a header, 3,000 in a section's text; data is
escaped as Slack's mrkdwn needs (``&``, ``<``, ``>``), so a value never turns into a link or a mention.

mrkdwn has no escape for its formatting characters (``*``, ``_``, ``~``, a backtick): Slack's advice is to put
such text in a code span, where nothing is formatted. So every word of data that holds one of them (or a bare
URL, or an ``:emoji:`` code) is written as inline code, and a backtick inside it, which would end the span, as
``ˋ`` (U+02CB): a check name, a sample value or an error can never bold, strike or restyle the message.
"""

from __future__ import annotations

import re
from typing import Any

from watchdog.report.chat import STATUS_WORD, ChatMessage

MAX_BLOCKS = 50
HEADER_CHARS = 150
TEXT_CHARS = 3000
ICON = {"fail": ":red_circle:", "error": ":warning:", "warn": ":large_yellow_circle:"}


#: a word that mrkdwn could format: a formatting character, a URL Slack would link, an emoji code; and a
#: check's name (``customers.email.pattern``), written as code like the names that hold a ``_``
_FORMATTABLE = re.compile(r"[*_~`]|://|:[\w+-]+:|^[A-Za-z][\w-]*(\.[\w-]+){2,}$")
#: a word, and the sentence's punctuation after it (left outside the code span)
_WORD = re.compile(r"(\S+?)([.,;]*)(?=\s|$)")
#: what ends a code span, shown as a look-alike inside one (mrkdwn cannot escape it)
_TICK = "\u02cb"


def escape(text: str) -> str:
    """Data as Slack mrkdwn shows it literally: ``&``, ``<``, ``>`` escaped, and each word that holds a
    formatting character in a code span."""
    return _WORD.sub(lambda m: code(m.group(1)) + m.group(2) if _FORMATTABLE.search(m.group(1)) else m.group(0),
                     _amp(text))


def code(text: str) -> str:
    """``text`` (escaped already) as an inline code span: shown as typed, never formatted."""
    return f"`{text.replace('`', _TICK)}`"


def _amp(text: str) -> str:
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
        text = f"{ICON.get(line.status, '')} *{STATUS_WORD[line.status]}* {code(_amp(line.name))} — " \
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
    return _cut(escape(msg.headline), TEXT_CHARS), out[:MAX_BLOCKS]
