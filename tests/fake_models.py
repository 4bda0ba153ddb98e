"""In-process fake chat models for unit tests of the report graph's nodes.

langchain-core's fakes don't implement ``bind_tools`` or ``with_structured_output``; these do:
``bind_tools`` returns the model itself and ``with_structured_output`` answers from a scripted list.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Iterator
from typing import Any

from langchain_core.language_models.fake_chat_models import GenericFakeChatModel
from langchain_core.messages import AIMessage, AIMessageChunk
from langchain_core.runnables import RunnableLambda
from pydantic import PrivateAttr


def ai(text: str = "", *, tool_calls: list[dict[str, Any]] | None = None, tokens: tuple[int, int] = (10, 5),
       finish_reason: str = "stop") -> AIMessage:
    usage = {"input_tokens": tokens[0], "output_tokens": tokens[1], "total_tokens": sum(tokens)}
    return AIMessage(content=text, tool_calls=tool_calls or [], usage_metadata=usage,
                     response_metadata={"finish_reason": "tool_calls" if tool_calls else finish_reason})


class ScriptedChat(GenericFakeChatModel):
    """Answers with the scripted messages in order; an Exception in the script is raised instead."""

    reviews: list[Any] = []
    calls: list[Any] = []
    _script: list[Any] = PrivateAttr(default_factory=list)

    def __init__(self, script: Iterable[Any], reviews: Iterable[dict[str, Any]] = (), **kwargs: Any):
        super().__init__(messages=iter(()), **kwargs)
        self._script = list(script)
        self.reviews = list(reviews)
        self.calls = []

    def invoke(self, input: Any, config: Any = None, **kwargs: Any) -> AIMessage:  # noqa: A002
        self.calls.append(input)
        if not self._script:
            raise AssertionError("the fake model's script ran out")
        step = self._script.pop(0)
        if isinstance(step, BaseException):
            raise step
        return step if isinstance(step, AIMessage) else ai(str(step))

    def stream(self, input: Any, config: Any = None, **kwargs: Any) -> Iterator[AIMessageChunk]:  # noqa: A002
        """One chunk with the whole scripted answer; a request for JSON (the review) answers from ``reviews``."""
        if "response_format" in (kwargs.get("extra_body") or {}) and self.reviews:
            self.calls.append(input)
            step = self.reviews.pop(0)
            if isinstance(step, BaseException):
                raise step
            message = step if isinstance(step, AIMessage) else ai(json.dumps(step), tokens=(7, 3))
        else:
            message = self.invoke(input)
        yield AIMessageChunk(content=message.content, usage_metadata=message.usage_metadata,
                             response_metadata=message.response_metadata,
                             tool_call_chunks=[{"name": c["name"], "args": json.dumps(c["args"]), "id": c["id"],
                                                "index": i, "type": "tool_call_chunk"}
                                               for i, c in enumerate(message.tool_calls)])

    def bind_tools(self, tools: Any, **kwargs: Any) -> ScriptedChat:
        return self

    def with_structured_output(self, schema: Any, *, include_raw: bool = False, **kwargs: Any) -> Any:
        def answer(messages: Any) -> Any:
            self.calls.append(messages)
            step = self.reviews.pop(0)
            if isinstance(step, BaseException):
                raise step
            parsed = schema(**step)
            raw = ai("", tokens=(7, 3))
            return {"raw": raw, "parsed": parsed, "parsing_error": None} if include_raw else parsed

        return RunnableLambda(answer)
