"""Kept for persisted data: APScheduler job stores (the ``wd_apscheduler_jobs`` table of a history
database) written by earlier versions store each job's function as the text
``watchdog.scheduler:run_audit_job`` or ``watchdog.scheduler:flush_outbox_job`` and resolve it when
the daemon loads them. The daemon lives in :mod:`watchdog.daemon`; ``tests/test_stored_references.py``
loads such a job store."""

from watchdog.daemon.jobs import flush_outbox_job, run_audit_job

__all__ = ["flush_outbox_job", "run_audit_job"]
