"""The Python API: what ``watchdog scan``, ``watchdog run`` and ``watchdog verify`` do, as functions.

>>> import watchdog
>>> findings = watchdog.scan("sqlite:///reports/demo/crm.db", "checks/demo_crm.yaml")   # doctest: +SKIP
>>> findings.exit_code()                                                                # doctest: +SKIP
<ExitCode.FAILED: 1>

Every function here is importable from ``watchdog`` itself (``watchdog.scan``, ``watchdog.run_audit``, ...).
Secrets given to a call (a URL's password, the keys and webhook URLs of a configuration) are masked in
everything the call returns or raises. Errors derive from :class:`watchdog.WatchdogError`.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Union

import watchdog as _package
from watchdog.api.secrets import CallSecrets
from watchdog.database import DatabaseConfig
from watchdog.defaults import DEFAULT_SAMPLE
from watchdog.errors import ConfigError
from watchdog.exit_codes import ExitCode, exit_code_of
from watchdog.findings import FindingsDoc
from watchdog.scan.suites import Suite, SuiteSource, load_suites

if TYPE_CHECKING:
    from watchdog.settings import Settings
    from watchdog.verify.model import Verification

if getattr(_package, "__distribution__", None) != "watchdog-dq":  # another watchdog's __init__ over this package's
    raise ImportError(f"`import watchdog` gives another package's {_package.__file__}, not watchdog-dq's: two "
                      "packages named watchdog share one folder; install watchdog-dq in an environment of its own")

__all__ = ["RunResult", "SuiteLike", "load_suite", "run_audit", "scan", "verify"]

#: a suite: a file or folder path, YAML text, a mapping as YAML would give it, or a SuiteSource
SuiteLike = Union[str, Path, Mapping[str, Any], SuiteSource]  # noqa: UP007 (a runtime alias)
#: YAML text rather than a path: several lines, or a first line that is a mapping key
_YAML_TEXT = re.compile(r"\A\s*[\w.\-\"']+\s*:(\s|\Z)")


def scan(db: str | DatabaseConfig, suites: SuiteLike | Iterable[SuiteLike], *, sample: int = DEFAULT_SAMPLE,
         timeout: float | None = None, tags: Iterable[str] | str | None = None,
         owners: Iterable[str] | str | None = None, exclude_tags: Iterable[str] | str | None = None,
         allow_empty: bool = False) -> FindingsDoc:
    """Run check suites against a database through the read-only sandbox and return the findings.

    ``db`` is a SQLAlchemy-style URL (``sqlite:///shop.db``, ``postgresql://reader@db/shop``) or a
    :class:`~watchdog.database.DatabaseConfig`. ``suites`` is one suite or a list: a path to a YAML file or a
    folder of them, YAML text, or a mapping shaped as the YAML would be. ``sample`` failing rows are fetched per
    breaching check (0: none); ``timeout`` is the seconds allowed per statement (default: the database's).
    ``tags``, ``owners`` and ``exclude_tags`` run only some checks, as ``watchdog scan --tags/--owner/--exclude-tags``
    do; suites (or a selection) without a single check raise :class:`~watchdog.ConfigError` unless ``allow_empty``.

    Nothing is written: no file, no history. ``findings.exit_code()`` is what ``watchdog scan`` would exit with;
    ``findings.to_json()`` is its findings.json. Raises :class:`~watchdog.ConfigError` (a suite, an option) and
    :class:`~watchdog.DatabaseUnavailable`; a check that cannot run is a finding with status ``error``.
    """
    secrets = CallSecrets()
    secrets.add_url(db.url if isinstance(db, DatabaseConfig) else str(db))
    with secrets.guard():
        from watchdog.run.compute import RunRequest, compute_run, new_run_id
        from watchdog.scan.selection import CheckSelection, select_checks

        if isinstance(sample, bool) or not isinstance(sample, int) or sample < 0:
            raise ConfigError(f"sample: a whole number of rows (0 or more), not {sample!r}")
        target = db if isinstance(db, DatabaseConfig) else DatabaseConfig(url=db)
        target = target.with_limits(timeout_s=timeout)
        selection = CheckSelection.of(tags, owners, exclude_tags)
        loaded = select_checks(load_suites(_sources(suites), allow_empty=allow_empty), selection,
                               allow_empty=allow_empty)
        request = RunRequest(database=target, suites=loaded, run_id=new_run_id(), sample=sample)
        return secrets.mask(compute_run(request).doc)


def load_suite(suite: SuiteLike) -> Suite:
    """Read and validate one suite (a file, YAML text or a mapping); :class:`~watchdog.scan.suites.SuiteError`
    lists every problem with file, line and field. ``suite.checks`` are the checks it holds."""
    sources = _sources(suite)
    if len(sources) != 1:
        raise ConfigError(f"load_suite reads one suite, not {len(sources)}: use watchdog.scan for several")
    return load_suites(sources)[0]


@dataclass
class RunResult:
    """What :func:`run_audit` did: the run as ``watchdog run`` files, records and delivers it."""

    run_id: str
    audit: str
    #: passed | warned | failed | error (the run history's and audit.json's word)
    status: str
    run_dir: Path
    findings: FindingsDoc | None
    trends: dict[str, str] = field(default_factory=dict)
    #: one entry per delivery: channel, target, status, attempts, last_error
    deliveries: list[dict[str, Any]] = field(default_factory=list)
    awaiting_review: bool = False
    #: why the run could not be filed (it was still recorded and delivered from memory)
    filing_error: str | None = None

    @property
    def exit_code(self) -> ExitCode:
        return exit_code_of(self.status)

    @property
    def report_path(self) -> Path:
        return self.run_dir / "report.md"


def run_audit(name: str, config: str | Path | Settings | None = None, *, models: Any = None) -> RunResult:
    """Run the configured audit ``name`` exactly as ``watchdog run NAME`` does: scan, file the run folder,
    record it in the history, deliver (or wait for review). ``config`` is the path of a ``watchdog.yaml`` (default:
    ``$WATCHDOG_CONFIG``, else ``./watchdog.yaml``) or loaded :class:`~watchdog.settings.Settings`. ``models``
    replaces the configured LLM endpoint (tests)."""
    secrets = CallSecrets()
    secrets.add(os.environ.get("OPENAI_API_KEY"))
    with secrets.guard():
        from watchdog.run.audit import execute_audit
        from watchdog.settings import Settings, load_settings

        settings = config if isinstance(config, Settings) else load_settings(config)
        secrets.add_model(settings)
        run = execute_audit(settings, name, models=models)
        result = RunResult(run.run_id, run.audit, run.status, run.run_dir,
                           run.scan.doc if run.scan is not None else None, dict(run.trends), list(run.deliveries),
                           run.awaiting_review, run.filing_error)
        return secrets.mask(result)


def verify(report_md: str, findings: FindingsDoc | Mapping[str, Any] | str | Path) -> Verification:
    """Check a report's numbers and statuses against findings (what ``watchdog verify`` does); pure and
    deterministic. ``findings``: a :class:`~watchdog.FindingsDoc`, its JSON as a mapping or text, or the path
    of a findings.json. ``result.passed``; ``result.bad`` lists what the report gets wrong."""
    from watchdog.verify import verify_fn

    if isinstance(findings, Path) or (isinstance(findings, str) and not findings.lstrip().startswith("{")):
        findings = FindingsDoc.load(Path(findings))
    elif isinstance(findings, str):
        findings = FindingsDoc.from_json(findings)
    return verify_fn(report_md, findings if isinstance(findings, FindingsDoc) else dict(findings))


def _sources(suites: SuiteLike | Iterable[SuiteLike]) -> list[Path | SuiteSource]:
    items = [suites] if isinstance(suites, (str, Path, Mapping, SuiteSource)) else list(suites)
    if not items:
        raise ConfigError("no suite given: pass a path, YAML text or a mapping")
    out: list[Path | SuiteSource] = []
    for number, item in enumerate(items, 1):
        if isinstance(item, SuiteSource):
            out.append(item)
        elif isinstance(item, Mapping):
            out.append(SuiteSource(f"<suite {number}>", data=dict(item)))
        elif isinstance(item, str) and ("\n" in item.strip() or _YAML_TEXT.match(item)) and not _is_file(item):
            out.append(SuiteSource(f"<suite {number}>", text=item))
        elif isinstance(item, (str, Path)):  # a file, or a folder of them (read at any depth)
            out.append(Path(item))
        else:
            raise ConfigError(f"suite {number}: a path, YAML text or a mapping, not {type(item).__name__}")
    return out


def _is_file(text: str) -> bool:
    """Whether ``text`` names an existing path (YAML text longer than a file name can be is not one)."""
    try:
        return Path(text).exists()
    except OSError:
        return False
