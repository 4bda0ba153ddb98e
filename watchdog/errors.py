"""One exception root, and the two markers the retry rules read.

Every error watchdog reports to a user derives from :class:`WatchdogError`, so the CLI turns each into
one clear line (``error: ...`` / ``refused: ...``) and exit code 3. Each subsystem keeps its own errors
beside it, deriving from this root:

* configuration: :class:`ConfigError` (here), ``watchdog.scan.suites.SuiteError`` (file, line, field);
* the sandbox (here, since every caller meets them): :class:`QueryRefused`, :class:`QueryTimeout`,
  :class:`QueryError`, :class:`DatabaseUnavailable`;
* the report graph: ``watchdog.graph.models.LLMUnavailable``, ``LLMNotConfigured``;
* delivery: ``watchdog.delivery.base.DeliveryError``.

Whether an error is worth retrying is a *class*, not a flag: :class:`Transient` (a later attempt may
succeed: a timeout, a connection refused, an SMTP server down) or :class:`Terminal` (the same call will
fail the same way: bad SQL, a refused statement, an invalid suite). Retry rules (tenacity) retry
``Transient`` and nothing else: ``retry_if_exception_type(Transient)``.
"""

from __future__ import annotations


class WatchdogError(Exception):
    """Base class for every error watchdog reports to a user."""

    #: the word the CLI prints before the message (``error: ...``)
    prefix = "error"


class Transient(Exception):
    """Marker: a later attempt may succeed (retry rules retry these)."""


class Terminal(Exception):
    """Marker: retrying the same call fails the same way (never retried)."""


class ConfigError(WatchdogError, Terminal):
    """A configuration or check-suite file is invalid (names file, line and field)."""


class SandboxError(WatchdogError):
    """Base for errors raised by the read-only query sandbox."""


class QueryRefused(SandboxError, Terminal):
    """The statement is not a single read, or it touches something with side effects."""

    prefix = "refused"


class QueryTimeout(SandboxError, Transient):
    """The statement ran longer than the time limit and was cancelled."""


class QueryError(SandboxError, Terminal):
    """The database rejected the statement (syntax, unknown column...). Not worth retrying."""


class DatabaseUnavailable(SandboxError, Transient):
    """The database could not be reached. Worth retrying later."""


class HistoryUnavailable(WatchdogError):
    """The history database stayed locked or unreachable for longer than ``history.wait_s``."""


class TickTaken(WatchdogError):
    """This scheduled tick of an audit was already claimed (run) by another process."""


class Interrupted(KeyboardInterrupt):
    """Ctrl-C during a scan, after the checks that finished were kept: ``doc`` holds their findings
    (the rest marked not run); ``saved_to`` is where they were written, once they were."""

    def __init__(self, doc: object, saved_to: object = None):
        super().__init__("interrupted")
        self.doc = doc
        self.saved_to = saved_to


class ReportInterrupted(KeyboardInterrupt):
    """Ctrl-C or SIGTERM during the LLM report: the run's graph is checkpointed under ``run_id`` and
    ``watchdog resume RUN_ID`` continues it. ``args[0]`` is what the interrupt said ("SIGTERM")."""

    def __init__(self, run_id: str, how: str = "interrupted"):
        super().__init__(how)
        self.run_id = run_id
