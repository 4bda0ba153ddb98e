"""Building what the stub sends back: chat-completion JSON documents, SSE stream chunks, token
usage, OpenAI-style error bodies and model objects (pure data, no I/O)."""

from __future__ import annotations

import json
import re
import time
from collections.abc import Callable, Iterable, Mapping
from typing import Any

from .errors import StubError
from .request_body import forced_tool, messages_text, tool_names
from .steps import Step, Usage

#: Makes a fresh id from a prefix (``"call"``, ``"chatcmpl"``, ...): ``StubOpenAI._new_id``.
NewId = Callable[[str], str]

SYSTEM_FINGERPRINT = "fp_watchdog_stub"


# ---- JSON payloads -------------------------------------------------------------------------------


def to_json_value(obj: Any) -> Any:
    """``obj`` as plain JSON data (a pydantic model is dumped, JSON text is parsed)."""
    dump = getattr(obj, "model_dump", None)  # pydantic v2 model instance
    if callable(dump) and not isinstance(obj, type):
        return dump(mode="json")
    if isinstance(obj, (str, bytes)):
        return json.loads(obj)
    return obj


def json_text(obj: Any) -> str:
    """``obj`` as JSON text; a string is kept verbatim (lets a script send malformed JSON on purpose)."""
    if isinstance(obj, str):
        return obj
    return json.dumps(to_json_value(obj))


# ---- usage ---------------------------------------------------------------------------------------


def _words(text: str) -> int:
    return len(text.split())


def usage_block(given: Usage, body: dict, completion_text: str) -> dict[str, int]:
    """The ``usage`` object: the scripted counts, or rough word counts of prompt and completion."""
    if given is None:
        prompt, completion = max(1, _words(messages_text(body))), max(1, _words(completion_text))
    elif isinstance(given, Mapping):
        prompt, completion = int(given.get("prompt_tokens", 0)), int(given.get("completion_tokens", 0))
    else:
        prompt, completion = int(given[0]), int(given[1])
    return {"prompt_tokens": prompt, "completion_tokens": completion, "total_tokens": prompt + completion}


def completion_text(message: dict[str, Any]) -> str:
    """The text a message's completion tokens are counted on (content, else the tool arguments)."""
    return message.get("content") or "".join(c["function"]["arguments"] for c in message.get("tool_calls") or [])


# ---- the assistant message -----------------------------------------------------------------------


def tool_message(calls: Iterable[tuple[str, Any, str | None]], content: str | None, new_id: NewId) -> dict[str, Any]:
    """An assistant message calling the tools ``calls`` (``(name, args, call_id or None)``)."""
    return {
        "role": "assistant",
        "content": content,
        "refusal": None,
        "tool_calls": [
            {"id": cid or new_id("call"), "type": "function",
             "function": {"name": name,
                          "arguments": args if isinstance(args, str) else json.dumps(to_json_value(args))}}
            for name, args, cid in calls
        ],
    }


def completion_message(step: Step, body: dict, new_id: NewId) -> tuple[dict[str, Any], str]:
    """The assistant ``message`` (content/tool_calls) and the finish_reason for a success step
    (``reply``, ``tool_call`` or ``structured``)."""
    if step.kind == "reply":
        return {"role": "assistant", "content": step.text or "", "refusal": None}, step.finish_reason or "stop"
    if step.kind == "tool_call":
        return tool_message(step.calls, step.text, new_id), "tool_calls"
    # structured: adapt to what the request asked for
    text = json_text(step.obj)
    rf = body.get("response_format")
    tools = tool_names(body)
    if step.name is not None and tools:
        return tool_message(((step.name, text, None),), None, new_id), "tool_calls"
    if isinstance(rf, dict) and rf.get("type") in ("json_schema", "json_object"):
        return {"role": "assistant", "content": text, "refusal": None}, "stop"
    if tools:
        name = step.name or forced_tool(body)
        if name is None and len(tools) == 1:
            name = tools[0]
        if name is None and type(step.obj).__name__ in tools:
            name = type(step.obj).__name__
        if name is None:
            raise StubError(f"stub: structured() cannot tell which of the tools {tools} to call "
                            f"(none is forced by tool_choice); use structured(obj, name=...)")
        return tool_message(((name, text, None),), None, new_id), "tool_calls"
    return {"role": "assistant", "content": text, "refusal": None}, "stop"


# ---- documents and stream chunks -----------------------------------------------------------------


def chat_completion(completion_id: str, model: str, message: dict[str, Any], finish_reason: str,
                    usage: dict[str, int]) -> dict[str, Any]:
    """A whole ``chat.completion`` document (the non-streaming answer)."""
    return {
        "id": completion_id,
        "object": "chat.completion",
        "created": int(time.time()),
        "model": model,
        "system_fingerprint": SYSTEM_FINGERPRINT,
        "choices": [{"index": 0, "message": message, "logprobs": None, "finish_reason": finish_reason}],
        "usage": usage,
    }


def piece_text(text: str, words_per_piece: int = 3) -> list[str]:
    """``text`` cut into pieces of a few words (whitespace kept), as streamed content deltas."""
    tokens = re.findall(r"\s*\S+\s*|\s+", text)
    return ["".join(tokens[i:i + words_per_piece]) for i in range(0, len(tokens), words_per_piece)] or [text]


def stream_chunks(completion_id: str, model: str, message: dict[str, Any], finish_reason: str,
                  usage: dict[str, int], include_usage: bool) -> list[dict[str, Any]]:
    """The ``chat.completion.chunk`` events of a streamed answer, in order (without ``[DONE]``).

    With ``include_usage`` (``stream_options``), every chunk carries ``"usage": None`` and a last
    chunk without choices carries the usage."""
    base: dict[str, Any] = {"id": completion_id, "object": "chat.completion.chunk", "created": int(time.time()),
                            "model": model, "system_fingerprint": SYSTEM_FINGERPRINT}
    if include_usage:
        base["usage"] = None

    def chunk(delta: dict, finish: str | None = None) -> dict:
        return {**base, "choices": [{"index": 0, "delta": delta, "logprobs": None, "finish_reason": finish}]}

    events = [chunk({"role": "assistant", "content": "", "refusal": None})]
    if message.get("content"):
        events += [chunk({"content": piece}) for piece in piece_text(message["content"])]
    for i, call in enumerate(message.get("tool_calls") or []):
        events.append(chunk({"tool_calls": [{"index": i, "id": call["id"], "type": "function",
                                             "function": {"name": call["function"]["name"], "arguments": ""}}]}))
        arguments = call["function"]["arguments"]
        events.append(chunk({"tool_calls": [{"index": i, "function": {"arguments": arguments}}]}))
    events.append(chunk({}, finish_reason))
    if include_usage:
        events.append({**base, "choices": [], "usage": usage})
    return events


def error_body(message: str, type_: str, code: str | None = None) -> dict[str, Any]:
    """An OpenAI-style error document ``{"error": {"message", "type", "param", "code"}}``."""
    return {"error": {"message": message, "type": type_, "param": None, "code": code}}


def model_object(name: str) -> dict[str, Any]:
    """One entry of ``GET /v1/models``."""
    return {"id": name, "object": "model", "created": 0, "owned_by": "watchdog-stub"}
