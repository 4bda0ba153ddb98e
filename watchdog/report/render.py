"""The deterministic Markdown report (``report.md``) built from findings. Complete and correct by construction.

Plain Python rather than a template: every scan writes this report, and importing and running Jinja2 cost a
scan of a small table more than the scan itself (README, Performance). Every value from the database or a
suite goes through :mod:`watchdog.report.escape` (inert Markdown); the HTML report and the e-mails keep their
Jinja2 templates (:mod:`watchdog.report.html`).
"""

from __future__ import annotations

from typing import Any

from watchdog.findings import Finding, FindingsDoc
from watchdog.report import escape as esc
from watchdog.report import rules_view, view
from watchdog.report.diagnosis_text import sentences
from watchdog.trends import MARKS, counts


def measure(f: Finding) -> str:
    """The figure of the table's last column, with its bounds: the rate for row checks, the observation
    otherwise (``200 rows (min 1)``); ``not run`` for a check the scan never ran."""
    if f.status == "error":
        return "not run" if f.not_run else "–"
    bound = view.bounds(f.check, f.params)
    if f.check == "row_count":
        return f"{esc.number(f.observed)} rows{bound}"
    if f.check == "freshness" and f.column is None:  # a table monitor: the age of the table's last change
        return "not known yet" if f.observed is None else f"no change for {esc.duration(f.observed)}{bound}"
    if f.check == "freshness":
        return "no rows" if f.observed is None else f"newest is {esc.duration(f.observed)} old{bound}"
    if f.check == "volume":
        return "–" if f.observed is None else f"{esc.number(f.observed)} rows{bound}"
    if f.rate is None and f.observed is not None:  # a measurement (custom_sql with min/max)
        return f"{esc.number(f.observed)}{bound}"
    return esc.percent(f.rate)


def failing_cell(f: Finding) -> str:
    """The Failing cell: the count and what the check tolerates, ``3 (max 5)``."""
    return "–" if f.failing is None else f"{esc.number(f.failing)}{view.allowed(f.params)}"


def render_markdown(doc: FindingsDoc, *, banner: str | None = None, trends: dict[str, str] | None = None,
                    order: view.Order = view.DEFAULT_ORDER) -> str:
    """The Markdown report: summary, one table row per check (problems first unless ``order`` is
    ``suite``; with its change since the previous run when ``trends`` is given), a section per
    failed/warned check, and the checks that could not run (the same error said once for all of them)."""
    s = doc.summary
    findings = view.ordered(doc.findings, order)
    out = ["# Data-quality report\n", "\n"]
    if banner:
        out += [f"> **{esc.md_cell(banner, 800)}**\n", "\n"]
    out.append(f"**Result:** {s.failed} failed, {s.warned} warned, {s.passed} passed, {s.errors} errors "
               f"({s.checks} checks).  \n")
    out.append(f"**Database:** `{doc.database}` · **Started:** {doc.started_at} · "
               f"**Duration:** {doc.duration_s:.2f} s\n")
    changes = _changes_line(trends)
    if trends is not None and not trends:
        out.append("**Since the previous run:** there is no previous run to compare with (first run).\n")
    elif changes:
        out.append(f"**Since the previous run:** {changes}.\n")
    who = view.problem_owners(findings)
    if who:
        out.append("\n**Owners of the problem checks:** "
                   + ", ".join(f"{esc.md_code(owner)} ({n})" for owner, n in who) + ".\n")
    if doc.error:
        out += ["\n", f"**The scan could not complete:** {esc.md_cell(doc.error, esc.WHOLE)}{_not_run(doc)}\n"]
    out.append("\n")
    if trends:
        out += ["| Check | Status | Change | Failing | Total | Rate / observed |\n", "|---|---|---|---|---|---|\n"]
        out += [f"| {esc.md_code(f.name)} | {f.status.upper()} | {trends.get(f.name, 'new').upper()} | "
                f"{failing_cell(f)} | {esc.number(f.total)} | {measure(f)} |\n" for f in findings]
    else:
        out += ["| Check | Status | Failing | Total | Rate / observed |\n", "|---|---|---|---|---|\n"]
        out += [f"| {esc.md_code(f.name)} | {f.status.upper()} | {failing_cell(f)} | {esc.number(f.total)} | "
                f"{measure(f)} |\n" for f in findings]
    problems = [f for f in findings if f.status in ("fail", "warn")]
    if problems:
        out += ["\n", "## Failed and warned checks\n"]
        for f in problems:
            out += _problem(f, doc.database)
    errors = error_groups(findings)
    if errors:
        out += ["\n", "## Checks that could not run\n"]
        for names, error in errors:
            title = esc.md_code(names[0]) if len(names) == 1 else f"{len(names)} checks"
            out += ["\n", f"### {title} (ERROR)\n", "\n"]
            if len(names) > 1:
                out += [f"{', '.join(esc.md_code(n) for n in names)}:\n", "\n"]
            out.append(f"{esc.md_paragraph(error, esc.WHOLE)}\n")
    return "".join(out)


def _not_run(doc: FindingsDoc) -> str:
    """`` (16 of 16 checks not run).`` after the scan's error, when it left checks not run."""
    count = sum(f.not_run for f in doc.findings)
    return f" ({count} of {len(doc.findings)} checks not run)" if count else ""


def error_groups(findings: list[Finding]) -> list[tuple[list[str], str]]:
    """The checks that could not run by their error (the first check's place, suite order), each error
    once; checks never run (the scan's own error says why) are left out."""
    groups: dict[str, list[str]] = {}
    for f in findings:
        if f.status == "error" and not f.not_run:
            groups.setdefault(f.error or "unknown error", []).append(f.name)
    return [(names, error) for error, names in groups.items()]


def _freshness_line(f: Finding, params: dict[str, Any]) -> str:
    if f.column is None:  # a table monitor: the age of the table's last change
        return f"- {measure(f)}.\n"
    if f.observed is None:
        return f"- No value at all in `{f.column}`.\n"
    allowed = f"; allowed: {esc.md_cell(params['max_age'])}" if "max_age" in params else ""
    return f"- The newest `{f.column}` is {esc.duration(f.observed)} old ({esc.number(f.observed)} s){allowed}.\n"


def _problem(f: Finding, database: str) -> list[str]:
    """The section of one failed or warned check."""
    out = ["\n", f"### {esc.md_code(f.name)} ({f.status.upper()})\n", "\n"]
    if f.description:
        out += [f"{esc.md_paragraph(f.description, 500)}\n", "\n"]
    labels = owner_line(f)
    if labels:
        out += [f"{labels}\n", "\n"]
    params, details = f.params, f.details
    if f.check == "row_count":
        out.append(f"- {esc.number(f.observed)} rows{_expected_rows(params, details)}.\n")
    elif f.check == "freshness":
        out.append(_freshness_line(f, params))
    elif f.check in ("schema", "schema_changes"):
        out.append(f"- Columns in question: {esc.number(f.failing)}.\n")
    elif f.failing is None and f.rate is None and f.observed is not None:  # a measurement
        out.append(f"- Measured: {measure(f)}.\n")
    else:
        of = f" of {esc.number(f.total)} ({esc.percent(f.rate)})" if f.total is not None else ""
        out.append(f"- Failing rows: {esc.number(f.failing)}{of}.\n")
        if "duplicate_values" in details:
            out.append(f"- Distinct duplicated values: {esc.number(details['duplicate_values'])}; rows beyond the "
                       f"first of each: {esc.number(details['excess_rows'])}.\n")
    out += [f"- {esc.md_cell(line, 600)}\n" for line in rules_view.anomaly_lines(f) + rules_view.rule_lines(f)]
    if "max_count" in params or "max_rate" in params:
        tolerated = [f"up to {esc.number(params['max_count'])} rows"] if "max_count" in params else []
        tolerated += [f"a rate up to {esc.percent(params['max_rate'])}"] if "max_rate" in params else []
        out.append(f"- Tolerated: {', '.join(tolerated)}.\n")
    explained = sentences(f)
    if explained:
        out += ["\n", f"**Diagnosis:** {esc.md_paragraph(' '.join(explained), 1600)}\n"]
    if f.sample:
        out += ["\n", f"Sample of failing rows ({len(f.sample)}):\n", "\n"]
        out += _sample_table(f.sample)
    if f.sql:
        out += _reproduce(f.sql, database)
    return out


def owner_line(f: Finding) -> str:
    """``Owner: `@alice` · Tags: `finance`, `pii``` (what the check carries; empty when nothing)."""
    parts = []
    if f.owners:
        parts.append(f"Owner{'s' if len(f.owners) > 1 else ''}: " + ", ".join(esc.md_code(o) for o in f.owners))
    if f.tags:
        parts.append("Tags: " + ", ".join(esc.md_code(t) for t in f.tags))
    return " · ".join(parts)


def _reproduce(sql: str, database: str) -> list[str]:
    """The reproducing statement, and where it runs when it calls watchdog's own SQLite functions."""
    fence = esc.code_fence(sql)
    out = ["\n", "Reproduce with:\n", "\n", f"{fence}sql\n", f"{sql}\n", f"{fence}\n"]
    own = view.own_functions(sql, database)
    if own:
        out += ["\n", f"This statement calls {' and '.join(esc.md_code(n) for n in own)} as watchdog defines "
                       f"{'it' if len(own) == 1 else 'them'} on SQLite (the stock `sqlite3` shell has none, or "
                       "its own with another syntax): run it with "
                       f"{esc.md_code(view.query_command(database), esc.WHOLE)}, the statement on standard input.\n"]
    return out


def _expected_rows(params: dict[str, Any], details: dict[str, Any]) -> str:
    """``; expected at least N and at most M`` (nothing when only an anomaly judged the row count)."""
    has_min, has_max = "min" in params, "max" in params
    if "anomaly" in details and not (has_min or has_max):
        return ""
    bounds = [f"at least {esc.number(params['min'])}"] if has_min else []
    bounds += [f"at most {esc.number(params['max'])}"] if has_max else []
    return "; expected " + (" and ".join(bounds) if bounds else "at least 1")


def _sample_table(sample: list[dict[str, Any]]) -> list[str]:
    columns = list(sample[0].keys())
    out = ["| " + "".join(f"{esc.md_cell(col)} | " for col in columns) + "\n",
           "|" + "---|" * len(columns) + "\n"]
    out += ["| " + "".join(f"{esc.md_cell(value)} | " for value in row.values()) + "\n" for row in sample]
    return out


def _changes_line(trends: dict[str, str] | None) -> str | None:
    if trends is None:
        return None
    tally = counts(trends)
    return ", ".join(f"{tally[m]} {m}" for m in MARKS)


def render_changes_markdown(doc: FindingsDoc, trends: dict[str, str]) -> str:
    """A section listing what changed since the previous run (appended to a verified LLM report)."""
    out = ["\n\n## Changes since the previous run\n", "\n", f"{_changes_line(trends)}.\n", "\n",
           "| Check | Change | Status |\n", "|---|---|---|\n"]
    out += [f"| {esc.md_code(f.name)} | {trends[f.name].upper()} | {f.status.upper()} |\n" for f in doc.findings
            if trends.get(f.name, "unchanged") != "unchanged"]
    return "".join(out)
