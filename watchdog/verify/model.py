"""What :func:`~watchdog.verify.verify_fn` returns, and the collector that builds it."""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, Field

__all__ = ["BadItem", "Results", "Verification"]


class BadItem(BaseModel):
    """One thing the report gets wrong."""

    finding: str | None = Field(default=None, description="the finding's name; null for report-level items")
    says: str = Field(description="what the report claims, as written")
    actual: str = Field(description="the true value, as text")
    message: str = Field(description="one sentence for the fix prompt")


class Verification(BaseModel):
    """The result of :func:`~watchdog.verify.verify_fn`."""

    ok: list[str] = Field(default_factory=list)
    bad: list[BadItem] = Field(default_factory=list)

    @property
    def passed(self) -> bool:
        return not self.bad

    def to_json_dict(self) -> dict[str, Any]:
        return {"passed": self.passed, "ok": list(self.ok), "bad": [item.model_dump() for item in self.bad]}


class Results:
    """What one verification has found so far: matches, bad items (each once), and which findings the report
    names, exactly or (as lower-case texts with their context tables) possibly loosely."""

    def __init__(self) -> None:
        self.ok: list[str] = []
        self.bad: list[BadItem] = []
        self.mentioned: set[str] = set()
        self.coverage_texts: list[tuple[str, frozenset[str]]] = []
        self._seen_bad: set[tuple[str | None, str, str]] = set()
        self._seen_ok: set[str] = set()

    def add_ok(self, text: str) -> None:
        if text not in self._seen_ok:
            self._seen_ok.add(text)
            self.ok.append(text)

    def add_bad(self, finding: str | None, says: str, actual: str, message: str) -> None:
        key = (finding, says, actual)
        if key not in self._seen_bad:
            self._seen_bad.add(key)
            self.bad.append(BadItem(finding=finding, says=says, actual=actual, message=message))

    def verification(self) -> Verification:
        return Verification(ok=self.ok, bad=self.bad)
