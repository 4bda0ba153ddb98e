"""Compatibility shim: job stores written by earlier versions name ``watchdog.scheduler:run_audit_job`` and
``watchdog.scheduler:flush_outbox_job``. The daemon now lives in :mod:`watchdog.daemon`."""

from watchdog.daemon.jobs import flush_outbox_job, run_audit_job

__all__ = ["flush_outbox_job", "run_audit_job"]
