"""The sandbox: a read-only query tool, the only door from watchdog to a user database.

The names below are imported on first use, so that the SQLite worker process
(``watchdog.sandbox.sqlite_worker``) starts without loading SQLAlchemy or sqlglot.
"""

from __future__ import annotations

from importlib import import_module

TYPE_CHECKING = False  # not typing.TYPE_CHECKING: importing typing would slow the SQLite worker's start
if TYPE_CHECKING:
    from typing import Any

    from watchdog.sandbox.policy import ReadOnlyPolicy, sqlglot_dialect
    from watchdog.sandbox.result import QueryResult
    from watchdog.sandbox.sandbox import Sandbox

__all__ = ["QueryResult", "ReadOnlyPolicy", "Sandbox", "sqlglot_dialect"]

_HOMES = {
    "QueryResult": "watchdog.sandbox.result",
    "ReadOnlyPolicy": "watchdog.sandbox.policy",
    "sqlglot_dialect": "watchdog.sandbox.policy",
    "Sandbox": "watchdog.sandbox.sandbox",
}


def __getattr__(name: str) -> Any:
    if name in _HOMES:
        value = getattr(import_module(_HOMES[name]), name)
        globals()[name] = value
        return value
    raise AttributeError(f"module 'watchdog.sandbox' has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(__all__))
