"""The ``file`` channel: the run folder under ``<dir>/<audit>/<UTC timestamp>/`` and ``latest`` beside it.

The run is always filed first (before any other delivery); a file channel whose folder is not the
one the run was filed in gets a copy.
"""

from __future__ import annotations

import shutil
from pathlib import Path

from watchdog.delivery.base import DeliveryError, RunPackage
from watchdog.run.filing import point_latest


class FileSender:
    kind = "file"

    def __init__(self, directory: Path):
        self.directory = directory

    def targets(self) -> list[str]:
        return [str(self.directory)]

    def send(self, package: RunPackage, target: str) -> None:
        audit_dir = Path(target) / package.audit
        destination = audit_dir / package.run_dir.name
        if package.filing_error:  # nothing on disk to copy or point ``latest`` at
            raise DeliveryError(f"the run is not filed: {package.filing_error}")
        try:
            if destination.resolve() != package.run_dir.resolve():
                shutil.copytree(package.run_dir, destination, dirs_exist_ok=True)
            point_latest(audit_dir, destination)
        except OSError as exc:
            raise DeliveryError(f"cannot file the run into {audit_dir}: {exc.strerror or exc}") from None
