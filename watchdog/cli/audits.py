"""CLI commands for configured audits: run, history, review (serve and schedule live in cli_scheduler)."""

from __future__ import annotations

import json
import os
import socket
import sys
from pathlib import Path
from typing import Any

import click

from watchdog.cli import console
from watchdog.cli.app import CONTEXT, cli, config_option


@cli.command(context_settings=CONTEXT)
@click.argument("audit")
@click.option("--json", "as_json", is_flag=True, help="Print the findings JSON on stdout instead of the table.")
@click.option("--tick", metavar="auto|TIME", default=None,
              help="Claim this scheduled time of the audit first (auto: its latest one by its schedule, "
                   "or an ISO time); when it was claimed already, do nothing and exit 0.")
@click.option("--full", is_flag=True, help="Incremental tables: judge every row this time, not only the rows past "
                                          "the last successful run's mark (the mark then moves on as usual).")
@config_option
def run(audit: str, as_json: bool, tick: str | None, full: bool, config_path: Path | None) -> None:
    """Run one configured audit now, by the same code path the daemon uses.

    Files the run under <reports>/<audit>/<run id>/, records it in the history, delivers it
    (or waits for review). Exit codes as `scan`. With --tick, the run claims that scheduled time
    in the history, as the daemon's runs do: a cron job started twice for one time runs once.

    \b
    Example:
        watchdog run demo
        watchdog run demo --tick auto      # from cron or a Kubernetes CronJob
        watchdog run demo --full           # incremental tables: every row this once
    """
    from watchdog.errors import TickTaken
    from watchdog.run.audit import execute_audit
    from watchdog.settings import load_settings

    settings = load_settings(config_path)
    claim = _tick(settings, audit, tick) if tick else None
    try:
        with console.scan_progress() as progress:
            result = execute_audit(settings, audit, on_progress=progress, tick=claim, full=full,
                                   claimed_by=f"run:{socket.gethostname()}:{os.getpid()}" if claim else None)
    except TickTaken as exc:
        click.echo(f"skipped: {exc}", err=True)
        sys.exit(0)
    assert result.scan is not None
    if as_json:
        click.echo(result.scan.doc.to_json(), nl=False)
        if result.scan.doc.error:  # the error that stopped the scan, once, on stderr (stdout carries JSON)
            console.error_line("error", result.scan.doc.error)
    else:
        console.show_scan(result.scan.doc, result.trends)
        console.stdout().print(f"run {result.run_id}: {result.status}\n"
                  + ("filed:    NOT FILED (see below)" if result.filing_error else f"filed:    {result.run_dir}"))
    if result.filing_error:
        click.echo(f"filing failed: {result.filing_error} (the findings are recorded in the history and were "
                   "delivered from memory)", err=True)
    if result.scan.llm is not None:
        console.llm_summary(result.scan.llm)
    for d in result.deliveries:
        console.stderr().print(f"delivery {d['channel']} -> {d['target']}: {d['status']}"
                               + (f" ({d['last_error']})" if d.get("last_error") else ""))
    if result.awaiting_review:
        console.stderr().print(f"awaiting review: watchdog review approve {result.run_id}")
    sys.exit(int(result.exit_code))


def _tick(settings: Any, audit: str, value: str) -> str:
    """The tick key ``--tick`` names: the audit's latest scheduled time (auto) or an ISO time."""
    from datetime import UTC, datetime

    from watchdog.daemon.jobs import tick_key
    from watchdog.daemon.triggers import current_tick

    if value == "auto":
        moment = current_tick(settings.audit(audit))
        if moment is None:
            raise click.UsageError(f"--tick auto: audit {audit!r} has no schedule: to run by a time give --tick TIME")
        return tick_key(moment)
    try:
        moment = datetime.fromisoformat(value.replace("Z", "+00:00"))
    except ValueError:
        raise click.UsageError(f"--tick: {value!r} is neither auto nor an ISO time (2026-01-31T06:00:00Z)") from None
    return tick_key(moment if moment.tzinfo else moment.replace(tzinfo=UTC))


@cli.command(context_settings=CONTEXT)
@click.argument("audit", required=False)
@click.option("--json", "as_json", is_flag=True, help="Print the runs as JSON.")
@click.option("--limit", type=click.IntRange(min=1), default=20, show_default=True, help="How many runs.")
@config_option
def history(audit: str | None, as_json: bool, limit: int, config_path: Path | None) -> None:
    """List recorded runs, newest first.

    \b
    Example:
        watchdog history demo --json
    """
    from watchdog.history import HistoryStore
    from watchdog.settings import load_settings

    settings = load_settings(config_path)
    store = HistoryStore(settings.history_url())
    try:
        runs = store.list_runs(audit, limit=limit)
    finally:
        store.close()
    if as_json:
        click.echo(json.dumps([r.to_json_dict() for r in runs], indent=2, ensure_ascii=False))
        return
    console.stdout().print(console.history_table(runs))


@cli.group(context_settings=CONTEXT, invoke_without_command=True)
@config_option
@click.pass_context
def review(ctx: click.Context, config_path: Path | None) -> None:
    """List runs awaiting review; approve or reject them.

    \b
    Example:
        watchdog review
        watchdog review approve 20261129T060000Z-1a2b3c
        watchdog review reject 20261129T060000Z-1a2b3c --reason "staging data, ignore"
    """
    ctx.ensure_object(dict)
    ctx.obj["config_path"] = config_path
    if ctx.invoked_subcommand is not None:
        return
    from watchdog.history import HistoryStore
    from watchdog.settings import load_settings

    store = HistoryStore(load_settings(config_path).history_url())
    try:
        waiting = store.list_runs(status="awaiting_review", limit=200)
    finally:
        store.close()
    if not waiting:
        click.echo("no run is awaiting review")
    for r in waiting:
        click.echo(f"{r.id}  {r.audit}  {r.started_at}  {Path(r.out_dir or '') / 'report.md'}")


def _decide(ctx: click.Context, run_id: str, approved: bool, reason: str | None, config_path: Path | None) -> None:
    from watchdog.run.audit import decide_review
    from watchdog.settings import load_settings

    settings = load_settings(config_path or ctx.obj.get("config_path"))
    delivered = decide_review(settings, run_id, approved=approved, reason=reason)
    click.echo(f"{run_id}: {'approved' if approved else 'rejected'}")
    for d in delivered:
        click.echo(f"delivery {d['channel']} -> {d['target']}: {d['status']}")


@review.command(context_settings=CONTEXT)
@click.argument("run_id")
@config_option
@click.pass_context
def approve(ctx: click.Context, run_id: str, config_path: Path | None) -> None:
    """Approve a run: it is delivered now.

    \b
    Example:
        watchdog review approve 20261129T060000Z-1a2b3c
    """
    _decide(ctx, run_id, True, None, config_path)


@review.command(context_settings=CONTEXT)
@click.argument("run_id")
@click.option("--reason", required=True, help="Why the run is not delivered (recorded).")
@config_option
@click.pass_context
def reject(ctx: click.Context, run_id: str, reason: str, config_path: Path | None) -> None:
    """Reject a run: nothing is delivered; the reason is recorded.

    \b
    Example:
        watchdog review reject 20261129T060000Z-1a2b3c --reason "known migration in progress"
    """
    _decide(ctx, run_id, False, reason, config_path)
