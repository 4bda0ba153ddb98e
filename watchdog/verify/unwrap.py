"""The answer a model meant to give, out of the wrapping small models put around it: one core for the report
(verify_fn and the graph's drafts) and for the JSON answers of program mode and the review.

Models answer in shapes a reader never sees as wrapping: reasoning blocks (``<think>…</think>``,
``<thinking>``, ``<reasoning>``, ``<reflection>``), an echoed tag from the prompt (``<report>``,
``<answer>``, ``<json>``), and the whole answer inside a code fence (```` ```markdown … ``` ````,
```` ```json … ``` ````) with a line of chatter before or after it. :func:`unwrap` removes all three and says
what it removed, whether the fence around the answer was never closed (the draft was cut off inside it) and
whether a reasoning block was never closed (there is no answer after it).

A fence is unwrapped only when it is the first fence, its info string is a wrapper's (``markdown``, ``md``,
``json``, none, …), what is inside it holds what the answer must contain (a Markdown heading for a report,
``{`` for JSON: the ``contains`` predicate) and nothing outside it does. The closing fence is the first bare
fence line that does not close a code block opened inside the answer (```` ```sql ```` … ```` ``` ````).
:func:`unwrap_report` is the report's form; :func:`unwrap_json` the JSON answer's. Pure ``re``.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, field

__all__ = ["Unwrapped", "has_heading", "has_object", "unwrap", "unwrap_json", "unwrap_report"]

_REASONING = re.compile(r"<(think|thinking|reasoning|reflection)>.*?</\1>", re.I | re.S)
_OPEN_REASONING = re.compile(r"<(?:think|thinking|reasoning|reflection)>", re.I)
_CLOSE_REASONING = re.compile(r"</(?:think|thinking|reasoning|reflection)>", re.I)
_TAG_OPEN = re.compile(r"<(report|answer|json)>[ \t]*\n?", re.I)
_FENCE = re.compile(r"^[ \t]{0,3}(?P<run>`{3,}|~{3,})[ \t]*(?P<info>[^`\s]*)[^`]*$")
_HEADING = re.compile(r"^[ \t]{0,3}#{1,6}[ \t]+\S", re.M)
_WRAPPER_INFO = {"", "markdown", "md", "gfm", "text", "txt", "report", "json", "jsonc", "json5"}


def has_heading(text: str) -> bool:
    """A report must contain a Markdown heading."""
    return _HEADING.search(text) is not None


def has_object(text: str) -> bool:
    """A JSON answer must contain an object."""
    return "{" in text


@dataclass
class Unwrapped:
    """The answer's text and what was taken off it."""

    text: str
    removed: list[str] = field(default_factory=list)
    #: the fence around the answer was opened and never closed: the draft ends inside it
    unclosed_fence: bool = False
    #: the opening line of that unclosed fence (so a caller can keep the cut visible)
    fence_line: str = ""
    #: a reasoning block was opened and never closed: there is no answer after it
    unclosed_reasoning: bool = False


def unwrap(text: str, contains: Callable[[str], bool] = has_heading) -> Unwrapped:
    """``text`` without reasoning blocks, an echoed tag and a code fence around the whole answer; ``contains``
    says what the fenced part must hold (and the rest must not) for the fence to be a wrapper."""
    out = Unwrapped((text or "").replace("\r\n", "\n").replace("\r", "\n"))
    _drop_reasoning(out)
    _drop_tags(out)
    _drop_fence(out, contains)
    out.text = out.text.strip("\n")
    return out


def unwrap_report(text: str) -> str:
    """The Markdown report inside ``text`` (see :mod:`watchdog.verify.unwrap`)."""
    return unwrap(text).text


def unwrap_json(text: str) -> str:
    """The JSON answer inside ``text``: reasoning, echoed tags and a ```` ```json ```` fence removed."""
    return unwrap(text, has_object).text


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


def _drop_tags(out: Unwrapped) -> None:
    """An echoed ``<report>``/``<answer>``/``<json>``: what is before the first opening tag and after the last
    closing tag of the same name is chatter."""
    text = out.text
    opened = _TAG_OPEN.search(text)
    names = [opened.group(1).lower()] if opened else ["report", "answer", "json"]
    if opened:
        text = text[opened.end():]
        out.removed.append(f"<{names[0]}> tag")
    for name in names:
        closes = list(re.finditer(rf"\n?[ \t]*</{name}>", text, re.I))
        if closes:
            text = text[:closes[-1].start()]
            out.removed.append(f"</{name}> tag")
            break
    out.text = text


def _drop_fence(out: Unwrapped, contains: Callable[[str], bool]) -> None:
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
        if not contains("\n".join(inside)) or contains("\n".join(outside)):
            return
        out.text = "\n".join(inside)
        out.removed.append("code fence")
        out.unclosed_fence = end is None
        out.fence_line = line if end is None else ""
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
