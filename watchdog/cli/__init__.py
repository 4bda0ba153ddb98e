"""The ``watchdog`` command line: a thin shell over the library (``watchdog.cli:main`` is the entry point).

``watchdog --version`` is answered here, before click and the commands are imported (the same line
click's version option prints); everything else goes to :func:`watchdog.cli.main.main`.
"""

from __future__ import annotations

import sys
import types

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

__all__ = ["cli", "main", "run"]


def main(argv: list[str] | None = None) -> None:
    args = sys.argv[1:] if argv is None else argv
    if args == ["--version"]:
        from watchdog import __version__

        sys.stdout.write(f"watchdog, version {__version__}\n")
        return
    from watchdog.cli.main import main as run_command

    run_command(argv)


def run() -> None:
    """The ``watchdog`` program (the console script and ``python -m watchdog``): :func:`main`, then a quick
    exit. It does what the interpreter's own exit does that matters -- waits for non-daemon threads, runs
    the atexit handlers (SQLite/DuckDB workers killed, logs flushed), flushes stdout and stderr -- and ends
    the process with ``os._exit``, skipping the teardown of every imported module (about 20 ms, a tenth of
    a small scan). :func:`main` itself, called in a process that goes on, exits the usual way."""
    try:
        main()
        code: Any = 0
    except SystemExit as exc:
        code = exc.code
    _exit_now(code)


def _exit_now(code: Any) -> None:
    import atexit
    import os
    import threading

    if code is None:
        status = 0
    elif isinstance(code, int):
        status = code
    else:  # sys.exit("message"): printed, status 1, as the interpreter does
        sys.stderr.write(f"{code}\n")
        status = 1
    for thread in threading.enumerate():
        if thread is not threading.main_thread() and not thread.daemon:
            thread.join()
    atexit._run_exitfuncs()
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except (OSError, ValueError):  # a closed pipe: the interpreter's own exit status for it
            status = status or 120
    os._exit(status)


class _Package(types.ModuleType):
    """Importing the submodule ``watchdog.cli.main`` would rebind this package's ``main`` to it; the
    entry point ``watchdog.cli:main`` must stay the function (as when the submodule was imported here)."""

    @property
    def main(self) -> Any:
        return _entry

    @main.setter
    def main(self, value: Any) -> None:
        pass


def __getattr__(name: str) -> Any:
    if name == "cli":
        from watchdog.cli.app import cli

        return cli
    raise AttributeError(f"module 'watchdog.cli' has no attribute {name!r}")


_entry = main
sys.modules[__name__].__class__ = _Package
