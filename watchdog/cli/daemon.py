"""CLI commands for the daemon: ``serve`` (run every audit on its schedule), ``schedule`` (next run times)
and ``status`` (the leader, its lease, the standbys)."""

from __future__ import annotations

import json
import logging
import os
import sys
from pathlib import Path
from typing import Any

import click

from watchdog.cli.app import CONTEXT, cli, config_option


@cli.command(context_settings=CONTEXT)
@config_option
@click.option("--for", "duration", type=click.FloatRange(min=0, min_open=True), default=None, metavar="SECONDS",
              help="Stop cleanly after this many seconds (default: run until SIGTERM or Ctrl-C).")
@click.option("--grace", type=click.FloatRange(min=0), default=60.0, show_default=True, metavar="SECONDS",
              help="On stop, how long to wait for running audits before recording them interrupted.")
@click.option("--ui", "ui_bind", metavar="[HOST:]PORT", default=None,
              help="Also serve the dashboard live, read-only, at HOST:PORT (':8080' is 127.0.0.1:8080). Any "
                   "address but loopback needs a token in $WATCHDOG_UI_TOKEN.")
@click.option("--no-schedule", is_flag=True,
              help="With --ui: serve the pages only; run no audit (no lease, no lock: beside another serve).")
@click.pass_context
def serve(ctx: click.Context, config_path: Path | None, duration: float | None, grace: float,
          ui_bind: str | None, no_schedule: bool) -> None:
    """Run every audit that has a `schedule:` on it, until stopped.

    Each run is the same as `watchdog run <audit>`: recorded in the history, filed, delivered.
    Jobs are kept in the history database (table wd_apscheduler_jobs); an audit never overlaps
    itself (a fire during a run is skipped); runs missed while stopped are coalesced into one
    if no later than scheduler.misfire_grace_s. Deliveries waiting in the outbox are retried every
    scheduler.outbox_interval_s. One audit failing (database, LLM or SMTP down) never stops the
    others. Logs one line per run start and end on stderr.

    SIGTERM or Ctrl-C stops cleanly: no new runs, running audits finish (up to --grace seconds),
    exit 0. A second signal, or the grace running out, stops at once: the runs still going are
    recorded `interrupted` (exit 130). A bad configuration stops it at start (exit 3).

    --ui serves the pages `watchdog dashboard` writes, drawn from the history at each request (a new
    run shows on reload), and each run's report.html, report.md and findings.json; GET and HEAD
    only. A port in use is one line (exit 3).

    \b
    Example:
        watchdog serve
        watchdog serve --config config/watchdog.yaml --grace 300
        watchdog serve --for 60          # a smoke check: serve one minute, then stop cleanly
        watchdog serve --ui :8080        # and the dashboard at http://127.0.0.1:8080/
        watchdog serve --ui :8080 --no-schedule
        WATCHDOG_UI_TOKEN=... watchdog serve --ui 0.0.0.0:8080 --no-schedule
    """
    from watchdog.daemon.log import configure_logging
    from watchdog.daemon.service import FORCED_EXIT
    from watchdog.daemon.service import serve as run_daemon
    from watchdog.settings import load_settings

    if no_schedule and not ui_bind:
        raise click.UsageError("--no-schedule serves the pages only: it needs --ui [HOST:]PORT")
    settings = load_settings(config_path)
    configure_logging(debug=bool((ctx.find_root().obj or {}).get("debug")))
    ui = _start_ui(settings, ui_bind) if ui_bind else None
    try:
        code = _pages_only(duration) if no_schedule else run_daemon(settings, duration=duration, grace=grace)
    finally:
        if ui is not None:
            ui.stop()
    if no_schedule:
        logging.getLogger("watchdog.ui").info("stopped cleanly")
    if code == FORCED_EXIT:  # audits abandoned mid-run: their threads cannot be joined, leave now
        logging.shutdown()
        sys.stdout.flush()
        sys.stderr.flush()
        os._exit(code)
    sys.exit(code)


def _start_ui(settings: Any, bind: str) -> Any:
    from watchdog.daemon.ui import TOKEN_ENV, start_ui
    from watchdog.redact import register_secret

    token = os.environ.get(TOKEN_ENV) or None
    register_secret(token)
    return start_ui(settings, bind, token=token)


def _pages_only(duration: float | None) -> int:
    from watchdog.daemon.ui import log, wait_for_stop

    log.info("pages only (--no-schedule): no audit runs here; stop with SIGTERM or Ctrl-C")
    log.info("stopping (%s)", wait_for_stop(duration))
    return 0


@cli.command(context_settings=CONTEXT)
@config_option
@click.option("--count", type=click.IntRange(min=1, max=1000), default=3, show_default=True,
              help="How many next run times per audit.")
@click.option("--json", "as_json", is_flag=True, help="Print the schedule as JSON.")
def schedule(config_path: Path | None, count: int, as_json: bool) -> None:
    """Show each audit's schedule and its next run times (in the audit's time zone).

    Computed from the same triggers `watchdog serve` uses. Interval schedules (`every: 30m`) are
    counted from now; the daemon counts them from its start.

    \b
    Example:
        watchdog schedule
        watchdog schedule --count 5 --json
    """
    from watchdog.daemon.triggers import upcoming_runs
    from watchdog.settings import load_settings

    settings = load_settings(config_path)
    entries = upcoming_runs(settings, count)
    if as_json:
        click.echo(json.dumps([e.to_json_dict() for e in entries], indent=2, ensure_ascii=False))
        return
    if not entries:
        click.echo(f"no audits configured in {settings.source}")
    for entry in entries:
        click.echo(f"{entry.audit}: {entry.schedule}")
        for moment in entry.next_runs:
            click.echo(f"  {moment.strftime('%a %Y-%m-%d %H:%M:%S %Z')}")


@cli.command(context_settings=CONTEXT)
@config_option
@click.option("--json", "as_json", is_flag=True, help="Print the status as JSON.")
def status(config_path: Path | None, as_json: bool) -> None:
    """Show which `watchdog serve` leads, its lease, the standbys and each audit's next run.

    Read from the history database the instances share: the leader holds a lease there (renewed
    every scheduler.lease_s / 3); standbys take over when it expires. Next runs come from the
    leader's job store (else a forecast from the schedule).

    \b
    Example:
        watchdog status
        watchdog status --json --config config/watchdog.yaml
    """
    from watchdog.daemon.status import gather_status, render_status
    from watchdog.settings import load_settings

    report = gather_status(load_settings(config_path))
    click.echo(json.dumps(report, indent=2, ensure_ascii=False) if as_json else render_status(report))
