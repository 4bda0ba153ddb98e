"""The ``watchdog`` group and what every command shares: context settings, options, the ``--db`` resolver.

Command modules (scan, audits, report, daemon) import from here; nothing here imports them back.
"""

from __future__ import annotations

import logging
from importlib import import_module
from pathlib import Path
from typing import TYPE_CHECKING, Any

import click

from watchdog import __version__
from watchdog.errors import ConfigError
from watchdog.redact import RedactingFilter

if TYPE_CHECKING:
    from watchdog.database import DatabaseConfig

CONTEXT = {"help_option_names": ["-h", "--help"], "max_content_width": 100}
#: the modules that register commands on ``cli``; imported when a command is looked up, so that
#: ``watchdog --version`` (and a usage error) starts without them
COMMAND_MODULES = ("scan", "audits", "report", "daemon", "mcp", "dashboard", "profile", "diff")
#: where each command lives, so that running one imports only its module (``watchdog scan`` does not pay
#: for the daemon, the MCP server or the profiler); a command missing here is still found, by importing all
#: of COMMAND_MODULES (tests/test_cli.py checks that this map is complete)
COMMAND_HOMES = {
    "scan": "scan", "query": "scan", "check-config": "scan", "demo": "scan",
    "run": "audits", "history": "audits", "review": "audits",
    "verify": "report", "graph": "report", "resume": "report", "trail": "report",
    "serve": "daemon", "schedule": "daemon", "status": "daemon",
    "mcp": "mcp", "dashboard": "dashboard", "profile": "profile", "suggest": "profile", "diff": "diff",
}


class LazyGroup(click.Group):
    """A group whose commands' modules are imported when its commands are looked at: the invoked
    command's own module only (:data:`COMMAND_HOMES`), or all of them to list or find one."""

    _loaded = False

    @property  # type: ignore[override]
    def commands(self) -> dict[str, click.Command]:
        if not self._loaded:
            self._loaded = True
            for name in COMMAND_MODULES:
                import_module(f"watchdog.cli.{name}")
        return self._commands

    @commands.setter
    def commands(self, value: dict[str, click.Command]) -> None:
        self._commands = value

    def add_command(self, cmd: click.Command, name: str | None = None) -> None:
        # the modules' @cli.command() decorators register here: into the dict itself, loading nothing else
        name = name or cmd.name
        if name is None:
            raise TypeError("Command has no name.")
        click.core._check_nested_chain(self, name, cmd, register=True)
        self._commands[name] = cmd

    def get_command(self, ctx: click.Context, cmd_name: str) -> click.Command | None:
        home = COMMAND_HOMES.get(cmd_name)
        if home is not None and not self._loaded:
            import_module(f"watchdog.cli.{home}")  # registers into self._commands without loading the rest
            found = self._commands.get(cmd_name)
            if found is not None:
                return found
        return super().get_command(ctx, cmd_name)


class GreedyOption(click.Option):
    """An option that takes every value up to the next option: ``--checks a.yaml b.yaml``."""

    def __init__(self, *args: Any, **kwargs: Any):
        kwargs.setdefault("multiple", True)
        super().__init__(*args, **kwargs)

    def add_to_parser(self, parser: Any, ctx: click.Context) -> None:
        super().add_to_parser(parser, ctx)
        for name in self.opts:
            option = parser._long_opt.get(name) or parser._short_opt.get(name)
            if option is None:
                continue
            original = option.process

            def process(value: Any, state: Any, original: Any = original) -> None:
                values = [value]
                while state.rargs and not state.rargs[0].startswith("-"):
                    values.append(state.rargs.pop(0))
                for item in values:
                    original(item, state)

            option.process = process


def config_option(func: Any) -> Any:
    return click.option("--config", "config_path", type=click.Path(dir_okay=False, path_type=Path), default=None,
                        help="Configuration file (default: $WATCHDOG_CONFIG or config/watchdog.yaml).")(func)


@click.group(cls=LazyGroup, context_settings=CONTEXT)
@click.version_option(__version__, prog_name="watchdog")
@click.option("--debug", is_flag=True, help="Show tracebacks and debug logs.")
@click.pass_context
def cli(ctx: click.Context, debug: bool) -> None:
    """watchdog: a data-quality watchdog for SQL databases.

    \b
    Example:
        watchdog demo
        watchdog scan --db sqlite:///shop.db --checks checks/shop.yaml
    """
    ctx.obj = {"debug": debug}
    handler = logging.StreamHandler()
    handler.addFilter(RedactingFilter())
    logging.basicConfig(level=logging.DEBUG if debug else logging.WARNING, handlers=[handler])


def resolve_db(db: str, config_path: Path | None) -> DatabaseConfig:
    """``--db`` is a URL or a libpq keyword string (with the default limits), or the name of a database in
    the configuration. A bare file path gets told the URL to write. Raises :class:`NotADatabase` when ``db``
    is neither a URL nor a configured name (a ``user:pw@host`` without a scheme, a typo)."""
    from watchdog.redact import redact_url, register_secret, register_url_secrets
    from watchdog.urls import database_url, dsn_pairs, file_url_hint, looks_like_dsn

    register_url_secrets(db)  # its password is a secret before anything can print it (a URL, or no URL at all)
    if looks_like_dsn(db):
        for key, value in _safe_pairs(db, dsn_pairs):
            if key in ("password", "sslpassword"):
                register_secret(value)
    try:
        url = database_url(db)
    except ValueError as exc:
        raise ConfigError(f"--db: not a valid keyword=value connection string: {exc}") from None
    if url is not None:
        from watchdog.database import DatabaseConfig

        return DatabaseConfig(url=url)
    from watchdog.settings import load_settings  # a name: the configuration (and pydantic) is needed

    url_like = any(c in db for c in ":@")  # meant as a URL (``user:pw@host/db`` without a scheme...)
    try:
        settings = load_settings(config_path)
    except ConfigError:
        if not url_like:  # a name: the configuration it is looked up in is broken, which is the error
            raise
        raise NotADatabase(f"--db {redact_url(db)!r} is not a database URL: {URL_FORM}") from None
    try:
        return settings.database(db)
    except ConfigError as exc:
        hint = file_url_hint(db, Path(db).expanduser().is_file())
        if not hint and url_like:
            hint = f"; nor a database URL: {URL_FORM}"
        raise NotADatabase(f"{exc}{hint}") from None


#: how to write a database URL, for a ``--db`` that is none
URL_FORM = "write a URL, e.g. postgresql+psycopg://user@host/db or sqlite:///path/to/file.db"


class NotADatabase(ConfigError):
    """``--db`` names no database: neither a URL nor a database in the configuration. (A ConfigError for
    most commands; a scan says it as the error of a scan that could not open its database.)"""


def _safe_pairs(text: str, pairs: Any) -> list[tuple[str, str]]:
    try:
        return list(pairs(text))
    except ValueError:
        return []
