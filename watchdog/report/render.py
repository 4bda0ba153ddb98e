"""Render the deterministic report from findings (Jinja2). Complete and correct by construction."""

from __future__ import annotations

from functools import lru_cache

from jinja2 import Environment, FileSystemBytecodeCache, PackageLoader, StrictUndefined

from watchdog.findings import Finding, FindingsDoc
from watchdog.report import escape, rules_view
from watchdog.trends import MARKS, counts


@lru_cache(maxsize=1)
def _environment() -> Environment:
    env = Environment(
        loader=PackageLoader("watchdog", "report/templates"),
        autoescape=False,  # Markdown: values are escaped explicitly with the md filter
        undefined=StrictUndefined,
        trim_blocks=True,
        lstrip_blocks=True,
        keep_trailing_newline=True,
        # compiled templates are kept (in a private per-user folder of the temporary directory, checked by
        # Jinja2): compiling report.md.j2 again cost each scan more than the scan of a small table
        bytecode_cache=_bytecode_cache(),
    )
    env.filters.update(md=escape.md_cell, code=escape.md_code, paragraph=escape.md_paragraph, number=escape.number,
                       percent=escape.percent, duration=escape.duration, fence=escape.code_fence)
    env.globals.update(measure=measure, anomaly_lines=rules_view.anomaly_lines, rule_lines=rules_view.rule_lines)
    return env


def _bytecode_cache() -> FileSystemBytecodeCache | None:
    try:
        return FileSystemBytecodeCache()
    except RuntimeError:  # no private cache folder can be made: compile each time
        return None


def measure(f: Finding) -> str:
    """The figure of the table's last column: the rate for row checks, the observation otherwise."""
    if f.check == "row_count":
        return f"{escape.number(f.observed)} rows"
    if f.check == "freshness":
        return "no rows" if f.observed is None else f"newest is {escape.duration(f.observed)} old"
    return escape.percent(f.rate)


def render_markdown(doc: FindingsDoc, *, banner: str | None = None, trends: dict[str, str] | None = None) -> str:
    """The Markdown report: summary, one table row per check (with its change since the previous run when
    ``trends`` is given), a section per failed/warned/errored check."""
    problems = [f for f in doc.findings if f.status in ("fail", "warn")]
    errors = [f for f in doc.findings if f.status == "error"]
    return _environment().get_template("report.md.j2").render(doc=doc, problems=problems, errors=errors,
                                                              banner=banner, trends=trends,
                                                              changes=_changes_line(trends))


def _changes_line(trends: dict[str, str] | None) -> str | None:
    if trends is None:
        return None
    tally = counts(trends)
    return ", ".join(f"{tally[m]} {m}" for m in MARKS)


def render_changes_markdown(doc: FindingsDoc, trends: dict[str, str]) -> str:
    """A section listing what changed since the previous run (appended to a verified LLM report)."""
    return _environment().get_template("changes.md.j2").render(doc=doc, trends=trends, changes=_changes_line(trends))
