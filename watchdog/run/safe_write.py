"""Where a run's files go when the chosen folder cannot take them.

The output folder is checked before any query runs (a path under a file, a folder that cannot
be written: a clear error, nothing scanned). If writing still fails after the scan (disk full,
folder removed), the findings are written to a rescue folder under the system's temporary folder
and the error says where, so the scan's work is never lost.
"""

from __future__ import annotations

import os
import tempfile
from pathlib import Path

from watchdog.errors import ConfigError, WatchdogError
from watchdog.findings import FindingsDoc


class OutputError(WatchdogError):
    """The findings could not be written where asked; ``rescued`` says where they went instead."""

    def __init__(self, message: str, rescued: Path | None = None):
        super().__init__(message)
        self.rescued = rescued


def check_out_dir(out_dir: Path) -> None:
    """Raise ConfigError when ``out_dir`` cannot become a writable folder (created if missing)."""
    for part in (out_dir, *out_dir.parents):
        if part.exists():
            if not part.is_dir():
                what = "is a file" if part == out_dir else f"is under {part}, which is a file"
                raise ConfigError(f"cannot write the output folder {out_dir}: it {what}; choose another --out")
            break
    try:
        out_dir.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise ConfigError(f"cannot create the output folder {out_dir}: {exc.strerror or exc}") from None
    if not os.access(out_dir, os.W_OK | os.X_OK):
        raise ConfigError(f"cannot write to the output folder {out_dir}: permission denied")


def write_findings(doc: FindingsDoc, out_dir: Path) -> Path:
    """Write ``findings.json`` in ``out_dir``; if that fails, in a rescue folder, then raise OutputError."""
    target = out_dir / "findings.json"
    try:
        return doc.write(target)
    except OSError as exc:
        reason = exc.strerror or str(exc)
    rescue = Path(tempfile.mkdtemp(prefix="watchdog-rescue-"))
    try:
        saved = doc.write(rescue / "findings.json")
    except OSError as exc:
        raise OutputError(f"cannot write {target} ({reason}) nor a rescue copy ({exc.strerror or exc})") from None
    raise OutputError(f"cannot write {target} ({reason}); the findings were saved to {saved}", saved)
