"""The pages of ``watchdog serve --ui``: the dashboard drawn per request from the history, and each run's
filed files.

Addresses (anything else is 404; query strings are ignored, nothing here writes):

* ``/`` and ``/index.html``: every configured audit's status timeline;
* ``/<audit>.html`` (the name percent-encoded): the audit's runs and a chart per check;
* ``/runs/<run id>/<file>``: ``report.html``, ``report.md`` or ``findings.json`` of a run of a configured
  audit, read from the folder the history recorded for that run. A path is never built from the request:
  the run id is looked up in the history and the file name must be one of the three, so ``..`` or an
  encoded ``/`` names nothing; a file that resolves outside its run's folder (a symbolic link) is not served.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any
from urllib.parse import quote, unquote, urlsplit

from watchdog.errors import HistoryUnavailable
from watchdog.redact import redact
from watchdog.report.dashboard import DEFAULT_RUNS, RUN_FILES, audit_page, index_page, page_href, run_files

log = logging.getLogger("watchdog.ui")

HTML = "text/html; charset=utf-8"
TEXT = "text/plain; charset=utf-8"
#: how long a request waits for a locked or unreachable history database before answering 503
HISTORY_WAIT_S = 5.0


@dataclass(frozen=True)
class Reply:
    status: int
    body: bytes
    content_type: str = TEXT


NOT_FOUND = Reply(404, b"not found\n")


def public_links(public_url: str, audit: str, run_id: str, report: str = "report.html") -> list[tuple[str, str]]:
    """(label, address) of the pages a message about a run links to, under ``public_url``: the run's report
    (``/runs/<run id>/<report>``) and the audit's page (``/<audit>.html``), as :class:`LiveSite` serves them."""
    base = public_url.rstrip("/")
    return [("Open the report", f"{base}/runs/{quote(run_id, safe='')}/{report}"),
            ("Audit history", f"{base}/{page_href(audit)}")]


class LiveSite:
    """Answers GET requests from the history of ``settings`` (its configured audits only)."""

    def __init__(self, settings: Any, *, runs_per_audit: int = DEFAULT_RUNS, store: Any = None):
        from watchdog.history import HistoryStore

        self.settings = settings
        self.audits = sorted(settings.audits)
        self.runs_per_audit = runs_per_audit
        self.store = store or HistoryStore(settings.history_url(), wait_s=HISTORY_WAIT_S)

    def close(self) -> None:
        self.store.close()

    def get(self, target: str) -> Reply:
        """The reply to ``GET target`` (the request line's target, undecoded)."""
        try:
            return self._route(urlsplit(target).path)
        except UnicodeDecodeError:  # a percent-encoded part that is not UTF-8 names nothing
            return NOT_FOUND
        except HistoryUnavailable as exc:
            log.warning("ui: %s", exc)
            return Reply(503, b"the history database is unavailable; try again shortly\n")
        except Exception as exc:  # noqa: BLE001 -- one request failing never stops the server
            log.error("ui: %s on %s: %s", type(exc).__name__, redact(target)[:200], redact(exc))
            return Reply(500, b"internal error (see the server's log)\n")

    def _route(self, path: str) -> Reply:
        live = {"at": datetime.now(UTC).strftime("%Y-%m-%d %H:%M:%S")}
        if path in ("/", "/index.html"):
            return Reply(200, index_page(self.store, self.audits, runs_per_audit=self.runs_per_audit,
                                         live=live).encode(), HTML)
        parts = path.split("/")  # split before decoding: an encoded "/" stays inside its part
        if len(parts) == 2 and parts[1].endswith(".html"):
            audit = unquote(parts[1][:-len(".html")], errors="strict")
            if audit in self.audits:
                return Reply(200, audit_page(self.store, audit, self._links, runs_per_audit=self.runs_per_audit,
                                             live=live).encode(), HTML)
        if len(parts) == 4 and parts[1] == "runs":
            return self._run_file(unquote(parts[2], errors="strict"), unquote(parts[3], errors="strict"))
        return NOT_FOUND

    def _links(self, run: Any) -> list[tuple[str, str]]:
        return [(name, f"runs/{quote(run.id, safe='')}/{name}") for name, _ in run_files(self._located(run))]

    def _located(self, run: Any) -> Any:
        """``run`` with its folder made absolute against the project root (as the history may hold it relative)."""
        if run.out_dir and not Path(run.out_dir).is_absolute():
            run.out_dir = str(self.settings.path(run.out_dir))
        return run

    def _run_file(self, run_id: str, name: str) -> Reply:
        if name not in RUN_FILES:
            return NOT_FOUND
        run = self.store.get_run(run_id)
        if run is None or run.audit not in self.audits or not run.out_dir:
            return NOT_FOUND
        folder = Path(self._located(run).out_dir).resolve()
        target = (folder / name).resolve()
        if target.parent != folder or not target.is_file():
            return NOT_FOUND
        return Reply(200, target.read_bytes(), RUN_FILES[name])
