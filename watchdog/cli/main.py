"""Entry point of the ``watchdog`` command: registers every command, turns every error into one line.

Imports one way: main -> command modules (scan, audits, report, daemon) -> app.
Errors become one clear line (``error: ...`` / ``refused: ...``) and exit code 3, never a
traceback unless ``--debug`` is given.
"""

from __future__ import annotations

import signal
import sys
import threading
import traceback
from types import FrameType
from typing import NoReturn

import click

from watchdog.cli import console
from watchdog.cli.app import cli  # its commands' modules are imported on first lookup (app.COMMAND_MODULES)
from watchdog.errors import Interrupted, QueryRefused, ReportInterrupted, WatchdogError
from watchdog.exit_codes import ExitCode
from watchdog.redact import redact

__all__ = ["cli", "main"]


def main(argv: list[str] | None = None) -> None:
    """Entry point: run the CLI, turning every error into one line and exit code 3."""
    debug = "--debug" in (argv if argv is not None else sys.argv[1:])
    _sigterm_interrupts()
    try:
        cli.main(args=argv, prog_name="watchdog", standalone_mode=False)
    except click.exceptions.Exit as exc:
        sys.exit(exc.exit_code)
    except click.exceptions.Abort as exc:  # click turns Ctrl-C into Abort: it is still an interrupt
        cause = exc.__cause__
        if isinstance(cause, KeyboardInterrupt):
            _interrupted(cause)
        console.error_line("error", "aborted")
        sys.exit(int(ExitCode.ERROR))
    except click.ClickException as exc:  # usage errors exit 3, not click's 2 (2 means "warnings")
        console.error_line("error", exc.format_message())
        sys.exit(int(ExitCode.ERROR))
    except QueryRefused as exc:
        if debug:
            _traceback_and_exit()
        console.error_line("refused", exc)
        sys.exit(int(ExitCode.ERROR))
    except WatchdogError as exc:
        if debug:
            _traceback_and_exit()
        console.error_line(exc.prefix, exc)
        sys.exit(int(ExitCode.ERROR))
    except KeyboardInterrupt as exc:
        _interrupted(exc)
    except Exception as exc:  # a bug: still one line, with the way to see more
        if debug:
            _traceback_and_exit()
        console.error_line("error", f"unexpected {type(exc).__name__}: {redact(exc)} (run with --debug for details)")
        sys.exit(int(ExitCode.ERROR))


def _sigterm_interrupts() -> None:
    """SIGTERM ends a run the way Ctrl-C does: recorded as interrupted, one line (the daemon installs its own)."""
    if threading.current_thread() is threading.main_thread():
        signal.signal(signal.SIGTERM, _terminated)


def _terminated(signum: int, frame: FrameType | None) -> None:
    raise KeyboardInterrupt("SIGTERM")


def _interrupted(exc: KeyboardInterrupt) -> None:
    """Ctrl-C: say what was kept (a scan writes the findings of the checks that finished), exit 130."""
    by = " by SIGTERM" if exc.args and exc.args[0] == "SIGTERM" else ""
    if isinstance(exc, ReportInterrupted):
        console.error_line("error", f"interrupted{by} during the LLM report of run {exc.run_id}; its findings are "
                                    f"filed and its progress is checkpointed: continue it with "
                                    f"`watchdog resume {exc.run_id}`")
    elif isinstance(exc, Interrupted) and exc.saved_to:
        console.error_line("error", f"interrupted (Ctrl-C); the findings of the checks that finished were written "
                                    f"to {exc.saved_to}, the rest are marked not run")
    else:
        console.error_line("error", "interrupted" + by)
    sys.exit(int(ExitCode.INTERRUPTED))


def _traceback_and_exit() -> NoReturn:
    """``--debug``: the whole traceback on stderr, secrets masked like every other output; exit 3."""
    sys.stderr.write(redact(traceback.format_exc()))
    sys.exit(int(ExitCode.ERROR))
