"""``watchdog mcp``: the sandbox, suites, history and verify_fn as an MCP server."""

from __future__ import annotations

import logging
import os
from pathlib import Path

import click

from watchdog.cli.app import CONTEXT, cli, config_option


@cli.command("mcp", context_settings=CONTEXT)
@click.option("--http", "http", metavar="HOST:PORT", default=None,
              help="Serve streamable HTTP at HOST:PORT (path /mcp) instead of stdio. Any address but loopback "
                   "needs a bearer token in $WATCHDOG_MCP_TOKEN.")
@config_option
def mcp_command(http: str | None, config_path: Path | None) -> None:
    """Serve watchdog's read-only tools to MCP clients (assistants, IDE agents).

    Tools: list_databases, list_tables, describe_table, query, run_checks, latest_findings, history,
    verify_report. Only databases named in the configuration are reachable (unless mcp.allow_urls);
    every query runs in the sandbox with the limits of mcp: in the configuration.

    \b
    Example:
        watchdog mcp --config config/watchdog.yaml
        watchdog mcp --http 127.0.0.1:8765
        WATCHDOG_MCP_TOKEN=... watchdog mcp --http 0.0.0.0:8765
    """
    from watchdog.mcp.transport import TOKEN_ENV, serve
    from watchdog.redact import RedactingFilter, register_secret
    from watchdog.settings import load_settings_or_default

    token = os.environ.get(TOKEN_ENV) or None
    register_secret(token)
    handler = logging.StreamHandler()  # stderr: stdout carries the protocol on stdio
    handler.addFilter(RedactingFilter())
    logging.getLogger("watchdog.mcp").addHandler(handler)
    logging.getLogger("watchdog.mcp").setLevel(logging.INFO)
    logging.getLogger("watchdog.mcp").propagate = False
    serve(load_settings_or_default(config_path), http=http, token=token)
