"""The findings model and its JSON (``schema_version: 1``): a contract, extend it, don't change it.

Plain dataclasses, so that a scan does not import pydantic: a scan builds them itself. What comes from
outside (a findings.json read back, an MCP client, an e-mail attachment, a draft's findings) is checked by
:meth:`FindingsDoc.validate` / :meth:`FindingsDoc.from_json`, which import pydantic when called (its
``TypeAdapter`` validates these dataclasses, so its error messages are the ones users saw before).
"""

from __future__ import annotations

import base64
import json
import re
from collections.abc import Iterable
from dataclasses import dataclass, field
from datetime import date, datetime, time, timedelta
from decimal import Decimal
from functools import cache
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal
from uuid import UUID

from watchdog.exit_codes import ExitCode

if TYPE_CHECKING:
    from pydantic import TypeAdapter

Status = Literal["pass", "warn", "fail", "error"]
SAMPLE_TEXT_LIMIT = 200
_STATUSES = ("pass", "warn", "fail", "error")
#: how the ``error`` of a check that was never run begins (Ctrl-C, or an error that stopped the whole scan)
NOT_RUN = "not run: "
_SEVERITIES = ("fail", "warn")


def _count(value: Any) -> int | None:
    """An integer field as the pydantic model held it: ``Decimal(3)``, ``3.0`` and ``True`` become ``3``/``1``."""
    return value if value is None or type(value) is int else int(value)


def _number(value: Any) -> float | int | None:
    """``observed``: ints stay ints, anything else numeric (a Decimal, a bool) becomes a float."""
    return value if value is None or type(value) in (int, float) else float(value)


def _ratio(value: Any) -> float | None:
    return value if value is None or type(value) is float else float(value)


@dataclass(kw_only=True)
class Finding:
    name: str
    check: str
    table: str | None = None
    column: str | None = None
    columns: list[str] | None = None
    status: Status
    severity: Literal["fail", "warn"] = "fail"
    params: dict[str, Any] = field(default_factory=dict)
    failing: int | None = None
    total: int | None = None
    rate: float | None = None
    observed: float | int | None = None
    details: dict[str, Any] = field(default_factory=dict)
    sample: list[dict[str, Any]] = field(default_factory=list)
    sql: str | None = None
    error: str | None = None
    description: str | None = None
    #: where the failing rows concentrate, since when, which values, overlap with other checks (see
    #: watchdog/diagnose/); None: not diagnosed (the key is then left out of the JSON)
    diagnosis: dict[str, Any] | None = None
    #: who answers for the check and what it is about (suite -> table -> check); None: not given (left out)
    owners: list[str] | None = None
    tags: list[str] | None = None
    #: the rows an incremental check judged: {column, from, to} (absent: every row)
    window: dict[str, Any] | None = None

    def __post_init__(self) -> None:
        if self.status not in _STATUSES:
            raise ValueError(f"status must be one of {', '.join(_STATUSES)}, not {self.status!r}")
        if self.severity not in _SEVERITIES:
            raise ValueError(f"severity must be fail or warn, not {self.severity!r}")
        if self.columns is not None and type(self.columns) is not list:
            self.columns = list(self.columns)
        self.failing, self.total = _count(self.failing), _count(self.total)
        self.rate, self.observed = _ratio(self.rate), _number(self.observed)

    @property
    def not_run(self) -> bool:
        """The check was never run (its ``status`` is ``error``; the document's ``error`` says why)."""
        return self.status == "error" and (self.error or "").startswith(NOT_RUN)

    def to_json_dict(self) -> dict[str, Any]:
        """The finding as JSON values, keys in field order (what ``model_dump(mode="json")`` gave)."""
        return {"name": self.name, "check": self.check, "table": self.table, "column": self.column,
                "columns": None if self.columns is None else list(self.columns), "status": self.status,
                "severity": self.severity, "params": _plain(self.params), "failing": self.failing,
                "total": self.total, "rate": self.rate, "observed": self.observed, "details": _plain(self.details),
                "sample": _plain(self.sample), "sql": self.sql, "error": self.error,
                "description": self.description,
                **({"diagnosis": _plain(self.diagnosis)} if self.diagnosis is not None else {}),
                **({"owner": self.owners[0], "owners": list(self.owners)} if self.owners else {}),
                **({"tags": list(self.tags)} if self.tags else {}),
                **({"window": _plain(self.window)} if self.window is not None else {})}


@dataclass(kw_only=True)
class Summary:
    checks: int = 0
    passed: int = 0
    warned: int = 0
    failed: int = 0
    errors: int = 0

    @classmethod
    def of(cls, findings: list[Finding]) -> Summary:
        count = {s: sum(f.status == s for f in findings) for s in _STATUSES}
        return cls(checks=len(findings), passed=count["pass"], warned=count["warn"], failed=count["fail"],
                   errors=count["error"])

    def to_json_dict(self) -> dict[str, int]:
        return {"checks": self.checks, "passed": self.passed, "warned": self.warned, "failed": self.failed,
                "errors": self.errors}


@dataclass(kw_only=True)
class FindingsDoc:
    schema_version: Literal[1] = 1
    run_id: str | None = None
    database: str
    started_at: str
    duration_s: float
    summary: Summary
    findings: list[Finding]
    suites: list[str] = field(default_factory=list)
    watchdog_version: str = ""
    #: an error that stopped the whole scan (e.g. the database could not be reached), if any
    error: str | None = None

    def __post_init__(self) -> None:
        if self.schema_version != 1:
            raise ValueError(f"schema_version must be 1, not {self.schema_version!r}")
        self.duration_s = float(self.duration_s)
        if isinstance(self.summary, dict):  # as the pydantic model took them, a summary or findings as dicts
            self.summary = Summary(**self.summary)
        if any(isinstance(f, dict) for f in self.findings):
            self.findings = [Finding(**f) if isinstance(f, dict) else f for f in self.findings]

    def exit_code(self) -> ExitCode:
        return exit_code_for(self.summary, self.error)

    def to_json_dict(self) -> dict[str, Any]:
        """The document as JSON values, keys in field order: findings.json's content."""
        return {"schema_version": self.schema_version, "run_id": self.run_id, "database": self.database,
                "started_at": self.started_at, "duration_s": self.duration_s,
                "summary": self.summary.to_json_dict(), "findings": [f.to_json_dict() for f in self.findings],
                "suites": list(self.suites), "watchdog_version": self.watchdog_version, "error": self.error}

    def to_json(self) -> str:
        return json.dumps(self.to_json_dict(), indent=2, ensure_ascii=False) + "\n"

    def write(self, path: Path) -> Path:
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp = path.with_suffix(path.suffix + ".tmp")
        tmp.write_text(self.to_json(), encoding="utf-8")
        tmp.replace(path)
        return path

    @classmethod
    def validate(cls, data: Any) -> FindingsDoc:
        """A document from untrusted data (a dict, or a FindingsDoc): pydantic's ValidationError if invalid."""
        return data if isinstance(data, cls) else _adapter().validate_python(data)

    @classmethod
    def from_json(cls, text: str | bytes) -> FindingsDoc:
        """A document from untrusted JSON text: pydantic's ValidationError if invalid."""
        return _adapter().validate_json(text)

    @classmethod
    def load(cls, path: Path) -> FindingsDoc:
        return cls.from_json(Path(path).read_text(encoding="utf-8"))


@cache
def _adapter() -> TypeAdapter[FindingsDoc]:
    from pydantic import TypeAdapter  # here: a scan writes findings, only readers validate them

    return TypeAdapter(FindingsDoc)


def _plain(value: Any) -> Any:
    """A params/details/sample value as JSON values (they are :func:`jsonable` already when the scanner
    made them; anything else is made so)."""
    if value is None or type(value) in (str, int, float, bool):
        return value
    if isinstance(value, dict):
        return {str(k): _plain(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_plain(v) for v in value]
    return jsonable(value)


def exit_code_for(summary: Summary, error: str | None = None) -> ExitCode:
    if error or summary.errors:
        return ExitCode.ERROR
    if summary.failed:
        return ExitCode.FAILED
    if summary.warned:
        return ExitCode.WARNED
    return ExitCode.OK


def jsonable(value: Any, text_limit: int | None = None) -> Any:
    """A database or YAML value as JSON: dates as ISO text, Decimals as numbers, bytes as base64."""
    if value is None or isinstance(value, (bool, int)):
        return value
    if isinstance(value, float):
        return value if value == value and value not in (float("inf"), float("-inf")) else str(value)
    if isinstance(value, Decimal):
        return int(value) if value == value.to_integral_value() else float(value)
    if isinstance(value, (datetime, date, time)):
        return value.isoformat()
    if isinstance(value, timedelta):
        return value.total_seconds()
    if isinstance(value, (bytes, bytearray, memoryview)):
        return "base64:" + base64.b64encode(bytes(value)).decode()
    if isinstance(value, dict):
        return {str(k): jsonable(v, text_limit) for k, v in value.items()}
    if isinstance(value, (list, tuple, set)):
        return [jsonable(v, text_limit) for v in value]
    if isinstance(value, UUID):
        return str(value)
    text = value if isinstance(value, str) else str(value)
    if text_limit is not None and len(text) > text_limit:
        return text[:text_limit] + f"… [{len(text) - text_limit} more characters]"
    return text


_CUT = re.compile(r"… \[(\d+) more characters\]$")


def full_length(text: str) -> int:
    """The length of the value ``text`` stands for: a sample value cut by :func:`jsonable` says how much
    it lost, so the real length survives the cut."""
    cut = _CUT.search(text)
    return cut.start() + int(cut.group(1)) if cut else len(text)


def picks(tags: Iterable[str], owners: Iterable[str], want_tags: Iterable[str], want_owners: Iterable[str]) -> bool:
    """The one rule by which a scan's selection and an alert destination pick checks: whether a check with
    ``tags`` and ``owners`` has one of ``want_tags`` (when any are wanted) and one of ``want_owners`` (when any
    are wanted)."""
    wanted_tags, wanted_owners = set(want_tags), set(want_owners)
    return ((not wanted_tags or bool(wanted_tags & set(tags)))
            and (not wanted_owners or bool(wanted_owners & set(owners))))
