"""Terminal output for the CLI (rich): progress while scanning, a summary table at the end.

rich and the report helpers are imported when first used, so a command that prints JSON (or
only an error line) does not pay for them.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING, Any

from watchdog.redact import redact

if TYPE_CHECKING:
    from rich.console import Console
    from rich.table import Table

    from watchdog.findings import FindingsDoc
    from watchdog.report.view import Order
    from watchdog.sandbox import QueryResult

STATUS_STYLE = {"pass": "green", "warn": "yellow", "fail": "red", "error": "bold red"}


def stdout() -> Console:
    from rich.console import Console

    console = Console(highlight=False, soft_wrap=False)
    if not console.is_terminal:  # piped or captured: wide enough that check names are not cut
        console = Console(highlight=False, soft_wrap=False, width=160)
    return console


def stderr() -> Console:
    from rich.console import Console

    return Console(stderr=True, highlight=False)


@contextmanager
def scan_progress(enabled: bool = True) -> Iterator[Any]:
    """A progress bar on stderr (only on a terminal); yields the scanner's ``on_progress`` callback."""
    if not (enabled and sys.stderr.isatty()):  # no bar to draw: no need for rich
        yield None
        return
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, SpinnerColumn, TextColumn, TimeElapsedColumn

    from watchdog.report.escape import plain_text

    console = stderr()
    progress = Progress(SpinnerColumn(), TextColumn("[progress.description]{task.description}"), BarColumn(),
                        MofNCompleteColumn(), TimeElapsedColumn(), console=console, transient=True,
                        disable=not (enabled and console.is_terminal))
    with progress:
        task = progress.add_task("scanning", total=None)

        def update(done: int, total: int, label: str) -> None:
            progress.update(task, completed=done, total=total, description=f"scanning {plain_text(label, 40)}")

        yield update


#: terminal columns below which the Owner and Tags columns are left out (the check names need the room)
LABEL_COLUMNS_MIN_WIDTH = 110


def summary_table(doc: FindingsDoc, trends: dict[str, str] | None = None, order: Order = "problems",
                  labels: bool = True) -> Table:
    """One row per check, problems first unless ``order`` is ``suite``; thresholds written after the figures
    (``3 (max 5)``); a check's error in full (it is said nowhere else on the terminal). Owner and Tags
    columns when the checks carry any and ``labels`` allows (owners are who to call, so they come first)."""
    from rich.table import Table
    from rich.text import Text

    from watchdog.report.escape import WHOLE, plain_text
    from watchdog.report.render import failing_cell, measure
    from watchdog.report.view import ordered, owners, tags

    table = Table(title=None, show_lines=False)
    columns = [("Check", "left"), ("Status", "left"), ("Failing", "right"), ("Total", "right"),
               ("Rate / observed", "right")]
    if trends:
        columns.insert(2, ("Change", "left"))
    shown = [(name, read) for name, read in (("Owner", owners), ("Tags", tags))
             if labels and any(read(f) for f in doc.findings)]
    columns += [(name, "left") for name, _ in shown]
    for name, justify in columns:
        table.add_column(name, justify=justify, overflow="fold")  # type: ignore[arg-type]
    for f in ordered(doc.findings, order):
        style = STATUS_STYLE[f.status]
        error = f.status == "error" and not f.not_run
        figure = redact(plain_text(f.error, WHOLE)) if error else measure(f)
        cells: list[Any] = [plain_text(f.name, WHOLE), f"[{style}]{f.status.upper()}[/]",
                 "" if f.failing is None else failing_cell(f), "" if f.total is None else f"{f.total:,}", figure]
        if trends:
            cells.insert(2, trends.get(f.name, ""))
        cells += [Text(plain_text(", ".join(read(f)), 80)) for _, read in shown]  # data: never rich markup
        table.add_row(*cells)
    return table


def show_scan(doc: FindingsDoc, trends: dict[str, str] | None = None, order: Order = "problems") -> None:
    """A scan on the terminal: the error that stopped it first (in full, once), the table (left out when no
    check ran at all), the summary line."""
    if doc.error:
        error_line("error", doc.error)
    out = stdout()
    if any(not f.not_run for f in doc.findings) or not doc.findings:
        out.print(summary_table(doc, trends, order, labels=out.width >= LABEL_COLUMNS_MIN_WIDTH))
    out.print(summary_line(doc))


def history_table(runs: list[Any]) -> Table:
    from rich.table import Table

    table = Table(show_lines=False)
    for name in ("Run", "Audit", "Status", "Started", "Checks", "Failed", "Warned", "Errors", "Deliveries"):
        table.add_column(name, overflow="fold")
    for r in runs:
        s = r.summary or {}
        deliveries = ", ".join(f"{d.channel}:{d.status}" for d in r.deliveries)
        style = {"passed": "green", "warned": "yellow", "failed": "red", "error": "bold red"}.get(r.status, "")
        table.add_row(r.id, r.audit, f"[{style}]{r.status}[/]" if style else r.status, r.started_at,
                      *(str(s.get(k, "")) for k in ("checks", "failed", "warned", "errors")), deliveries)
    return table


def summary_line(doc: FindingsDoc) -> str:
    s = doc.summary
    not_run = sum(f.not_run for f in doc.findings)
    return (f"{s.checks} checks: {s.failed} failed, {s.warned} warned, {s.passed} passed, {s.errors} errors"
            + (f" ({not_run} not run)" if not_run else ""))


def query_table(result: QueryResult) -> Table:
    """The rows as a table of plain text: values are data, never markup or emoji codes."""
    from rich.table import Table
    from rich.text import Text

    from watchdog.findings import jsonable
    from watchdog.report.escape import plain_text

    table = Table(show_lines=False)
    for column in result.columns:
        table.add_column(Text(plain_text(column, 40)), overflow="fold")
    for row in result.rows:
        table.add_row(*[Text(plain_text(jsonable(v), 80)) for v in row])
    return table


def query_json(result: QueryResult) -> str:
    """``{columns, rows, truncated}``: each row an array in column order, so duplicate names survive."""
    from watchdog.findings import jsonable

    rows = [jsonable(list(row)) for row in result.rows]
    return json.dumps({"columns": result.columns, "rows": rows, "truncated": result.truncated}, ensure_ascii=False,
                      indent=2)


def error_line(prefix: str, message: object) -> None:
    """One clear line on stderr: ``prefix: message`` (secrets masked), after what stdout holds so far (so
    the two read in order when they go to one log)."""
    text = redact(message)
    sys.stdout.flush()
    sys.stderr.write(f"{prefix}: {text}\n")
    sys.stderr.flush()


def llm_summary(outcome: Any) -> None:
    """What the LLM report did, and the tokens it used per role (on stderr: stdout may carry JSON)."""
    from watchdog.report.escape import plain_text

    err = stderr()
    if outcome.outcome == "verified":
        err.print(f"LLM report: verified (fix rounds: {outcome.fix_rounds}, re-plans: {outcome.replans}) -> "
                  f"{outcome.report_path}")
    else:
        err.print(f"LLM report: NOT verified, delivered the deterministic report instead: "
                  f"{redact(plain_text(outcome.reason, 300))}")
        if outcome.unverified_path:
            err.print(f"unverified draft kept at {outcome.unverified_path}")
    for role, counts in sorted(outcome.tokens.items()):
        err.print(f"tokens {role}: {counts.get('input', 0):,} in, {counts.get('output', 0):,} out, "
                  f"{counts.get('calls', 0)} call(s)")
    err.print(f"run id: {outcome.run_id} (audit: {outcome.audit_path})")
