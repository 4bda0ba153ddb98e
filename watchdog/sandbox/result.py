"""What a sandboxed query returns."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any


@dataclass
class QueryResult:
    """Rows of one read, capped by ``max_rows`` and ``max_bytes`` (``truncated`` says if the cap cut it)."""

    columns: list[str]
    rows: list[tuple[Any, ...]]
    truncated: bool = False
    elapsed_s: float = 0.0
    sql: str = field(default="", repr=False)

    def scalar(self) -> Any:
        """The first column of the first row (None when there is no row)."""
        return self.rows[0][0] if self.rows and self.rows[0] else None

    def as_dicts(self) -> list[dict[str, Any]]:
        return [dict(zip(self.columns, row, strict=False)) for row in self.rows]
