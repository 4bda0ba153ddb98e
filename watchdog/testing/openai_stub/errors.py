"""The error raised when the stub itself cannot answer a request."""

from __future__ import annotations


class StubError(Exception):
    """The stub cannot answer a request (answered 500 with this message)."""
