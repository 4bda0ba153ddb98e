"""The sandbox: a read-only query tool, the only door from watchdog to a user database."""

from watchdog.sandbox.policy import ReadOnlyPolicy, sqlglot_dialect
from watchdog.sandbox.result import QueryResult
from watchdog.sandbox.sandbox import Sandbox

__all__ = ["QueryResult", "ReadOnlyPolicy", "Sandbox", "sqlglot_dialect"]
