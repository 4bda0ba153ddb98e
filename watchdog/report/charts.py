"""Small inline SVG charts (no script, no external file): a series over runs with its threshold or band.

Pure functions returning markup; every number is formatted here, every label escaped.
"""

from __future__ import annotations

from dataclasses import dataclass

from markupsafe import Markup, escape


@dataclass(frozen=True)
class Point:
    label: str              # the run (shown on hover)
    value: float | None     # None: the check did not run (a gap)
    status: str = "pass"


STATUS_COLOURS = {"pass": "#1a7f37", "warn": "#9a6700", "fail": "#cf222e", "error": "#8250df"}


def series_svg(points: list[Point], *, threshold: float | None = None, band: tuple[float, float] | None = None,
               width: int = 260, height: int = 60, title: str = "") -> Markup:
    """A line over ``points`` (one circle per point, coloured by status), with a dashed threshold line and a
    shaded expected band when given."""
    pad = 6
    values = [p.value for p in points if p.value is not None]
    extra = [v for v in (threshold, *(band or ())) if v is not None]
    low, high = min([*values, *extra], default=0.0), max([*values, *extra], default=1.0)
    if high == low:
        low, high = low - 1, high + 1
    step = (width - 2 * pad) / max(1, len(points) - 1)

    def x(i: int) -> float:
        return pad + i * step if len(points) > 1 else width / 2

    def y(v: float) -> float:
        return height - pad - (v - low) / (high - low) * (height - 2 * pad)

    parts = [f'<svg xmlns="http://www.w3.org/2000/svg" class="chart" width="{width}" height="{height}" '
             f'viewBox="0 0 {width} {height}" role="img" aria-label="{escape(title)}">']
    if band is not None:
        top, bottom = y(max(band)), y(min(band))
        parts.append(f'<rect class="band" x="{pad}" y="{top:.1f}" width="{width - 2 * pad}" '
                     f'height="{max(1.0, bottom - top):.1f}" fill="#ddf4ff"/>')
    if threshold is not None:
        parts.append(f'<line class="threshold" x1="{pad}" x2="{width - pad}" y1="{y(threshold):.1f}" '
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
