"""What the stub records about each request it receives (secret header values are masked)."""

from __future__ import annotations

from collections.abc import Mapping
from email.message import Message
from typing import Any

from .request_body import tool_names

#: Headers whose values are never recorded (stored as ``"present"``).
SECRET_HEADERS = frozenset({"authorization", "api-key", "x-api-key", "openai-api-key", "proxy-authorization"})


def mask_headers(headers: Mapping[str, str] | Message) -> dict[str, str]:
    """The headers with lower-cased names, secret headers' values replaced by ``"present"``."""
    return {k.lower(): ("present" if k.lower() in SECRET_HEADERS else v) for k, v in headers.items()}


def request_record(method: str, path: str, headers: Mapping[str, str] | Message, body: Any,
                   marker: str | None) -> dict[str, Any]:
    """The record of one request (see :class:`~watchdog.testing.openai_stub.StubOpenAI` for the keys).

    ``served`` starts as ``None``; the server fills it in once it knows what it answered."""
    safe_headers = mask_headers(headers)
    record: dict[str, Any] = {
        "method": method,
        "path": path,
        "headers": safe_headers,
        "authorization": "present" if "authorization" in safe_headers else None,
        "body": body,
        "marker": None,
        "model": None,
        "max_tokens": None,
        "max_completion_tokens": None,
        "temperature": None,
        "stream": False,
        "has_tools": False,
        "tool_names": [],
        "tool_choice": None,
        "has_response_format": False,
        "response_format_type": None,
        "served": None,
    }
    if isinstance(body, dict):
        rf = body.get("response_format")
        record.update(
            marker=marker,
            model=body.get("model"),
            max_tokens=body.get("max_tokens"),
            max_completion_tokens=body.get("max_completion_tokens"),
            temperature=body.get("temperature"),
            stream=bool(body.get("stream")),
            has_tools=bool(body.get("tools")),
            tool_names=tool_names(body),
            tool_choice=body.get("tool_choice"),
            has_response_format=rf is not None,
            response_format_type=rf.get("type") if isinstance(rf, dict) else None,
        )
    return record
