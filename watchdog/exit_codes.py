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


#: a run's status word, the one vocabulary of audit.json, the run history and deliveries (scans and audits alike)
RUN_STATUS = {ExitCode.OK: "passed", ExitCode.WARNED: "warned", ExitCode.FAILED: "failed", ExitCode.ERROR: "error"}
#: status words written by earlier versions: the audit.json of a scan said "ok" for "passed"
OLD_STATUS_WORDS = {"ok": "passed"}


def run_status(code: ExitCode) -> str:
    """passed | warned | failed | error (an interrupted run is ``error`` here; the history says ``interrupted``)."""
    return RUN_STATUS.get(code, "error")


def read_status(word: str | None) -> str | None:
    """A status word read back from a file (audit.json): today's word for one an earlier version wrote."""
    return OLD_STATUS_WORDS.get(word, word) if word is not None else None


def exit_code_of(word: str | None) -> ExitCode:
    """The exit code a status word stands for (old words included; anything else is an error)."""
    by_word = {w: c for c, w in RUN_STATUS.items()}
    return by_word.get(read_status(word) or "", ExitCode.ERROR)
