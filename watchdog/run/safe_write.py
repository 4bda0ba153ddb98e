"""Where a run's files go when the chosen folder cannot take them.

The output folder is checked before any query runs (a path under a file, a folder that cannot
be written: a clear error, nothing scanned). If writing still fails after the scan (disk full,
folder removed), the findings are written to a rescue folder under the system's temporary folder
and the error says where, so the scan's work is never lost.
"""

from __future__ import annotations

import os
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


def rescue_findings(doc: FindingsDoc, target: Path, failure: OSError) -> OutputError:
    """``target`` could not be written (``failure``): write the findings to a rescue folder and return the
    OutputError that says where they are."""
    reason = failure.strerror or str(failure)
    try:
        import tempfile  # only when the findings must be rescued

        saved = doc.write(Path(tempfile.mkdtemp(prefix="watchdog-rescue-")) / "findings.json")
    except OSError as exc:
        return OutputError(f"cannot write {target} ({reason}) nor a rescue copy ({exc.strerror or exc})")
    return OutputError(f"cannot write {target} ({reason}); the findings were saved to {saved}", saved)
