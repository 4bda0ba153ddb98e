"""The monitors as a stage of a run: read the catalogue, judge every table, never stop the run."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import TYPE_CHECKING

from watchdog.errors import SandboxError, WatchdogError
from watchdog.findings import Finding
from watchdog.monitor.catalogue import read_catalogue
from watchdog.monitor.judge import table_findings
from watchdog.redact import redact

if TYPE_CHECKING:
    from watchdog.monitor.config import MonitorConfig
    from watchdog.monitor.history import Past
    from watchdog.sandbox import Sandbox


def monitor_findings(box: Sandbox, config: MonitorConfig, past: Past | None = None,
                     now: datetime | None = None) -> tuple[list[Finding], int]:
    """The monitors' findings for this run, and the number of statements they sent. A catalogue that cannot
    be read gives one error finding, ``monitor``, saying why (the suites' findings are kept)."""
    now = now or datetime.now(UTC)
    try:
        catalogue = read_catalogue(box, config)
    except (SandboxError, WatchdogError) as exc:
        error = f"the catalogue could not be read: {redact(str(exc))}"
        return [Finding(name="monitor", check="monitor", status="error", severity=config.severity,
                        params={"monitor": True}, error=error)], 0
    return table_findings(catalogue, config, past or {}, now), catalogue.statements
