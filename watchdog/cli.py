"""The ``watchdog`` command line. Business logic lives elsewhere; here: options, output, exit codes.

Errors become one clear line (``error: ...`` / ``refused: ...``) and exit code 3, never a
traceback unless ``--debug`` is given.
"""

from __future__ import annotations

import logging
import sys
from pathlib import Path
from typing import Any

import click

from watchdog import __version__, console
from watchdog.errors import ConfigError, QueryRefused, WatchdogError
from watchdog.exit_codes import ExitCode
from watchdog.redact import RedactingFilter, redact
from watchdog.runner import ScanOutcome, expand_suite_paths, run_scan, timestamp_dir
from watchdog.scanner import DEFAULT_SAMPLE

CONTEXT = {"help_option_names": ["-h", "--help"], "max_content_width": 100}


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


def _config_option(func: Any) -> Any:
    return click.option("--config", "config_path", type=click.Path(dir_okay=False, path_type=Path), default=None,
                        help="Configuration file (default: $WATCHDOG_CONFIG or config/watchdog.yaml).")(func)


@click.group(context_settings=CONTEXT)
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


def _resolve_db(db: str, config_path: Path | None) -> tuple[str, float | None, int | None]:
    """``--db`` is a URL, or the name of a database in the configuration."""
    if "://" in db:
        return db, None, None
    from watchdog.settings import load_settings

    settings = load_settings(config_path)
    return settings.database_url(db), settings.databases[db].timeout_s, settings.databases[db].max_rows


@cli.command(context_settings=CONTEXT)
@click.option("--db", required=True, help="Database URL (SQLAlchemy form), or a database name from the config.")
@click.option("--checks", "checks", cls=GreedyOption, required=True, metavar="PATH [PATH...]",
              help="Check-suite YAML files (or folders of them).")
@click.option("--out", "out_dir", type=click.Path(file_okay=False, path_type=Path), default=None,
              help="Folder for findings.json and report.md (default: reports/adhoc/<UTC timestamp>/).")
@click.option("--json", "as_json", is_flag=True, help="Print the findings JSON on stdout instead of the table.")
@click.option("--sample", type=click.IntRange(min=0), default=DEFAULT_SAMPLE, show_default=True,
              help="Failing rows to fetch per breaching check (0: none).")
@click.option("--timeout", "timeout_s", type=click.FloatRange(min=0, min_open=True), default=None,
              help="Seconds allowed per query (default: the database's timeout_s, else 30).")
@click.option("--llm", is_flag=True, help="Also have an LLM write the report; its numbers are verified "
              "(needs OPENAI_API_KEY and/or OPENAI_BASE_URL, or llm: in the config).")
@_config_option
def scan(db: str, checks: tuple[str, ...], out_dir: Path | None, as_json: bool, sample: int,
         timeout_s: float | None, llm: bool, config_path: Path | None) -> None:
    """Run check suites against a database and write findings.json and report.md.

    Exit code: 0 all passed, 1 a check failed, 2 only warnings, 3 an error
    (bad suite, no connection, a check that could not run, --llm without an endpoint).

    \b
    Example:
        watchdog scan --db sqlite:///reports/demo/crm.db --checks checks/demo_crm.yaml
        watchdog scan --db postgresql://reader@db/shop --checks checks/ --out out/ --json
        OPENAI_API_KEY=... watchdog scan --db crm --checks checks/demo_crm.yaml --llm
    """
    from watchdog.settings import load_settings_or_default

    url, db_timeout, db_max_rows = _resolve_db(db, config_path)
    settings = load_settings_or_default(config_path) if llm else None
    target = out_dir or timestamp_dir(Path("reports").resolve() / "adhoc")
    with console.scan_progress(enabled=True) as progress:
        outcome = run_scan(url, checks, out_dir=target, timeout_s=timeout_s or db_timeout, max_rows=db_max_rows,
                           sample=sample, on_progress=progress, llm=llm, settings=settings)
    _show_outcome(outcome, as_json)
    sys.exit(int(outcome.exit_code))


def _show_outcome(outcome: ScanOutcome, as_json: bool) -> None:
    if as_json:
        click.echo(outcome.doc.to_json(), nl=False)
    else:
        out = console.stdout()
        out.print(console.summary_table(outcome.doc))
        out.print(console.summary_line(outcome.doc))
        out.print(f"findings: {outcome.findings_path}\nreport:   {outcome.report_path}")
    if outcome.llm is not None:
        console.llm_summary(outcome.llm)
    if outcome.doc.error:
        console.error_line("error", outcome.doc.error)


@cli.command(context_settings=CONTEXT)
@click.option("--db", required=True, help="Database URL, or a database name from the config.")
@click.argument("sql")
@click.option("--max-rows", type=click.IntRange(min=0), default=None, help="Most rows to return (default 1000).")
@click.option("--timeout", "timeout_s", type=click.FloatRange(min=0, min_open=True), default=None,
              help="Seconds allowed (default 30).")
@click.option("--json", "as_json", is_flag=True, help="Print {columns, rows, truncated} as JSON.")
@_config_option
def query(db: str, sql: str, max_rows: int | None, timeout_s: float | None, as_json: bool,
          config_path: Path | None) -> None:
    """Run one read-only statement through the sandbox and print the rows.

    Anything but a single read is refused (exit 3, a line starting `refused:`);
    a failed statement prints a line starting `error:` (exit 3).

    \b
    Example:
        watchdog query --db sqlite:///reports/demo/crm.db "SELECT status, count(*) FROM contacts GROUP BY 1"
    """
    from watchdog.sandbox import Sandbox

    url, db_timeout, db_max_rows = _resolve_db(db, config_path)
    with Sandbox(url, timeout_s=timeout_s or db_timeout or 30, max_rows=db_max_rows or 1000) as box:
        result = box.query(sql, max_rows=max_rows)
    if as_json:
        click.echo(console.query_json(result))
    else:
        out = console.stdout()
        out.print(console.query_table(result))
        note = " (truncated: more rows than --max-rows)" if result.truncated else ""
        out.print(f"{len(result.rows)} row(s){note}")


@cli.command("check-config", context_settings=CONTEXT)
@_config_option
@click.option("--checks", "checks", cls=GreedyOption, metavar="PATH [PATH...]", default=(),
              help="Extra suites to validate besides those of the configured audits.")
def check_config(config_path: Path | None, checks: tuple[str, ...]) -> None:
    """Validate the configuration and every check suite, without touching a database.

    \b
    Example:
        watchdog check-config
        watchdog check-config --config config/watchdog.yaml --checks checks/extra.yaml
    """
    from watchdog.settings import load_settings
    from watchdog.suites import SuiteError, load_suites

    settings = load_settings(config_path)
    paths = [settings.path(p) for audit in settings.audits.values() for p in audit.checks]
    paths += expand_suite_paths(checks)
    problems = []
    count = 0
    for path in dict.fromkeys(paths):
        try:
            count += sum(len(s.checks) for s in load_suites([path]))
        except SuiteError as exc:
            problems.extend(exc.problems)
    if problems:
        raise ConfigError(f"{len(problems)} problem(s) in check suites:" + "".join(f"\n  {p}" for p in problems))
    click.echo(f"ok: {settings.source} ({len(settings.databases)} databases, {len(settings.audits)} audits), "
               f"{len(dict.fromkeys(paths))} suites, {count} checks")


@cli.command(context_settings=CONTEXT)
@_config_option
def demo(config_path: Path | None) -> None:
    """Build the demo CRM database (SQLite, planted defects) and run the demo audit on it.

    Exits 0 when the audit ran (the planted defects are meant to be found), 3 on an error.

    \b
    Example:
        watchdog demo
    """
    from watchdog.demo import run_demo
    from watchdog.settings import load_settings

    settings = load_settings(config_path)
    with console.scan_progress() as progress:
        run, _planted = run_demo(settings, on_progress=progress)
    assert run.scan is not None
    _show_outcome(run.scan, as_json=False)
    click.echo(f"run {run.run_id} recorded in the history; latest: {run.run_dir.parent / 'latest'}")
    sys.exit(int(ExitCode.ERROR) if run.exit_code == ExitCode.ERROR else 0)


from watchdog import cli_audits, cli_report, cli_scheduler  # noqa: E402,F401  (register their commands)


def main(argv: list[str] | None = None) -> None:
    """Entry point: run the CLI, turning every error into one line and exit code 3."""
    debug = "--debug" in (argv if argv is not None else sys.argv[1:])
    try:
        cli.main(args=argv, prog_name="watchdog", standalone_mode=False)
    except click.exceptions.Exit as exc:
        sys.exit(exc.exit_code)
    except click.exceptions.Abort:
        console.error_line("error", "aborted")
        sys.exit(int(ExitCode.ERROR))
    except click.ClickException as exc:  # usage errors exit 3, not click's 2 (2 means "warnings")
        console.error_line("error", exc.format_message())
        sys.exit(int(ExitCode.ERROR))
    except QueryRefused as exc:
        if debug:
            raise
        console.error_line("refused", exc)
        sys.exit(int(ExitCode.ERROR))
    except WatchdogError as exc:
        if debug:
            raise
        console.error_line(exc.prefix, exc)
        sys.exit(int(ExitCode.ERROR))
    except KeyboardInterrupt:
        console.error_line("error", "interrupted")
        sys.exit(130)
    except Exception as exc:  # a bug: still one line, with the way to see more
        if debug:
            raise
        console.error_line("error", f"unexpected {type(exc).__name__}: {redact(exc)} (run with --debug for details)")
        sys.exit(int(ExitCode.ERROR))
