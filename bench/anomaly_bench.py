"""Labelled anomaly benchmark: watchdog's detector against a plain z-score, in the same run.

Synthetic daily series (seeded, so every run sees the same data): static, noisy, linear trend,
weekly seasonality, spikes, drops, level shifts and a slowly-then-suddenly drifting null rate.
Every point after the first 28 is judged against the 28 points before it (a sliding training
window, as a daily audit would see it) and compared with its label. Points right after a level
shift (days 1-13 after the onset) are left unscored: whether the new level is still "unexpected"
there is a matter of taste, so they count neither way; the onset itself is labelled anomalous.

    .venv/bin/python -m bench.anomaly_bench            # prints the table, writes bench/results/anomaly.json
"""

from __future__ import annotations

import json
import random
import sys
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from pathlib import Path

from watchdog.anomaly_detector import DetectorConfig, judge_point, zscore

WINDOW = 28
LENGTH = 150
SEEDS = (1, 2, 3)
START = datetime(2026, 1, 5, tzinfo=UTC)  # a Monday


@dataclass
class Series:
    kind: str
    values: list[float]
    labels: list[bool | None]  # True anomalous, False normal, None unscored
    weekly: bool = False
    trend: bool = False
    dates: list[datetime] = field(default_factory=list)


def _inject(values: list[float], labels: list[bool | None], rng: random.Random, count: int,
            change: Callable[[float], float]) -> None:
    spots = rng.sample(range(WINDOW + 2, LENGTH), count)
    for i in spots:
        values[i] = change(values[i])
        labels[i] = True


def make(kind: str, seed: int) -> Series:  # noqa: C901 - one branch per kind of series
    rng = random.Random(f"{kind}-{seed}")
    n = LENGTH
    labels: list[bool | None] = [False] * n
    weekly = trend = False
    if kind == "static":
        values = [1000.0] * n
        for i in rng.sample(range(WINDOW, n), 10):   # changes of 0.005 %: not anomalies
            values[i] = 1000.05
        _inject(values, labels, rng, 3, lambda v: v * rng.choice((0.5, 1.6)))
    elif kind == "noisy":
        values = [max(0.0, rng.gauss(1000, 250)) for _ in range(n)]
        for i in rng.sample(range(n), 6):            # unlabelled wild outliers that inflate a standard deviation
            if not labels[i]:
                values[i] = values[i] * 4
                labels[i] = None
        _inject(values, labels, rng, 4, lambda v: 0.0)
    elif kind == "trend":
        trend = True
        values = [500 + 12 * i + rng.gauss(0, 25) for i in range(n)]
        _inject(values, labels, rng, 5, lambda v: v * rng.choice((0.6, 1.45)))
    elif kind == "weekly":
        weekly = True
        values = [(1000.0 if (START + timedelta(days=i)).weekday() < 5 else 250.0) * rng.gauss(1, 0.04)
                  for i in range(n)]
        spots = rng.sample(range(WINDOW + 2, n), 6)
        for i in spots:                              # a weekday at the weekend level, a weekend at the weekday level
            weekday = (START + timedelta(days=i)).weekday() < 5
            values[i] = (250.0 if weekday else 1000.0) * rng.gauss(1, 0.04)
            labels[i] = True
    elif kind == "spikes":
        values = [1000 * rng.gauss(1, 0.06) for _ in range(n)]
        _inject(values, labels, rng, 6, lambda v: v * rng.uniform(1.5, 3))
    elif kind == "drops":
        values = [1000 * rng.gauss(1, 0.06) for _ in range(n)]
        _inject(values, labels, rng, 6, lambda v: v * rng.uniform(0.1, 0.6))
    elif kind == "level_shift":
        values = []
        level = 1000.0
        shifts = sorted(rng.sample(range(WINDOW + 5, n - 15, 20), 2))
        for i in range(n):
            if i in shifts:
                level *= rng.choice((0.5, 1.8))
            values.append(level * rng.gauss(1, 0.05))
        for s in shifts:
            labels[s] = True
            for j in range(s + 1, min(n, s + 14)):
                labels[j] = None
    elif kind == "null_rate":
        values = [max(0.0, rng.gauss(0.005, 0.001)) for _ in range(n)]
        _inject(values, labels, rng, 4, lambda v: rng.uniform(0.03, 0.08))
    else:
        raise ValueError(kind)
    dates = [START + timedelta(days=i) for i in range(n)]
    return Series(kind, values, labels, weekly, trend, dates)


KINDS = ("static", "noisy", "trend", "weekly", "spikes", "drops", "level_shift", "null_rate")

Detector = Callable[[Series, int], bool]


def watchdog_no_season(s: Series, i: int) -> bool:
    """Defaults, but with seasonality off (``seasonality: none``)."""
    points = list(zip(s.dates[i - WINDOW:i], s.values[i - WINDOW:i], strict=True))
    return judge_point(points, s.dates[i], s.values[i], DetectorConfig(seasonality="none")).anomalous


def watchdog_default(s: Series, i: int) -> bool:
    points = list(zip(s.dates[i - WINDOW:i], s.values[i - WINDOW:i], strict=True))
    return judge_point(points, s.dates[i], s.values[i], DetectorConfig()).anomalous


def watchdog_configured(s: Series, i: int) -> bool:
    """As a user would set it up: ``seasonality: weekly`` on the seasonal series, ``trend: true`` on the trend."""
    points = list(zip(s.dates[i - WINDOW:i], s.values[i - WINDOW:i], strict=True))
    config = DetectorConfig(seasonality="weekly" if s.weekly else "auto", trend=s.trend,
                            min_training=4 if s.weekly else 5)
    return judge_point(points, s.dates[i], s.values[i], config).anomalous


def plain_zscore(s: Series, i: int) -> bool:
    return zscore(s.values[i - WINDOW:i], s.values[i], 3.0)


DETECTORS: dict[str, Detector] = {"z-score (mean/sd, 3)": plain_zscore,
                                  "watchdog (seasonality: none)": watchdog_no_season,
                                  "watchdog (defaults)": watchdog_default,
                                  "watchdog (weekly/trend set)": watchdog_configured}


def score(detector: Detector, series: list[Series]) -> dict[str, float | int]:
    tp = fp = fn = points = 0
    for s in series:
        for i in range(WINDOW, LENGTH):
            label = s.labels[i]
            if label is None:
                continue
            points += 1
            flagged = detector(s, i)
            tp += flagged and label
            fp += flagged and not label
            fn += (not flagged) and label
    precision = tp / (tp + fp) if tp + fp else 1.0
    recall = tp / (tp + fn) if tp + fn else 1.0
    return {"points": points, "anomalies": tp + fn, "tp": tp, "fp": fp, "fn": fn,
            "precision": round(precision, 3), "recall": round(recall, 3)}


def main(argv: list[str] | None = None) -> int:
    all_series = {kind: [make(kind, seed) for seed in SEEDS] for kind in KINDS}
    results: dict[str, dict[str, dict[str, float | int]]] = {}
    for name, detector in DETECTORS.items():
        results[name] = {kind: score(detector, group) for kind, group in all_series.items()}
        results[name]["all"] = score(detector, [s for group in all_series.values() for s in group])
    header = f"{'series':<12}" + "".join(f" | {name:>29}" for name in DETECTORS)
    print(f"labelled points judged: {results[next(iter(DETECTORS))]['all']['points']} "
          f"({results[next(iter(DETECTORS))]['all']['anomalies']} anomalies), window {WINDOW}, seeds {SEEDS}")
    print("precision / recall (false positives, missed)")
    print(header)
    print("-" * len(header))
    for kind in (*KINDS, "all"):
        row = f"{kind:<12}"
        for name in DETECTORS:
            r = results[name][kind]
            row += f" | {r['precision']:>6.3f} / {r['recall']:<5.3f} ({r['fp']:>3} fp, {r['fn']:>2} fn)"
        print(row)
    out = Path(__file__).resolve().parent / "results" / "anomaly.json"
    out.parent.mkdir(parents=True, exist_ok=True)
    summary = {"window": WINDOW, "length": LENGTH, "seeds": SEEDS, "results": results}
    out.write_text(json.dumps(summary, indent=2) + "\n")
    print(f"written: {out}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
