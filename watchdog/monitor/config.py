"""``monitor:`` on an audit: which schemas, which monitors, and how they judge."""

from __future__ import annotations

import re
from typing import Literal, TypeVar

from pydantic import BaseModel, ConfigDict, Field, field_validator

_AGE = re.compile(r"^\s*(\d+(?:\.\d+)?)\s*([smhd])\s*$")


def age_seconds(text: str) -> float:
    """``30m``, ``6h``, ``1d`` as seconds (ValueError saying what is expected)."""
    match = _AGE.match(str(text))
    if not match or float(match.group(1)) <= 0:
        raise ValueError(f"{text!r} is not a positive age like 30m, 6h or 1d")
    return float(match.group(1)) * {"s": 1, "m": 60, "h": 3600, "d": 86400}[match.group(2)]


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", defer_build=True)


class Judging(_Strict):
    """How a table's figure is judged against the audit's earlier runs (:mod:`watchdog.anomaly_detector`)."""

    sensitivity: float = Field(default=3.0, gt=0)
    #: a change smaller than this fraction of the expected value is never an anomaly
    min_change: float = Field(default=0.1, ge=0)
    #: fewer earlier runs than this: the figure is recorded, not judged
    min_training: int = Field(default=5, ge=2)


class VolumeOptions(Judging):
    #: fewer rows than this is a breach whatever the history says
    min_rows: int | None = Field(default=None, ge=0)


class FreshnessOptions(Judging):
    #: no change seen for longer than this (``6h``, ``1d``) is a breach whatever the history says
    max_age: str | None = None

    @field_validator("max_age")
    @classmethod
    def _age(cls, value: str | None) -> str | None:
        if value is not None:
            age_seconds(value)
        return value


class MonitorConfig(_Strict):
    """``monitor: {schemas: [public, sales], volume: true, freshness: true, schema_changes: true}``."""

    #: the schemas whose tables are watched (MySQL/MariaDB: databases); default: the connection's own
    schemas: list[str] | None = Field(default=None, min_length=1)
    volume: bool | VolumeOptions = True
    freshness: bool | FreshnessOptions = True
    schema_changes: bool = True
    #: count(*) instead of the catalogue's estimate: true for every table, or the tables named (a scan each)
    exact_counts: bool | list[str] = False
    #: tables left out: shell patterns on the table name or schema.table (``tmp_*``, ``staging.*``)
    exclude: list[str] = Field(default_factory=list)
    severity: Literal["fail", "warn"] = "warn"

    def volume_options(self) -> VolumeOptions | None:
        return _options(self.volume, VolumeOptions)

    def freshness_options(self) -> FreshnessOptions | None:
        return _options(self.freshness, FreshnessOptions)


_J = TypeVar("_J", bound=Judging)


def _options(value: bool | _J, kind: type[_J]) -> _J | None:
    if value is False:
        return None
    return kind() if value is True else value
