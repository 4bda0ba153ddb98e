"""The ``anomaly:`` option every check with a figure takes (row_count, freshness, row-level checks).

Without ``timestamp_column`` the figure is judged against this audit's earlier runs (the run
history); with it, against per-bucket values computed from the table itself in one GROUP BY (so it
works on the first run). See :mod:`watchdog.scan.anomaly_series` and :mod:`watchdog.anomaly_detector`.
"""

from __future__ import annotations

import re
from typing import Any, Literal

from watchdog.scan.check_types.fields import Options, option, options_class

BUCKET_SECONDS = {"hour": 3600, "day": 86400, "week": 7 * 86400}
_DURATION = re.compile(r"^\s*(\d+(?:\.\d+)?)\s*([hdw])\s*$")
_UNIT = {"h": 3600, "d": 86400, "w": 7 * 86400}


def duration_seconds(text: str) -> float:
    match = _DURATION.match(str(text))
    if not match:
        raise ValueError(f"{text!r} is not a duration like 48h, 28d or 8w")
    return float(match.group(1)) * _UNIT[match.group(2)]


def _duration(value: Any) -> Any:
    if value is not None:
        duration_seconds(str(value))
        return str(value)
    return value


@options_class
class AnomalyOptions(Options):
    #: the figure judged: row-level checks ``rate`` (default) or ``failing``; row_count and freshness ``value``
    metric: Literal["rate", "failing", "value"] | None = None
    timestamp_column: str | None = option(None, min_length=1)
    bucket: Literal["hour", "day", "week"] | None = None
    #: how far back the training values go (buckets: default 28d; run history: default all kept runs)
    training: str | None = option(None, before=_duration)
    #: complete buckets judged (the current, incomplete bucket never is)
    detection: int = option(2, ge=1, le=50)
    sensitivity: float = option(3.0, gt=0)
    direction: Literal["spike", "drop", "both"] = "both"
    #: a change smaller than this fraction of the expected value is never an anomaly
    min_change: float = option(0.1, ge=0)
    min_training: int = option(5, ge=1)
    seasonality: Literal["auto", "weekly", "none"] = "auto"
    trend: bool = False

    def __post_init__(self) -> None:
        if self.bucket is not None and self.timestamp_column is None:
            raise ValueError("`bucket` needs `timestamp_column` (the column that places rows in buckets)")
        if self.timestamp_column is not None and self.bucket is None:
            object.__setattr__(self, "bucket", "day")
        if self.timestamp_column is not None and self.bucket is not None:
            buckets = self.training_seconds() / BUCKET_SECONDS[self.bucket]
            if buckets > 2000:
                raise ValueError(f"training {self.training} holds {buckets:.0f} {self.bucket}s; at most 2000")

    def training_seconds(self) -> float:
        return duration_seconds(self.training or "28d")
