"""Test doubles shipped with watchdog (used by the test suite and by the benchmarks).

``watchdog.testing.openai_stub`` is a real, scripted, OpenAI-compatible HTTP server
(standard library only) bound to 127.0.0.1, for exercising LLM clients without a network.
"""

from watchdog.testing.openai_stub import (
    Step,
    StubOpenAI,
    drop,
    error,
    reply,
    slow,
    structured,
    tool_call,
)

__all__ = ["Step", "StubOpenAI", "drop", "error", "reply", "slow", "structured", "tool_call"]
