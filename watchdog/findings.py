"""The findings model and its JSON (``schema_version: 1``): a contract, extend it, don't change it."""

from __future__ import annotations

import base64
import json
import re
from datetime import date, datetime, time, timedelta
from decimal import Decimal
from pathlib import Path
from typing import Any, Literal
from uuid import UUID

from pydantic import BaseModel, Field

from watchdog.exit_codes import ExitCode

Status = Literal["pass", "warn", "fail", "error"]
SAMPLE_TEXT_LIMIT = 200


class Finding(BaseModel):
    name: str
    check: str
    table: str | None = None
    column: str | None = None
    columns: list[str] | None = None
    status: Status
    severity: Literal["fail", "warn"] = "fail"
    params: dict[str, Any] = Field(default_factory=dict)
    failing: int | None = None
    total: int | None = None
    rate: float | None = None
    observed: float | int | None = None
    details: dict[str, Any] = Field(default_factory=dict)
    sample: list[dict[str, Any]] = Field(default_factory=list)
    sql: str | None = None
    error: str | None = None
    description: str | None = None


class Summary(BaseModel):
    checks: int = 0
    passed: int = 0
    warned: int = 0
    failed: int = 0
    errors: int = 0

    @classmethod
    def of(cls, findings: list[Finding]) -> Summary:
        count = {s: sum(f.status == s for f in findings) for s in ("pass", "warn", "fail", "error")}
        return cls(checks=len(findings), passed=count["pass"], warned=count["warn"], failed=count["fail"],
                   errors=count["error"])


class FindingsDoc(BaseModel):
    schema_version: Literal[1] = 1
    run_id: str | None = None
    database: str
    started_at: str
    duration_s: float
    summary: Summary
    findings: list[Finding]
    suites: list[str] = Field(default_factory=list)
    watchdog_version: str = ""
    #: an error that stopped the whole scan (e.g. the database could not be reached), if any
    error: str | None = None

    def exit_code(self) -> ExitCode:
        return exit_code_for(self.summary, self.error)

    def to_json(self) -> str:
        return json.dumps(self.model_dump(mode="json"), indent=2, ensure_ascii=False) + "\n"

    def write(self, path: Path) -> Path:
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp = path.with_suffix(path.suffix + ".tmp")
        tmp.write_text(self.to_json(), encoding="utf-8")
        tmp.replace(path)
        return path

    @classmethod
    def load(cls, path: Path) -> FindingsDoc:
        return cls.model_validate_json(Path(path).read_text(encoding="utf-8"))


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
