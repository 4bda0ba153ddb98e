"""Exit codes of ``watchdog scan`` (and of every command that runs checks): a contract for CI gates."""

from enum import IntEnum


class ExitCode(IntEnum):
    """0 all passed, 1 a check failed, 2 only warnings, 3 an error. Error wins over fail, fail over warn.

    130 (128 + SIGINT) means the command was interrupted, or a daemon stop did not wait for running audits.
    """

    OK = 0
    FAILED = 1
    WARNED = 2
    ERROR = 3
    INTERRUPTED = 130
