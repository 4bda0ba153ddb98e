"""Choosing the step that answers a request: per-marker queues, ``when=`` matchers and what
happens when a queue runs dry."""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence

from .errors import StubError
from .request_body import messages_text
from .steps import Matcher, Step, as_step

#: Any ``[role:...]`` tag (recorded as the request's marker even when no queue is configured for it).
ROLE_MARKER = re.compile(r"\[role:[^\]\s]+\]")


def matches(matcher: Matcher, body: dict) -> bool:
    """Whether ``matcher`` (a step's ``when=``) accepts the request ``body``."""
    if matcher is None:
        return True
    try:
        if isinstance(matcher, str):
            return matcher in messages_text(body)
        return bool(matcher(body))
    except Exception:  # noqa: BLE001 - a failing predicate just does not match
        return False


def find_marker(body: dict, markers: Sequence[str]) -> tuple[str | None, bool]:
    """(marker, known): a configured marker if one occurs, else any ``[role:...]`` tag.

    System/developer messages are searched first, then all messages; the earliest occurrence wins."""
    for text in (messages_text(body, ("system", "developer")), messages_text(body)):
        hits = [(text.find(m), i, m) for i, m in enumerate(markers) if m and m in text]
        if hits:
            return min(hits)[2], True
    for text in (messages_text(body, ("system", "developer")), messages_text(body)):
        found = ROLE_MARKER.search(text)
        if found:
            return found.group(0), False
    return None, False


class StepQueue:
    """The pending steps of one queue (the FIFO script, or one marker's queue)."""

    def __init__(self, name: str, steps: Iterable[Step | str]):
        self.name = name
        self.pending: list[Step] = [as_step(s) for s in steps]
        self.last: Step | None = None
        self.served = 0

    def take(self, body: dict, when_empty: str) -> Step:
        """The step answering ``body``: the earliest pending step whose ``when`` accepts it, else the
        earliest pending step without ``when``; once exhausted, the last one again (``"repeat"``)."""
        chosen = None
        for i, step in enumerate(self.pending):
            if step.when is not None and matches(step.when, body):
                chosen = i
                break
        if chosen is None:
            chosen = next((i for i, s in enumerate(self.pending) if s.when is None), None)
        if chosen is not None:
            step = self.pending.pop(chosen)
            self.last = step
            self.served += 1
            return step
        if self.pending:
            raise StubError(f"stub: queue {self.name} has {len(self.pending)} pending step(s) "
                            f"but none accepts this request (their when= predicates all refused it)")
        if when_empty == "repeat" and self.last is not None:
            self.served += 1
            return self.last
        raise StubError(f"stub: queue {self.name} is exhausted after {self.served} step(s); "
                        f"no scripted answer left for this request")
