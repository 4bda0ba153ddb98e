"""Make database values safe to show in Markdown and HTML reports.

Sample rows come from the database, so a value may hold Markdown, HTML, template syntax,
control characters, very long text or an instruction to a language model. In a report it
must read as inert text: it is truncated, control characters are made visible, and every
character that Markdown or HTML would interpret is escaped, so no value can add a row,
a heading, a link, a code block or a tag.
"""

from __future__ import annotations

import math
import re
from typing import Any

from watchdog.findings import full_length

CELL_LIMIT = 120
#: the limit of a message said in one place only (the scan's error, a check's error): never cut in practice
WHOLE = 100_000
_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f\u2028\u2029\u202a-\u202e\u2066-\u2069]")
_MD_SPECIAL = re.compile(r"([\\`*\[\]|~!$])|(?<![A-Za-z0-9])_|_(?![A-Za-z0-9])")
_BLOCK_START = re.compile(r"^(\s*\d*)([#>+\-=.)])")


def _visible_control(match: re.Match[str]) -> str:
    return f"\\u{ord(match.group(0)):04x}"


def plain_text(value: Any, limit: int = CELL_LIMIT) -> str:
    """One line of text: newlines and tabs become spaces, control characters visible, length capped."""
    if value is None:
        return "NULL"
    text = str(value).replace("\r\n", " ").replace("\n", " ").replace("\r", " ").replace("\t", " ")
    text = _CONTROL.sub(_visible_control, text)
    if len(text) > limit:
        text = text[:limit] + f"… ({full_length(text):,} chars in all)"
    return text


def md_cell(value: Any, limit: int = CELL_LIMIT) -> str:
    """A value as inert Markdown for a table cell or a sentence."""
    text = plain_text(value, limit)
    text = text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")
    return _MD_SPECIAL.sub(lambda m: "\\" + m.group(0), text)


def md_paragraph(value: Any, limit: int = 1000) -> str:
    """Like :func:`md_cell`, and it cannot start a heading, quote or list when it opens a paragraph."""
    return _BLOCK_START.sub(lambda m: m.group(1) + "\\" + m.group(2), md_cell(value, limit), count=1)


def md_code(value: Any, limit: int = CELL_LIMIT) -> str:
    """A value as an inline code span (inert, readable raw); ``|`` escaped so it cannot split a table cell."""
    text = plain_text(value, limit).replace("|", "\\|")
    ticks = "`" * (max((len(r) for r in re.findall(r"`+", text)), default=0) + 1)
    pad = " " if text.startswith("`") or text.endswith("`") else ""
    return f"{ticks}{pad}{text}{pad}{ticks}"


def code_fence(text: str) -> str:
    """A fence longer than any run of backticks inside ``text``."""
    longest = max((len(run) for run in re.findall(r"`+", text)), default=0)
    return "`" * max(3, longest + 1)


def number(value: Any) -> str:
    if value is None:
        return "–"
    if isinstance(value, float) and not value.is_integer():
        return f"{value:,.2f}"
    return f"{int(value):,}"


def percent(rate: float | None) -> str:
    if rate is None:
        return "–"
    if rate == 0:
        return "0%"
    pct = rate * 100
    return f"{pct:.2f}%" if pct >= 0.01 else "<0.01%"


def duration(seconds: float | int | None) -> str:
    """Seconds as ``45d 2h`` / ``2h 0m`` / ``5m 3s`` / ``12s``."""
    if seconds is None or (isinstance(seconds, float) and not math.isfinite(seconds)):
        return "–"
    seconds = int(seconds)
    sign, seconds = ("-", -seconds) if seconds < 0 else ("", seconds)
    days, rest = divmod(seconds, 86400)
    hours, rest = divmod(rest, 3600)
    minutes, secs = divmod(rest, 60)
    if days:
        return f"{sign}{days}d {hours}h"
    if hours:
        return f"{sign}{hours}h {minutes}m"
    if minutes:
        return f"{sign}{minutes}m {secs}s"
    return f"{sign}{secs}s"
