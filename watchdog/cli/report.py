"""CLI commands around the LLM report: verify, graph, resume, trail."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import click

from watchdog.cli import console
from watchdog.cli.app import CONTEXT, cli, config_option
from watchdog.errors import ConfigError
from watchdog.exit_codes import ExitCode


@cli.command(context_settings=CONTEXT)
@click.option("--report", "report_path", required=True, type=click.Path(dir_okay=False, path_type=Path),
              help="The Markdown report to check.")
@click.option("--findings", "findings_path", required=True, type=click.Path(dir_okay=False, path_type=Path),
              help="The findings.json the report was written from.")
@click.option("--json", "as_json", is_flag=True, help='Print {"passed", "ok", "bad"} as JSON.')
def verify(report_path: Path, findings_path: Path, as_json: bool) -> None:
    """Check every number a report attributes to a finding against the findings.

    Exit code: 0 passed, 1 bad items found, 3 error.

    \b
    Example:
        watchdog verify --report reports/demo/latest/report.md --findings reports/demo/latest/findings.json --json
    """
    from watchdog.findings import FindingsDoc
    from watchdog.verify import verify_fn

    try:
        text = report_path.read_text(encoding="utf-8")
    except OSError as exc:
        raise ConfigError(f"cannot read the report {report_path}: {exc.strerror or exc}") from None
    try:
        doc = FindingsDoc.load(findings_path)
    except OSError as exc:
        raise ConfigError(f"cannot read the findings {findings_path}: {exc.strerror or exc}") from None
    except ValueError as exc:
        raise ConfigError(f"{findings_path} is not a findings file: {str(exc).splitlines()[0]}") from None
    result = verify_fn(text, doc)
    data = result.to_json_dict()
    if as_json:
        click.echo(json.dumps(data, indent=2, ensure_ascii=False))
    else:
        for line in data["ok"]:
            click.echo(f"ok   {line}")
        for item in data["bad"]:
            click.echo(f"BAD  {item['message']}")
        click.echo("passed" if data["passed"] else f"{len(data['bad'])} bad item(s)")
    sys.exit(int(ExitCode.OK) if data["passed"] else 1)


@cli.command(context_settings=CONTEXT)
@config_option
def graph(config_path: Path | None) -> None:
    """Print the LLM report graph as a Mermaid diagram.

    \b
    Example:
        watchdog graph > docs/graph.mmd
    """
    from watchdog.graph.graph import mermaid
    from watchdog.settings import load_settings_or_default

    click.echo(mermaid(load_settings_or_default(config_path).llm))


@cli.command(context_settings=CONTEXT)
@click.argument("run_id")
@click.option("--db", default=None, help="Database URL or name for the specialist's query tool (optional).")
@config_option
def resume(run_id: str, db: str | None, config_path: Path | None) -> None:
    """Resume an LLM report run that was interrupted, from its last checkpoint (no re-scan).

    \b
    Example:
        watchdog resume 20261129T060000Z-1a2b3c
    """
    from watchdog.cli.app import resolve_db
    from watchdog.run.audit import resume_run
    from watchdog.sandbox import Sandbox
    from watchdog.settings import load_settings_or_default

    settings = load_settings_or_default(config_path)
    if db:
        with Sandbox.for_database(resolve_db(db, config_path)) as box:
            outcome = resume_run(settings, run_id, sandbox=box)
    else:
        outcome = resume_run(settings, run_id)
    console.llm_summary(outcome.llm)
    for d in outcome.deliveries:
        console.stderr().print(f"delivery {d['channel']} -> {d['target']}: {d['status']}"
                               + (f" ({d['last_error']})" if d.get("last_error") else ""))
    if outcome.awaiting_review:
        console.stderr().print(f"awaiting review: watchdog review approve {run_id}")
    click.echo(str(outcome.llm.report_path))
    sys.exit(int(outcome.llm.findings.exit_code()))  # what the scan of these findings exits with


@cli.command(context_settings=CONTEXT)
@click.argument("run_id")
@click.option("--json", "as_json", is_flag=True, help="Print the history as JSON.")
@config_option
def trail(run_id: str, as_json: bool, config_path: Path | None) -> None:
    """Print a run's state history: every step, and what it changed.

    \b
    Example:
        watchdog trail 20261129T060000Z-1a2b3c
    """
    from watchdog.graph.runner import trail_of
    from watchdog.settings import load_settings_or_default

    steps = trail_of(run_id, load_settings_or_default(config_path))
    if as_json:
        click.echo(json.dumps(steps, indent=2, default=str))
        return
    for step in steps:
        ran = ", ".join(s for s in step["ran"] if s) or "(input)"
        click.echo(f"step {step['step']}: {ran} -> next {', '.join(step['next']) or 'END'}")
        for key, value in step["changed"].items():
            click.echo(f"    {key}: {value}")
