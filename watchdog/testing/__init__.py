"""Test doubles shipped with watchdog (used by the test suite and by the benchmarks).

``watchdog.testing.openai_stub`` is a real, scripted, OpenAI-compatible HTTP server
(standard library only) bound to 127.0.0.1, for exercising LLM clients without a network.
The names below are re-exported lazily, so ``python -m watchdog.testing.openai_stub`` runs cleanly.
"""

from __future__ import annotations

from typing import Any

__all__ = ["Step", "StubOpenAI", "drop", "error", "reply", "slow", "structured", "tool_call"]


def __getattr__(name: str) -> Any:
    if name in __all__:
        from watchdog.testing import openai_stub

        return getattr(openai_stub, name)
    raise AttributeError(f"module 'watchdog.testing' has no attribute {name!r}")
