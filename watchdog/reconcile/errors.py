"""The reconciler's errors (beside it, under the one root)."""

from __future__ import annotations

from watchdog.errors import Terminal, Transient, WatchdogError


class ReconcileError(WatchdogError, Terminal):
    """Two tables cannot be compared as asked: a missing key or column, types that cannot mean the same."""


class ReconcileTimeout(WatchdogError, Transient):
    """The comparison passed its deadline; the statement running then was cancelled by the sandbox."""
