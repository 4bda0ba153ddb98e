"""Data written by earlier versions that names functions by import path still loads.

APScheduler keeps each job's function as text (``module:function``) in the job store of the history database and
resolves it when the daemon starts; job stores written before the daemon moved to ``watchdog.daemon`` name
``watchdog.scheduler:...`` (kept by ``watchdog/scheduler.py`` for exactly this data).
"""

from __future__ import annotations

from pathlib import Path

from apscheduler.jobstores.sqlalchemy import SQLAlchemyJobStore

from watchdog.daemon import jobs
from watchdog.daemon.apscheduler_wiring import JOBS_TABLE, create_scheduler
from watchdog.settings import load_settings


def test_a_job_store_written_with_the_old_references_loads(tmp_path: Path) -> None:
    config = tmp_path / "watchdog.yaml"
    config.write_text('history: {url: "sqlite:///history.db"}\ndatabases:\n  shop: {url: "sqlite:///shop.db"}\n')
    settings = load_settings(config)
    scheduler = create_scheduler(settings)
    scheduler.start(paused=True)
    scheduler.add_job("watchdog.scheduler:run_audit_job", "interval", args=[str(config), "old"], id="audit:old",
                      hours=1)
    scheduler.add_job("watchdog.scheduler:flush_outbox_job", "interval", args=[str(config)], id="outbox", hours=1)
    scheduler.shutdown(wait=False)

    # a fresh store reads the rows back as the daemon does at start: the stored text resolves to today's functions
    from watchdog.daemon.apscheduler_wiring import _jobstore_engine

    store = SQLAlchemyJobStore(engine=_jobstore_engine(settings.history_url()), tablename=JOBS_TABLE)
    store.start(None, "default")  # type: ignore[arg-type]
    loaded = {job.id: job for job in store.get_all_jobs()}
    assert loaded["audit:old"].func_ref == "watchdog.scheduler:run_audit_job"
    assert loaded["audit:old"].func is jobs.run_audit_job
    assert loaded["outbox"].func is jobs.flush_outbox_job
    store.shutdown()
