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

An error about an unknown name (a suite section, check type, option, table or column) names the closest
known one with :func:`did_you_mean`: one similarity rule for every such message.
"""

from __future__ import annotations

import difflib
from collections.abc import Iterable


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


def closest(word: object, options: Iterable[str]) -> str | None:
    """The option most like ``word`` (case folded), or None when none is close enough."""
    by_folded: dict[str, str] = {}
    for option in options:
        by_folded.setdefault(str(option).casefold(), str(option))
    found = difflib.get_close_matches(str(word).casefold(), list(by_folded), n=1)
    return by_folded[found[0]] if found else None


def did_you_mean(word: object, options: Iterable[str]) -> str:
    """`` (did you mean 'x'?)`` for the closest option, or "" when none is close (or it is ``word`` itself)."""
    found = closest(word, options)
    return f" (did you mean {found!r}?)" if found is not None and found != str(word) else ""


class ReportInterrupted(KeyboardInterrupt):
    """Ctrl-C or SIGTERM during the LLM report: the run's graph is checkpointed under ``run_id`` and
    ``watchdog resume RUN_ID`` continues it. ``args[0]`` is what the interrupt said ("SIGTERM")."""

    def __init__(self, run_id: str, how: str = "interrupted"):
        super().__init__(how)
        self.run_id = run_id
