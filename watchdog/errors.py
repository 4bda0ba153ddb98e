"""The few exception types watchdog raises, so the CLI can turn each into one clear line.

Database errors are translated at the sandbox boundary into:

* ``QueryRefused``        -- policy said no (parser allowlist, or the database refused a write).
* ``QueryTimeout``        -- the statement ran past ``timeout_s`` and was cancelled on the server.
* ``QueryError``          -- the statement is wrong (bad SQL, unknown table or column): terminal.
* ``DatabaseUnavailable`` -- cannot reach the database (refused, gone away, missing file): transient.
"""

from __future__ import annotations


class WatchdogError(Exception):
    """Base class for every error watchdog reports to a user."""

    #: the word the CLI prints before the message (``error: ...``)
    prefix = "error"


class ConfigError(WatchdogError):
    """A configuration or check-suite file is invalid (names file, line and field)."""


class SandboxError(WatchdogError):
    """Base for errors raised by the read-only query sandbox."""


class QueryRefused(SandboxError):
    """The statement is not a single read, or it touches something with side effects."""

    prefix = "refused"


class QueryTimeout(SandboxError):
    """The statement ran longer than the time limit and was cancelled."""

    transient = True


class QueryError(SandboxError):
    """The database rejected the statement (syntax, unknown column...). Not worth retrying."""

    transient = False


class DatabaseUnavailable(SandboxError):
    """The database could not be reached. Worth retrying later."""

    transient = True


class Interrupted(KeyboardInterrupt):
    """Ctrl-C during a scan, after the checks that finished were kept: ``doc`` holds their findings
    (the rest marked not run); ``saved_to`` is where they were written, once they were."""

    def __init__(self, doc: object, saved_to: object = None):
        super().__init__("interrupted")
        self.doc = doc
        self.saved_to = saved_to
