"""Exit codes of ``watchdog scan`` (and of every command that runs checks): a contract for CI gates."""

from enum import IntEnum


class ExitCode(IntEnum):
    """0 all passed, 1 a check failed, 2 only warnings, 3 an error. Error wins over fail, fail over warn."""

    OK = 0
    FAILED = 1
    WARNED = 2
    ERROR = 3
