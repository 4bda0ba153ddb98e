"""The ``file`` channel: the run folder under ``<dir>/<audit>/<UTC timestamp>/`` and ``latest`` beside it.

The run is always filed first (before any other delivery); a file channel whose folder is not the
one the run was filed in gets a copy.
"""

from __future__ import annotations

from pathlib import Path

from watchdog.delivery.base import DeliveryError, RunPackage
from watchdog.run.filing import RunFolder


class FileSender:
    kind = "file"

    def __init__(self, directory: Path):
        self.directory = directory

    def targets(self) -> list[str]:
        return [str(self.directory)]

    def send(self, package: RunPackage, target: str) -> None:
        audit_dir = Path(target) / package.audit
        if package.filing_error:  # nothing on disk to copy or point ``latest`` at
            raise DeliveryError(f"the run is not filed: {package.filing_error}")
        try:
            RunFolder(package.run_dir).copy_into(audit_dir)
        except OSError as exc:
            raise DeliveryError(f"cannot file the run into {audit_dir}: {exc.strerror or exc}") from None
