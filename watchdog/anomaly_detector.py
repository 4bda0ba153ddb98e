"""Anomaly detection on a short series of measurements (a pure module: no I/O, no database).

A value is judged against its training values with robust statistics: the expected value is
the median (or, with ``trend``, a Theil-Sen line through the training points), the spread is the
median absolute deviation scaled to a standard deviation (1.4826 x MAD). The expected band is

    expected +/- max(sensitivity x spread, min_change x |expected|, min_spread)

so a perfectly static series does not flag a change of 0.005 % (the relative floor), and one
outlier in the training window does not widen the band for everything after it (median and MAD
ignore it; a mean and standard deviation do not). A value of 0 where the training never had a 0
is a drop whatever the spread (a noisy series still notices that it stopped). With weekly
seasonality only the training points of the same weekday (and hour, for hourly buckets) count.
``seasonality="auto"`` (the default) uses weekly seasonality when the training shows it: at least
15 % of the training points lie outside a band drawn without seasons, and at most a third as many
outside their own weekday's band (then 3 points of the same weekday are enough to judge).

:func:`zscore` is the plain z-score (mean, standard deviation, threshold 3) used as the baseline
in ``bench/anomaly_bench.py``.
"""

from __future__ import annotations

import math
import statistics
from collections import defaultdict
from collections.abc import Sequence
from dataclasses import asdict, dataclass, replace
from datetime import datetime
from typing import Any, Literal

Direction = Literal["spike", "drop", "both"]
MAD_TO_SD = 1.4826


@dataclass(frozen=True)
class DetectorConfig:
    sensitivity: float = 3.0
    direction: Direction = "both"
    #: a change smaller than this fraction of the expected value is never an anomaly
    min_change: float = 0.1
    #: the band is never narrower than this absolute amount either side
    min_spread: float = 0.0
    #: fewer training points than this: no judgement (too little history)
    min_training: int = 5
    #: weekly: only the training points of the same weekday (and hour) count; auto: when the training shows a week
    seasonality: Literal["none", "weekly", "auto"] = "auto"
    #: fit a robust line through the training points instead of taking their median
    trend: bool = False


@dataclass(frozen=True)
class Judgement:
    value: float
    expected: float | None = None
    low: float | None = None
    high: float | None = None
    anomalous: bool = False
    #: (value - expected) / spread; None without enough history
    score: float | None = None
    training_points: int = 0
    reason: str = ""

    def as_dict(self) -> dict[str, Any]:
        out = asdict(self)
        for key in ("expected", "low", "high", "score"):
            if out[key] is not None:
                out[key] = round(out[key], 6)
        return out


def _season(at: datetime | None, hourly: bool) -> tuple[int, int] | None:
    if at is None:
        return None
    return (at.weekday(), at.hour if hourly else 0)


def seasonal(training: Sequence[tuple[datetime | None, float]], at: datetime | None,
             hourly: bool = False) -> list[tuple[datetime | None, float]]:
    """The training points in the same weekday (and hour) as ``at``."""
    key = _season(at, hourly)
    return [p for p in training if _season(p[0], hourly) == key]


def theil_sen(xs: Sequence[float], ys: Sequence[float]) -> tuple[float, float]:
    """A robust line ``y = a + b x``: b is the median of pairwise slopes, a the median intercept."""
    slopes = [(ys[j] - ys[i]) / (xs[j] - xs[i]) for i in range(len(xs)) for j in range(i + 1, len(xs))
              if xs[j] != xs[i]]
    b = statistics.median(slopes) if slopes else 0.0
    a = statistics.median(y - b * x for x, y in zip(xs, ys, strict=False))
    return a, b


def judge(training: Sequence[float], value: float, config: DetectorConfig = DetectorConfig(),
          *, positions: Sequence[float] | None = None, at_position: float | None = None) -> Judgement:
    """Is ``value`` anomalous against ``training`` (oldest first)?

    ``positions`` (one per training value) and ``at_position`` place the points in time for
    ``config.trend``; by default the training values are 0, 1, 2... and the value comes next.
    """
    values = [float(v) for v in training if v is not None and not math.isnan(float(v))]
    n = len(values)
    value = float(value)
    if n < config.min_training:
        return Judgement(value, training_points=n,
                         reason=f"too little history: {n} training point(s), {config.min_training} needed")
    if config.trend and n >= 3:
        xs = [float(p) for p in positions] if positions is not None else [float(i) for i in range(n)]
        x_now = float(at_position) if at_position is not None else float(n)
        a, b = theil_sen(xs, values)
        residuals = [y - (a + b * x) for x, y in zip(xs, values, strict=False)]
        expected = a + b * x_now
        centre = statistics.median(residuals)
        expected += centre
        mad = statistics.median(abs(r - centre) for r in residuals)
    else:
        expected = statistics.median(values)
        mad = statistics.median(abs(v - expected) for v in values)
    spread = MAD_TO_SD * mad
    half = max(config.sensitivity * spread, config.min_change * abs(expected), config.min_spread)
    low, high = expected - half, expected + half
    if min(values) >= 0:
        low = max(low, 0.0)
    if spread > 0:
        score = (value - expected) / spread
    else:
        score = 0.0 if value == expected else math.copysign(math.inf, value - expected)
    above, below = value > high, value < low
    dropped_to_zero = value == 0 and min(values) > 0
    if dropped_to_zero:
        below = True
    anomalous = (above and config.direction in ("spike", "both")) or (below and config.direction in ("drop", "both"))
    if anomalous:
        reason = "dropped to 0 (never 0 in training)" if dropped_to_zero and not value < low else (
            "above the expected range" if above else "below the expected range")
    else:
        reason = ("within the expected range" if not (above or below)
                  else f"outside the range, but direction is {config.direction}")
    return Judgement(value, expected, low, high, anomalous, None if math.isinf(score) else score, n, reason)


AUTO_MIN_OUTSIDE = 0.15
AUTO_MIN_SEASON = 3


def _outside(values: Sequence[float], config: DetectorConfig) -> list[bool]:
    """Which of ``values`` lie outside the band drawn from all of them (in-sample)."""
    centre = statistics.median(values)
    spread = MAD_TO_SD * statistics.median(abs(v - centre) for v in values)
    half = max(config.sensitivity * spread, config.min_change * abs(centre), config.min_spread)
    return [abs(v - centre) > half for v in values]


def looks_weekly(points: Sequence[tuple[datetime | None, float]], config: DetectorConfig = DetectorConfig(),
                 hourly: bool = False) -> bool:
    """Does the training follow a week? Many points are outliers without seasons, few within their weekday."""
    dated = [(t, float(v)) for t, v in points if t is not None and v is not None]
    if len(dated) < 14:
        return False
    groups: dict[tuple[int, int] | None, list[float]] = defaultdict(list)
    for t, v in dated:
        groups[_season(t, hourly)].append(v)
    if len(groups) < 7 or min(len(g) for g in groups.values()) < 2:
        return False
    flat = sum(_outside([v for _, v in dated], config)) / len(dated)
    within = sum(sum(_outside(g, config)) for g in groups.values()) / len(dated)
    return flat >= AUTO_MIN_OUTSIDE and within <= flat / 3


def judge_point(points: Sequence[tuple[datetime | None, float]], at: datetime | None, value: float,
                config: DetectorConfig = DetectorConfig(), *, hourly: bool = False) -> Judgement:
    """Judge ``value`` observed at ``at`` against the dated training ``points`` (oldest first)."""
    weekly = config.seasonality == "weekly"
    if config.seasonality == "auto" and at is not None and looks_weekly(points, config, hourly):
        weekly = True
        config = replace(config, min_training=min(config.min_training, AUTO_MIN_SEASON))
    training = seasonal(points, at, hourly) if weekly else list(points)
    positions = None
    at_position = None
    if config.trend and all(p[0] is not None for p in training) and at is not None and training:
        origin = training[0][0]
        assert origin is not None
        positions = [((p[0] - origin).total_seconds()) / 86400 for p in training if p[0] is not None]
        at_position = (at - origin).total_seconds() / 86400
    return judge([p[1] for p in training], value, config, positions=positions, at_position=at_position)


def zscore(training: Sequence[float], value: float, threshold: float = 3.0) -> bool:
    """The plain z-score baseline: |value - mean| > threshold x standard deviation."""
    values = [float(v) for v in training]
    if len(values) < 2:
        return False
    mean = statistics.fmean(values)
    sd = statistics.pstdev(values)
    if sd == 0:
        return value != mean
    return abs(value - mean) / sd > threshold
