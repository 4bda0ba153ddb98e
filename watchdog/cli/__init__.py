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

__all__ = ["cli", "main"]


def main(argv: list[str] | None = None) -> None:
    args = sys.argv[1:] if argv is None else argv
    if args == ["--version"]:
        from watchdog import __version__

        sys.stdout.write(f"watchdog, version {__version__}\n")
        return
    from watchdog.cli.main import main as run

    run(argv)


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
