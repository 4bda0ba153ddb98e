"""Reconciliation: does a table on one database match its copy on another?

:func:`diff_tables` compares two tables through two read-only sandboxes by checksum bisection
(:mod:`watchdog.reconcile.bisect`) over a canonical row form that means the same on every engine
(:mod:`watchdog.reconcile.canonical`); :func:`compare_metrics` compares a few aggregates only. The
``watchdog diff`` command and the ``reconcile`` check type are thin shells over these.
"""

from watchdog.reconcile.diff import DiffResult, DiffSpec, diff_tables
from watchdog.reconcile.errors import ReconcileError, ReconcileTimeout

__all__ = ["DiffResult", "DiffSpec", "ReconcileError", "ReconcileTimeout", "diff_tables"]
