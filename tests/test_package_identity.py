"""`import watchdog` must be this repository's package, never PyPI's file-system `watchdog`."""

from pathlib import Path

import watchdog

REPO = Path(__file__).resolve().parent.parent


def test_import_watchdog_resolves_to_this_repository():
    assert Path(watchdog.__file__).resolve().parent == REPO / "watchdog"


def test_pypi_watchdog_is_not_installed_beside_it():
    from importlib.metadata import PackageNotFoundError, distribution

    try:
        dist = distribution("watchdog")
    except PackageNotFoundError:
        return
    raise AssertionError(f"the unrelated PyPI package 'watchdog' {dist.version} is installed; uninstall it")
