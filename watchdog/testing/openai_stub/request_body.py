"""Reading the parts of a Chat Completions request body the stub cares about
(messages' text, offered tools, forced tool)."""

from __future__ import annotations

from typing import Any


def message_text(message: Any) -> str:
    """The text of one message (string content, or the text parts of list content)."""
    if not isinstance(message, dict):
        return ""
    content = message.get("content")
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "\n".join(p["text"] for p in content if isinstance(p, dict) and isinstance(p.get("text"), str))
    return ""


def messages_text(body: dict, roles: tuple[str, ...] | None = None) -> str:
    """The text of all messages (or only those whose role is in ``roles``), one per line."""
    messages = body.get("messages")
    if not isinstance(messages, list):
        messages = []
    return "\n".join(message_text(m) for m in messages
                     if roles is None or (isinstance(m, dict) and m.get("role") in roles))


def tool_names(body: dict) -> list[str]:
    """The names of the tools the request offers, in order."""
    names = []
    for tool in body.get("tools") or []:
        if isinstance(tool, dict):
            fn = tool.get("function")
            if not isinstance(fn, dict):
                fn = {}
            names.append(fn.get("name") or tool.get("name") or tool.get("type") or "?")
    return names


def forced_tool(body: dict) -> str | None:
    """The tool that ``tool_choice`` forces, if any."""
    choice = body.get("tool_choice")
    if isinstance(choice, dict):
        fn = choice.get("function")
        if isinstance(fn, dict) and fn.get("name"):
            return fn["name"]
        return choice.get("name")
    return None
