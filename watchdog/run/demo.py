"""``watchdog demo``: build the demo CRM database and run the demo audit from the configuration."""

from __future__ import annotations

from pathlib import Path

from sqlalchemy.engine import make_url

from watchdog.errors import ConfigError
from watchdog.run.audit import AuditRun, execute_audit
from watchdog.run.demo_data import build_demo_database
from watchdog.scan.scanner import Progress
from watchdog.settings import Settings

DEMO_AUDIT = "demo"


def run_demo(settings: Settings, *, on_progress: Progress | None = None) -> tuple[AuditRun, dict]:
    """(Re)build the demo SQLite database where the demo audit's database URL points, then run the audit
    exactly as ``watchdog run demo`` does (filed, recorded in the history, delivered)."""
    audit = settings.audit(DEMO_AUDIT)
    url = make_url(settings.database_url(audit.database))
    if url.get_backend_name() != "sqlite" or not url.database:
        raise ConfigError(f"the demo builds a SQLite database, but databases.{audit.database}.url is not a SQLite "
                          "file URL; unset CRM_DATABASE_URL or point it at sqlite:///path/to/crm.db")
    planted = build_demo_database(Path(url.database))
    return execute_audit(settings, DEMO_AUDIT, on_progress=on_progress), planted
