"""``watchdog dashboard``: a static HTML site drawn from the run history (no server, no script, no CDN).

``index.html`` shows each audit's status timeline (one cell per run); ``<audit>.html`` a chart per check of
its failing rows, rate or measurement over the runs with its threshold and axes (problems of the newest run
first), the newest findings with samples, and a link to each run's filed report. A check that passed in every
run with the same figure gets one line in a list instead of a flat chart.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import quote

from watchdog.report import escape as esc
from watchdog.report import view
from watchdog.report.charts import Point, series_svg
from watchdog.report.deliveries_view import delivery_lines
from watchdog.report.html import environment

#: runs shown per audit
DEFAULT_RUNS = 60


@dataclass
class CheckSeries:
    name: str
    measure: str                       # what the chart shows: failing rows | rate | rows | age (s)
    points: list[Point] = field(default_factory=list)
    threshold: float | None = None
    latest: dict[str, Any] | None = None

    @property
    def svg(self) -> Any:
        return series_svg(self.points, threshold=self.threshold, title=f"{self.name}: {self.measure}",
                          width=300, height=110, axes=self.format)

    @property
    def status(self) -> str:
        """The newest run's status of the check (the order of the page: problems first)."""
        return str((self.latest or {}).get("status") or "error")

    @property
    def ran(self) -> int:
        """The runs the check ran in."""
        return sum(p.value is not None for p in self.points)

    @property
    def flat(self) -> bool:
        """Passed in every run it ran in, with the same figure each time: nothing to chart."""
        shown = [p for p in self.points if p.value is not None]
        return bool(shown) and all(p.status == "pass" and p.value == shown[0].value for p in shown)

    def format(self, value: float) -> str:
        """A value of this series as people read it: 12%, 2h 0m, 1,200."""
        if self.measure == "rate":
            return esc.percent(value)
        if self.measure == "age (s)":
            return esc.duration(value)
        return esc.number(int(value) if float(value).is_integer() else round(value, 4))

    @property
    def figure(self) -> str:
        """The newest figure with its threshold, written as in the reports: ``0 (max 5)``, ``19 rows (min 1)``."""
        latest = self.latest or {}
        values = [p.value for p in self.points if p.value is not None]
        if not values:
            return "–"
        params, shown = latest.get("params") or {}, self.format(values[-1])
        if self.measure in ("rows", "age (s)"):
            unit = " rows" if self.measure == "rows" else " old"
            return f"{shown}{unit}{view.bounds(latest.get('check'), params)}"
        return f"{shown} {self.measure}{view.allowed(params)}"


def _measure(finding: dict[str, Any]) -> tuple[str, float | None, float | None]:
    """(what is charted, its value, its threshold) for one finding."""
    params = finding.get("params") or {}
    check = finding.get("check")
    if check == "row_count":
        bound = params.get("min") if params.get("min") is not None else params.get("max")
        return "rows", finding.get("observed"), bound
    if check == "volume":  # a table monitor
        return "rows", finding.get("observed"), params.get("min_rows")
    if check == "freshness":
        return "age (s)", finding.get("observed"), params.get("max_age_s")
    if params.get("max_rate") is not None:
        return "rate", finding.get("rate"), params.get("max_rate")
    return "failing rows", finding.get("failing"), params.get("max_count")


def audit_series(runs: list[Any], findings_by_run: dict[str, list[dict[str, Any]]]) -> list[CheckSeries]:
    """One series per check, oldest run first (a check missing from a run is a gap); the checks in the
    order of the suites."""
    order = list(reversed(runs))
    names: dict[str, None] = {}
    for run in order:
        names.update(dict.fromkeys(f["name"] for f in findings_by_run.get(run.id, [])))
    out = []
    for name in names:
        series = CheckSeries(name=name, measure="")
        for run in order:
            found = next((f for f in findings_by_run.get(run.id, []) if f["name"] == name), None)
            if found is None:
                series.points.append(Point(run.id, None))
                continue
            series.measure, value, series.threshold = _measure(found)
            series.points.append(Point(run.id, float(value) if value is not None else None,
                                       str(found.get("status") or "error")))
            series.latest = found
        out.append(series)
    return out


def sparklines(store: Any, audit: str, runs: int = 10) -> dict[str, str]:
    """Check name -> a compact inline SVG of its figure over the audit's last ``runs`` runs (for e-mails)."""
    recent = store.list_runs(audit, limit=runs)
    findings = store.findings_of_runs([run.id for run in recent])
    return {s.name: str(series_svg(s.points, threshold=s.threshold, width=110, height=22,
                                   title=f"{s.name}: {s.measure} over the last {len(recent)} runs"))
            for s in audit_series(recent, findings)}


#: the files of a filed run the pages link to (and ``serve --ui`` serves), with their content types
RUN_FILES = {"report.html": "text/html; charset=utf-8", "report.md": "text/markdown; charset=utf-8",
             "findings.json": "application/json"}


def page_href(audit: str) -> str:
    """The address of an audit's page, relative to the index (the name percent-encoded: any name is safe)."""
    return quote(audit, safe="") + ".html"


def run_files(run: Any) -> list[tuple[str, Path]]:
    """(name, path) of each of :data:`RUN_FILES` present in ``run``'s filed folder."""
    if not run.out_dir:
        return []
    folder = Path(run.out_dir)
    return [(name, folder / name) for name in RUN_FILES if (folder / name).is_file()]


def index_page(store: Any, audits: list[str], *, runs_per_audit: int = DEFAULT_RUNS,
               live: dict[str, Any] | None = None) -> str:
    """``index.html``: each audit's status timeline."""
    entries = []
    for audit in audits:
        runs = store.list_runs(audit, limit=runs_per_audit)
        entries.append({"name": audit, "page": page_href(audit), "runs": list(reversed(runs)),
                        "latest": runs[0] if runs else None})
    return str(environment().get_template("dashboard_index.html.j2").render(audits=entries, live=live))


def audit_page(store: Any, audit: str, links: Callable[[Any], list[tuple[str, str]]], *,
               runs_per_audit: int = DEFAULT_RUNS, live: dict[str, Any] | None = None) -> str:
    """An audit's page: its runs (each with ``links(run)``: (label, href) of its files), a chart per check."""
    runs = store.list_runs(audit, limit=runs_per_audit)
    findings = store.findings_of_runs([run.id for run in runs])
    series = view.ordered(audit_series(runs, findings))  # problems first, by the newest run
    return str(environment().get_template("dashboard_audit.html.j2").render(
        audit=audit, runs=list(reversed(runs)), series=[s for s in series if not s.flat],
        flat=[s for s in series if s.flat], links={run.id: links(run) for run in runs}, live=live,
        deliveries={run.id: delivery_lines(run) for run in runs},
        newest=findings.get(runs[0].id, []) if runs else []))


def build_dashboard(settings: Any, out_dir: Path, *, runs_per_audit: int = DEFAULT_RUNS) -> list[Path]:
    """Write the site into ``out_dir``; returns the pages written."""
    from watchdog.history import HistoryStore

    def relative(run: Any) -> list[tuple[str, str]]:
        return [(name, quote(os.path.relpath(path, out_dir))) for name, path in run_files(run)]

    out_dir.mkdir(parents=True, exist_ok=True)
    store = HistoryStore(settings.history_url())
    written: list[Path] = []
    try:
        for audit in sorted(settings.audits):
            page = out_dir / f"{audit}.html"
            page.write_text(audit_page(store, audit, relative, runs_per_audit=runs_per_audit), encoding="utf-8")
            written.append(page)
        index = out_dir / "index.html"
        index.write_text(index_page(store, sorted(settings.audits), runs_per_audit=runs_per_audit),
                         encoding="utf-8")
    finally:
        store.close()
    return [index, *written]
