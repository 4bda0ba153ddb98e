"""The report a model meant to write, out of the wrapping small models put around it.

Models answer in shapes a reader never sees as wrapping: reasoning blocks (``<think>…</think>``,
``<thinking>``, ``<reasoning>``), an echoed ``<report>…</report>`` tag from the prompt, and the whole
report inside a code fence (```` ```markdown … ``` ````) with a line of chatter before or after it.
:func:`unwrap_report` removes all three, so that :func:`~watchdog.verify.verify_fn` checks, and the
graph delivers, the Markdown itself. :func:`unwrap` also says what it removed and whether the fence
around the report was never closed (the draft was cut off inside it).

A fence is unwrapped only when it holds a Markdown heading and no heading stands outside it; the
closing fence is the first bare fence line that does not close a code block opened inside the report
(```` ```sql ```` … ```` ``` ````). Pure ``re``.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

__all__ = ["Unwrapped", "unwrap", "unwrap_report"]

_REASONING = re.compile(r"<(think|thinking|reasoning|reflection)>.*?</\1>", re.I | re.S)
_OPEN_REASONING = re.compile(r"<(?:think|thinking|reasoning|reflection)>", re.I)
_CLOSE_REASONING = re.compile(r"</(?:think|thinking|reasoning|reflection)>", re.I)
_REPORT_OPEN = re.compile(r"<report>[ \t]*\n?", re.I)
_REPORT_CLOSE = re.compile(r"\n?[ \t]*</report>", re.I)
_FENCE = re.compile(r"^[ \t]{0,3}(?P<run>`{3,}|~{3,})[ \t]*(?P<info>[^`\s]*)[^`]*$")
_HEADING = re.compile(r"^[ \t]{0,3}#{1,6}[ \t]+\S", re.M)
_WRAPPER_INFO = {"", "markdown", "md", "gfm", "text", "txt", "report"}


@dataclass
class Unwrapped:
    """The report text and what was taken off it."""

    text: str
    removed: list[str] = field(default_factory=list)
    #: the fence around the report was opened and never closed: the draft ends inside it
    unclosed_fence: bool = False
    #: a reasoning block was opened and never closed: there is no report after it
    unclosed_reasoning: bool = False


def unwrap_report(text: str) -> str:
    """The Markdown report inside ``text``: reasoning blocks, echoed ``<report>`` tags and a code fence around the
    whole report removed (see :mod:`watchdog.verify.unwrap`)."""
    return unwrap(text).text


def unwrap(text: str) -> Unwrapped:
    """Like :func:`unwrap_report`, also saying what was removed."""
    out = Unwrapped((text or "").replace("\r\n", "\n").replace("\r", "\n"))
    _drop_reasoning(out)
    _drop_report_tags(out)
    _drop_fence(out)
    out.text = out.text.strip("\n")
    return out


def _drop_reasoning(out: Unwrapped) -> None:
    text, n = _REASONING.subn("", out.text)
    if n:
        out.removed.append("reasoning block")
    opened = _OPEN_REASONING.search(text)
    if opened:  # opened and never closed: everything after it is reasoning
        out.removed.append("unclosed reasoning block")
        out.unclosed_reasoning = True
        text = text[:opened.start()]
    closed = _CLOSE_REASONING.search(text)
    if closed:  # a server that strips the opening tag leaves only the closing one
        out.removed.append("reasoning block")
        text = text[closed.end():]
    out.text = text


def _drop_report_tags(out: Unwrapped) -> None:
    text = out.text
    opened = _REPORT_OPEN.search(text)
    if opened:
        text = text[opened.end():]
        out.removed.append("<report> tag")
    closes = list(_REPORT_CLOSE.finditer(text))
    if closes:
        text = text[:closes[-1].start()]
        out.removed.append("</report> tag")
    out.text = text


def _drop_fence(out: Unwrapped) -> None:
    lines = out.text.split("\n")
    for start, line in enumerate(lines):
        m = _FENCE.match(line)
        if m is None:
            continue
        if m.group("info").lower() not in _WRAPPER_INFO:
            return  # the first fence is a real code block
        end = _closing_line(lines, start + 1, m.group("run"))
        inside = lines[start + 1:end] if end is not None else lines[start + 1:]
        outside = lines[:start] + (lines[end + 1:] if end is not None else [])
        if not _HEADING.search("\n".join(inside)) or _HEADING.search("\n".join(outside)):
            return
        out.text = "\n".join(inside)
        out.removed.append("code fence")
        out.unclosed_fence = end is None
        return


def _closing_line(lines: list[str], first: int, run: str) -> int | None:
    """The line that closes the wrapper fence opened with ``run``, skipping code blocks opened inside it."""
    inner: str | None = None
    for k in range(first, len(lines)):
        m = _FENCE.match(lines[k])
        if m is None:
            continue
        fence, info = m.group("run"), m.group("info")
        if inner is not None:
            if fence[0] == inner[0] and len(fence) >= len(inner) and not info:
                inner = None
            continue
        if fence[0] == run[0] and len(fence) >= len(run) and not info:
            return k
        if info:
            inner = fence
    return None
