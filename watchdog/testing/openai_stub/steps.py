"""The scripted answers (*steps*) a stub serves, and the functions that build them.

Build steps with :func:`reply`, :func:`tool_call`, :func:`structured`, :func:`error`,
:func:`slow` and :func:`drop`; a script may also hold plain strings (see :func:`as_step`).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

#: Decides whether a step may answer a request: a predicate on the JSON body, a string that must
#: occur in the messages' text, or ``None`` (any request).
Matcher = Callable[[dict], bool] | str | None
#: Token usage to report: ``(prompt_tokens, completion_tokens)``, a mapping with those keys, or
#: ``None`` (rough word counts).
Usage = tuple[int, int] | Mapping[str, int] | None

#: (error type, error code) that :func:`error` reports by default for an HTTP status.
DEFAULT_ERROR_TYPES = {
    400: ("invalid_request_error", None),
    401: ("authentication_error", "invalid_api_key"),
    403: ("permission_denied_error", None),
    404: ("not_found_error", "model_not_found"),
    408: ("timeout_error", None),
    409: ("conflict_error", None),
    422: ("invalid_request_error", None),
    429: ("rate_limit_error", "rate_limit_exceeded"),
}


@dataclass(frozen=True)
class Step:
    """One scripted answer. Build steps with :func:`reply`, :func:`tool_call`, :func:`structured`,
    :func:`error`, :func:`slow` and :func:`drop` rather than directly."""

    kind: Literal["reply", "tool_call", "structured", "error", "slow", "drop"]
    text: str | None = None
    calls: tuple[tuple[str, Any, str | None], ...] = ()
    obj: Any = None
    name: str | None = None
    status: int = 200
    message: str = ""
    error_type: str | None = None
    code: str | None = None
    headers: tuple[tuple[str, str], ...] = ()
    seconds: float = 0.0
    then: Step | None = None
    usage: Usage = None
    finish_reason: str | None = None
    #: streamed answers: seconds between pieces, and a stall of ``pause_s`` after ``pause_after`` pieces
    piece_delay_s: float = 0.0
    pause_after: int | None = None
    pause_s: float = 0.0
    when: Matcher = field(default=None, compare=False)

    def describe(self) -> str:
        if self.kind == "slow":
            return f"slow({self.seconds:g})>" + (self.then.describe() if self.then else "reply")
        return self.kind


def reply(text: str = "", *, usage: Usage = None, finish_reason: str = "stop", piece_delay_s: float = 0.0,
          pause_after: int | None = None, pause_s: float = 0.0, when: Matcher = None) -> Step:
    """An assistant message with ``content=text``. ``usage=(prompt_tokens, completion_tokens)``;
    without it, rough word counts are reported. ``finish_reason="length"`` simulates truncation.

    Streamed (``"stream": true``), the text goes out in pieces of a few words: ``piece_delay_s`` between
    pieces (a slow but steady model), and one stall of ``pause_s`` after ``pause_after`` pieces (a model
    that stops sending mid-answer; the stub drops the connection if the client has gone)."""
    if piece_delay_s < 0 or pause_s < 0:
        raise ValueError("reply(): delays need seconds >= 0")
    return Step("reply", text=text, usage=usage, finish_reason=finish_reason, piece_delay_s=float(piece_delay_s),
                pause_after=pause_after, pause_s=float(pause_s), when=when)


def tool_call(
    name: str | Sequence[tuple[str, Any]],
    args: Mapping[str, Any] | str | None = None,
    *,
    content: str | None = None,
    usage: Usage = None,
    call_id: str | None = None,
    when: Matcher = None,
) -> Step:
    """An assistant message with ``tool_calls`` and ``finish_reason="tool_calls"``.

    ``tool_call("lookup", {"q": "x"})`` makes one call; ``tool_call([("a", {...}), ("b", {...})])``
    makes several. ``args`` may be a string, sent verbatim (e.g. to simulate malformed JSON)."""
    if isinstance(name, str):
        calls: tuple[tuple[str, Any, str | None], ...] = ((name, {} if args is None else args, call_id),)
    else:
        if args is not None:
            raise TypeError("tool_call([...]) takes its arguments inside the list of (name, args) pairs")
        calls = tuple((n, {} if a is None else a, None) for n, a in name)
        if not calls:
            raise ValueError("tool_call([]) needs at least one (name, args) pair")
    return Step("tool_call", text=content, calls=calls, usage=usage, finish_reason="tool_calls", when=when)


def structured(obj: Any, *, name: str | None = None, usage: Usage = None, when: Matcher = None) -> Step:
    """A structured answer carrying ``obj`` (a pydantic model instance, a dict/list, or JSON text).

    It adapts to the request: with ``response_format`` (``json_schema``/``json_object``) the JSON
    text is the message content; with tools, it becomes a call of the tool that ``tool_choice``
    forces, or of the only tool offered, or of the tool named ``name`` (or named like ``obj``'s
    class); with neither, the JSON text is the content."""
    return Step("structured", obj=obj, name=name, usage=usage, when=when)


def error(
    status: int,
    message: str = "scripted error",
    *,
    type: str | None = None,  # noqa: A002 - mirrors the OpenAI error field
    code: str | None = None,
    headers: Mapping[str, str] | None = None,
    when: Matcher = None,
) -> Step:
    """HTTP ``status`` with an OpenAI-style body ``{"error": {"message", "type", "param", "code"}}``.
    A 429 also carries ``retry-after: 0`` (unless ``headers`` sets it)."""
    fallback = ("server_error" if status >= 500 else "invalid_request_error", None)
    default_type, default_code = DEFAULT_ERROR_TYPES.get(status, fallback)
    hdrs = {k.lower(): str(v) for k, v in (headers or {}).items()}
    if status == 429:
        hdrs.setdefault("retry-after", "0")
        hdrs.setdefault("retry-after-ms", "1")  # the openai client ignores a 0 delay and backs off 0.5 s
    return Step("error", status=status, message=message, error_type=type or default_type,
                code=code if code is not None else default_code, headers=tuple(hdrs.items()), when=when)


def slow(seconds: float, then: Step | None = None, *, when: Matcher = None) -> Step:
    """Wait ``seconds`` (interrupted when the stub closes), then answer with ``then``
    (default: ``reply("slow reply")``)."""
    if seconds < 0:
        raise ValueError("slow(seconds) needs seconds >= 0")
    return Step("slow", seconds=float(seconds), then=then if then is not None else reply("slow reply"), when=when)


def drop(*, when: Matcher = None) -> Step:
    """Read the request, then shut the connection down without answering."""
    return Step("drop", when=when)


def as_step(step: Step | str) -> Step:
    """A script entry as a :class:`Step` (a plain string means ``reply(string)``)."""
    if isinstance(step, Step):
        return step
    if isinstance(step, str):
        return reply(step)
    raise TypeError(f"a script holds Step objects (reply(), tool_call(), ...), not {type(step).__name__}")
