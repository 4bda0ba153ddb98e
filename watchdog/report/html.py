"""The standalone HTML report (and the HTML/text e-mails) rendered from findings with Jinja2.

Every value reaches the page through autoescaping; values that come from the database (sample
rows, column names, error messages) are first made one plain line and truncated with
:func:`watchdog.report.escape.plain_text`, and their ``{``/``}`` are written as character
references so a value holding template syntax stays inert even if the page is templated again.
The page has inline CSS only, no script, and a Content-Security-Policy that forbids scripts.
"""

from __future__ import annotations

from functools import lru_cache
from typing import Any

from jinja2 import Environment, PackageLoader, StrictUndefined
from markupsafe import Markup, escape

from watchdog.findings import Finding, FindingsDoc
from watchdog.report import escape as esc
from watchdog.report import rules_view, view
from watchdog.report.diagnosis_text import sentences
from watchdog.report.render import error_groups, failing_cell, measure

MARK_SYMBOLS = {"new": "●", "resolved": "✓", "worse": "▲", "better": "▼", "unchanged": "="}


def _autoescape(name: str | None) -> bool:
    """HTML templates are autoescaped; only the plain-text e-mail (``*.txt.j2``) is not."""
    return not (name or "").endswith(".txt.j2")


def cell(value: Any, limit: int = esc.CELL_LIMIT) -> Markup:
    """A value as inert HTML text: one line, control characters visible, truncated, escaped."""
    text = str(escape(esc.plain_text(value, limit)))
    return Markup(text.replace("{", "&#123;").replace("}", "&#125;"))


def inert(value: Any) -> Markup:
    """Escaped text kept whole (SQL): ``{`` and ``}`` as character references too."""
    return Markup(str(escape(str(value))).replace("{", "&#123;").replace("}", "&#125;"))


def columns(sample: list[dict[str, Any]]) -> list[str]:
    """The columns of sample rows, in first-seen order."""
    seen: dict[str, None] = {}
    for row in sample:
        seen.update(dict.fromkeys(row))
    return list(seen)


def figures(f: Finding) -> str:
    """The figures of a check as one short sentence (no database text in it: numbers only), its threshold
    written as in every rendering (``3 (max 5) of 800 failing``)."""
    if f.status == "error":
        return "not run" if f.not_run else "could not run"
    if f.check == "row_count":
        lo, hi = f.params.get("min"), f.params.get("max")
        if lo is None and hi is None and f.details.get("anomaly"):
            return f"{esc.number(f.observed)} rows"
        bounds = [f"at least {esc.number(lo)}" if lo is not None else "",
                  f"at most {esc.number(hi)}" if hi is not None else ""]
        expected = " and ".join(b for b in bounds if b) or "at least 1"
        return f"{esc.number(f.observed)} rows (expected {expected})"
    if f.check == "freshness":
        return measure(f)
    if f.failing is None:
        return measure(f)
    if f.check in ("schema", "schema_changes"):
        return f"{esc.number(f.failing)} column(s) in question"
    if f.total is None:
        return f"{failing_cell(f)} failing"
    return f"{failing_cell(f)} of {esc.number(f.total)} failing ({esc.percent(f.rate)})"


def mark_label(mark: str | None) -> str:
    if not mark:
        return ""
    return f"{MARK_SYMBOLS.get(mark, '?')} {esc.plain_text(mark, 20)}"


@lru_cache(maxsize=1)
def environment() -> Environment:
    """The Jinja2 environment of the HTML report and the e-mails (autoescape on, strict undefined)."""
    env = Environment(
        loader=PackageLoader("watchdog", "report/templates"),
        autoescape=_autoescape,
        undefined=StrictUndefined,
        trim_blocks=True,
        lstrip_blocks=True,
        keep_trailing_newline=True,
    )
    env.filters.update(cell=cell, inert=inert, text=esc.plain_text, number=esc.number, percent=esc.percent,
                       duration=esc.duration)
    env.globals.update(measure=measure, figures=figures, failing_cell=failing_cell, columns=columns,
                       mark_label=mark_label, whole=esc.WHOLE, own_functions=view.own_functions,
                       query_command=view.query_command,
                       anomaly_lines=rules_view.anomaly_lines, rule_lines=rules_view.rule_lines,
                       diagnosis=sentences,
                       sparkline=rules_view.sparkline, owners_of=view.owners, tags_of=view.tags,
                       problem_owners=view.problem_owners)
    return env


def render_html(doc: FindingsDoc, *, trends: dict[str, str] | None = None, banner: str | None = None,
                audit: str | None = None, order: view.Order = view.DEFAULT_ORDER) -> str:
    """The HTML report: summary, one table row per check (problems first unless ``order`` is ``suite``),
    a section per failed/warned check, the checks that could not run (each error said once)."""
    findings = view.ordered(doc.findings, order)
    problems = [f for f in findings if f.status in ("fail", "warn")]
    not_run = sum(f.not_run for f in findings)
    return environment().get_template("report.html.j2").render(
        doc=doc, findings=findings, problems=problems, errors=error_groups(findings), not_run=not_run,
        trends=trends, banner=banner, audit=audit)
