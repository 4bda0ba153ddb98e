"""``watchdog dashboard``: a static HTML site from the run history."""

from __future__ import annotations

from pathlib import Path

import click

from watchdog.cli.app import CONTEXT, cli, config_option


@cli.command(context_settings=CONTEXT)
@click.option("--out", "out_dir", type=click.Path(file_okay=False, path_type=Path), default=None,
              help="Folder for the site (default: <reports>/dashboard).")
@click.option("--runs", type=click.IntRange(min=1, max=1000), default=60, show_default=True,
              help="Runs shown per audit.")
@config_option
def dashboard(out_dir: Path | None, runs: int, config_path: Path | None) -> None:
    """Write a static HTML dashboard from the history: per audit a status timeline, a chart per check
    (failing rows, rate or measurement over the runs, with its threshold), the newest samples, and a link to
    each run's report. No server and no script: open it from a file share or an e-mail link.

    \b
    Example:
        watchdog dashboard
        watchdog dashboard --config config/watchdog.yaml --out /srv/share/dq
    """
    from watchdog.report.dashboard import build_dashboard
    from watchdog.settings import load_settings

    settings = load_settings(config_path)
    target = out_dir or settings.path("reports") / "dashboard"
    pages = build_dashboard(settings, target, runs_per_audit=runs)
    click.echo(f"dashboard: {pages[0]} ({len(pages) - 1} audit page(s))")
