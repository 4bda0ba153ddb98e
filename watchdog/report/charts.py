"""Small inline SVG charts (no script, no external file): a series over runs with its threshold or band.

Pure functions returning markup; every number is formatted here, every label escaped.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass

from markupsafe import Markup, escape


@dataclass(frozen=True)
class Point:
    label: str              # the run (shown on hover)
    value: float | None     # None: the check did not run (a gap)
    status: str = "pass"


STATUS_COLOURS = {"pass": "#1a7f37", "warn": "#9a6700", "fail": "#cf222e", "error": "#8250df"}


_RUN_STAMP = re.compile(r"^(\d{4})(\d\d)(\d\d)T(\d\d)(\d\d)")


def run_label(label: str) -> str:
    """A run id on the time axis: ``20261201T205228Z-…`` as ``12-01 20:52``; other labels as they are."""
    m = _RUN_STAMP.match(label)
    return f"{m.group(2)}-{m.group(3)} {m.group(4)}:{m.group(5)}" if m else label[:16]


def series_svg(points: list[Point], *, threshold: float | None = None, band: tuple[float, float] | None = None,
               width: int = 260, height: int = 60, title: str = "",
               axes: Callable[[float], str] | None = None) -> Markup:
    """A line over ``points`` (one circle per point, coloured by status), with a dashed threshold line and a
    shaded expected band when given. ``axes``: draw a value axis (its lowest and highest value, written
    with ``axes``) and a time axis (the first and last run)."""
    pad = 6
    left, bottom = (pad + 52, pad + 14) if axes else (pad, pad)
    values = [p.value for p in points if p.value is not None]
    extra = [v for v in (threshold, *(band or ())) if v is not None]
    low, high = min([*values, *extra], default=0.0), max([*values, *extra], default=1.0)
    if high == low:  # a flat line in the middle; a value axis of counts or rates starts at 0, not below
        low, high = (0.0, 2.0 * high or 1.0) if axes and low >= 0 else (low - 1, high + 1)
    step = (width - left - pad) / max(1, len(points) - 1)

    def x(i: int) -> float:
        return left + i * step if len(points) > 1 else (left + width - pad) / 2

    def y(v: float) -> float:
        return height - bottom - (v - low) / (high - low) * (height - bottom - pad)

    parts = [f'<svg xmlns="http://www.w3.org/2000/svg" class="chart" width="{width}" height="{height}" '
             f'viewBox="0 0 {width} {height}" role="img" aria-label="{escape(title)}">']
    if axes:
        parts += _axes(points, axes, low, high, left, bottom, width, height, pad, x)
    if band is not None:
        top, low_edge = y(max(band)), y(min(band))
        parts.append(f'<rect class="band" x="{left}" y="{top:.1f}" width="{width - left - pad}" '
                     f'height="{max(1.0, low_edge - top):.1f}" fill="#ddf4ff"/>')
    if threshold is not None:
        parts.append(f'<line class="threshold" x1="{left}" x2="{width - pad}" y1="{y(threshold):.1f}" '
                     f'y2="{y(threshold):.1f}" stroke="#cf222e" stroke-dasharray="4 3"/>')
    line = " ".join(f"{x(i):.1f},{y(p.value):.1f}" for i, p in enumerate(points) if p.value is not None)
    if line:
        parts.append(f'<polyline points="{line}" fill="none" stroke="#57606a" stroke-width="1.5"/>')
    for i, p in enumerate(points):
        if p.value is None:
            continue
        colour = STATUS_COLOURS.get(p.status, "#57606a")
        parts.append(f'<circle class="point" cx="{x(i):.1f}" cy="{y(p.value):.1f}" r="3" fill="{colour}">'
                     f"<title>{escape(p.label)}: {p.value:g} ({escape(p.status)})</title></circle>")
    parts.append("</svg>")
    return Markup("".join(parts))


def _axes(points: list[Point], fmt: Callable[[float], str], low: float, high: float, left: float, bottom: float,
          width: int, height: int, pad: int, x: Callable[[int], float]) -> list[str]:
    """The value axis (lowest and highest value, written by ``fmt``) and the time axis (first and last run)."""
    base, top = height - bottom, pad
    out = [f'<line class="axis" x1="{left}" x2="{left}" y1="{top}" y2="{base}" stroke="#8c959f"/>',
           f'<line class="axis" x1="{left}" x2="{width - pad}" y1="{base}" y2="{base}" stroke="#8c959f"/>']
    for value, at in ((high, top + 4), (low, base)):
        out.append(f'<text class="tick" x="{left - 3}" y="{at:.1f}" text-anchor="end" font-size="9" '
                   f'fill="#57606a">{escape(fmt(value))}</text>')
    if points:
        ends = [(0, "start")] if len(points) == 1 else [(0, "start"), (len(points) - 1, "end")]
        for i, anchor in ends:
            out.append(f'<text class="tick" x="{x(i):.1f}" y="{height - 3}" text-anchor="{anchor}" font-size="9" '
                       f'fill="#57606a">{escape(run_label(points[i].label))}</text>')
    return out
