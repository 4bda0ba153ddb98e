"""``watchdog demo``: build the demo CRM database and run the demo audit from the configuration."""

from __future__ import annotations

from sqlalchemy.engine import make_url

from watchdog.demo_data import build_demo_database
from watchdog.errors import ConfigError
from watchdog.runner import ScanOutcome, run_audit
from watchdog.scanner import Progress
from watchdog.settings import Settings

DEMO_AUDIT = "demo"


def run_demo(settings: Settings, *, on_progress: Progress | None = None) -> tuple[ScanOutcome, dict]:
    """(Re)build the demo SQLite database where the demo audit's database URL points, then run the audit."""
    audit = settings.audit(DEMO_AUDIT)
    url = make_url(settings.database_url(audit.database))
    if url.get_backend_name() != "sqlite" or not url.database:
        raise ConfigError(f"the demo builds a SQLite database, but databases.{audit.database}.url is not a SQLite "
                          "file URL; unset CRM_DATABASE_URL or point it at sqlite:///path/to/crm.db")
    from pathlib import Path

    planted = build_demo_database(Path(url.database))
    return run_audit(settings, DEMO_AUDIT, on_progress=on_progress), planted
