"""The ``watchdog`` program's entry point, under a name PyPI's unrelated ``watchdog`` cannot take.

The import name ``watchdog`` is shared with the file-system events library of that name (a dependency of
Dagster, mkdocs, Streamlit and Jupyter tooling). Where that one is what ``import watchdog`` finds, the
command, ``python -m watchdog_dq`` and :func:`require` say so in one line (what was found, how to install
watchdog-dq on its own) instead of failing with a traceback deep in an import.
"""

from __future__ import annotations

import sys
from types import ModuleType

DISTRIBUTION = "watchdog-dq"


class WrongWatchdog(ImportError):
    """``import watchdog`` found a package that is not watchdog-dq."""


def problem() -> str | None:
    """None when ``import watchdog`` is this distribution's package; else the one line that says what it found."""
    try:
        import watchdog
    except ImportError as exc:
        return f"cannot import watchdog ({exc}); reinstall {DISTRIBUTION}"
    if getattr(watchdog, "__distribution__", None) == DISTRIBUTION:
        return None
    where = getattr(watchdog, "__file__", None) or ", ".join(getattr(watchdog, "__path__", [])) or "?"
    version = _version_of()
    source = _source_folder() or DISTRIBUTION
    return (f"`import watchdog` finds another package, not {DISTRIBUTION}: {where}"
            f"{f' (watchdog {version}, the file-system events library)' if version else ''}; install {DISTRIBUTION} "
            f"on its own: `pipx install {source}`, `uv tool install {source}`, or a virtual environment "
            "(or container) of its own")


def require() -> ModuleType:
    """The ``watchdog`` package of watchdog-dq (what ``import watchdog`` should give); raises
    :class:`WrongWatchdog` with the one line of :func:`problem` when another ``watchdog`` is found."""
    found = problem()
    if found is not None:
        raise WrongWatchdog(found)
    import watchdog

    return watchdog


def run() -> None:
    """The console script: the command line, or the one line saying which ``watchdog`` was found (exit 3)."""
    found = problem()
    if found is not None:
        sys.stderr.write(f"error: {found}\n")
        sys.exit(3)
    from watchdog.cli import run as command

    command()


def _source_folder() -> str | None:
    """The project folder this module was installed from (an editable install), if it is one."""
    from pathlib import Path

    here = Path(__file__).resolve().parent
    return str(here) if (here / "pyproject.toml").is_file() and (here / "watchdog").is_dir() else None


def _version_of() -> str | None:
    """The other package's version: its ``watchdog.version`` module, else its installed metadata."""
    try:
        from watchdog.version import VERSION_STRING  # type: ignore[import-not-found]

        return str(VERSION_STRING)
    except ImportError:
        pass
    try:
        from importlib.metadata import version

        return version("watchdog")
    except Exception:  # not installed as a distribution (a folder on sys.path)
        return None


if __name__ == "__main__":
    run()
