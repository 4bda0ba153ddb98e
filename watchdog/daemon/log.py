"""The daemon's logging: one line per event on stderr, UTC time stamps, secrets masked."""

from __future__ import annotations

import logging
import time

from watchdog.redact import RedactingFilter


class _DropMessages(logging.Filter):
    """Drop APScheduler's own lines for what the scheduler's job-event listener already says in one line."""

    def __init__(self, *needles: str):
        super().__init__()
        self.needles = needles

    def filter(self, record: logging.LogRecord) -> bool:
        return not any(needle in str(record.msg) for needle in self.needles)


class _UtcFormatter(logging.Formatter):
    def formatTime(self, record: logging.LogRecord, datefmt: str | None = None) -> str:  # noqa: N802
        return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(record.created))


def configure_logging(debug: bool = False) -> None:
    """Daemon logging: one line per event on stderr, UTC time stamps, secrets masked;
    ``watchdog.scheduler`` and ``watchdog.ui`` at INFO (DEBUG with ``--debug``)."""
    root = logging.getLogger()
    if not root.handlers:
        stderr = logging.StreamHandler()
        stderr.addFilter(RedactingFilter())
        root.addHandler(stderr)
    for handler in root.handlers:
        handler.setFormatter(_UtcFormatter("%(asctime)s %(levelname)s %(name)s: %(message)s"))
    for name in ("watchdog.scheduler", "watchdog.ui"):
        logging.getLogger(name).setLevel(logging.DEBUG if debug else logging.INFO)
    for name, needle in (("apscheduler.scheduler", "maximum number of running instances"),
                         ("apscheduler.executors.default", "was missed by")):
        target = logging.getLogger(name)
        if not any(isinstance(f, _DropMessages) for f in target.filters):
            target.addFilter(_DropMessages(needle))
