"""The ``watchdog`` command line: a thin shell over the library (``watchdog.cli:main`` is the entry point)."""

from watchdog.cli.main import cli, main

__all__ = ["cli", "main"]
