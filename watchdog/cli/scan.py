"""Commands that work on a database directly: ``scan``, ``query``, ``check-config``, ``demo``."""

from __future__ import annotations

import sys
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING, Any, TextIO

import click

from watchdog.cli import console
from watchdog.cli.app import CONTEXT, GreedyOption, NotADatabase, cli, config_option, resolve_db
from watchdog.defaults import (
    DEFAULT_EXPORT_LIMIT,
    DEFAULT_MAX_ROWS,
    DEFAULT_PARALLEL,
    DEFAULT_SAMPLE,
    DEFAULT_TIMEOUT_S,
)
from watchdog.errors import ConfigError, WatchdogError
from watchdog.exit_codes import ExitCode
from watchdog.report.view import DEFAULT_ORDER, ORDERS, Order

if TYPE_CHECKING:  # the scanner is imported inside the commands (``scan`` starts its SQLite worker first)
    from watchdog.database import DatabaseConfig
    from watchdog.run.scan_run import ScanOutcome
    from watchdog.settings import Settings


@cli.command(context_settings=CONTEXT)
@click.option("--db", default=None, help="Database URL (SQLAlchemy form), or a database name from the config "
              "(with --file: default duckdb:///:memory:).")
@click.option("--file", "files", multiple=True, metavar="[NAME=]PATH",
              help="A CSV/Parquet/JSON file (or glob) to check as table NAME (default: the file's stem), "
                   "read by DuckDB; repeatable.")
@click.option("--checks", "checks", cls=GreedyOption, required=True, metavar="PATH [PATH...]",
              help="Check-suite YAML files, or folders: every *.yaml/*.yml below them, in the order of their "
                   "relative paths.")
@click.option("--tags", "tags", multiple=True, metavar="TAG[,TAG...]",
              help="Run only the checks with one of these tags (inherited suite -> table -> check); repeatable.")
@click.option("--owner", "owners", multiple=True, metavar="OWNER",
              help="Run only the checks of one of these owners, as written in the suites (@alice); repeatable.")
@click.option("--exclude-tags", "exclude_tags", multiple=True, metavar="TAG[,TAG...]",
              help="Leave out the checks with any of these tags; repeatable.")
@click.option("--allow-empty", is_flag=True, help="Accept suites (or a selection) that hold no check at all (else "
              "exit 3: a scan that checks nothing would pass).")
@click.option("--out", "out_dir", type=click.Path(file_okay=False, path_type=Path), default=None,
              help="Folder for findings.json and report.md (default: reports/adhoc/<UTC timestamp>/).")
@click.option("--json", "as_json", is_flag=True, help="Print the findings JSON on stdout instead of the table.")
@click.option("--sample", type=click.IntRange(min=0), default=DEFAULT_SAMPLE, show_default=True,
              help="Failing rows to fetch per breaching check (0: none).")
@click.option("--timeout", "timeout_s", type=click.FloatRange(min=0, min_open=True), default=None,
              help=f"Seconds allowed per query (default: the database's timeout_s, else {DEFAULT_TIMEOUT_S:g}).")
@click.option("--parallel", type=click.IntRange(min=1), default=None,
              help=f"SQLite: statements run at once when they are slow, each in its own read-only worker "
                   f"(default: the database's parallel, else {DEFAULT_PARALLEL}; 1: one at a time).")
@click.option("--order", type=click.Choice(ORDERS), default=DEFAULT_ORDER, show_default=True,
              help="How the table and the reports list the checks: problems first (failed, could not run, warned, "
                   "then passed; suite order within each), or in the suites' order.")
@click.option("--llm", is_flag=True, help="Also have an LLM write the report; its numbers are verified "
              "(needs OPENAI_API_KEY and/or OPENAI_BASE_URL, or llm: in the config).")
@click.option("--no-diagnose", "no_diagnose", is_flag=True,
              help="Do not diagnose failing checks (where their rows concentrate, since when, which values).")
@click.option("--export-failures", "export_dir", type=click.Path(file_okay=False, path_type=Path), default=None,
              help="Write every failing row of each failing or warning check to DIR/<check>.csv, with "
                   "DIR/<check>.json (the cap, whether it was hit, rows written, the reproducing SQL).")
@click.option("--format", "export_format", type=click.Choice(["csv", "parquet"]), default="csv", show_default=True,
              help="The export's file format (parquet needs the duckdb extra).")
@click.option("--export-limit", type=click.IntRange(min=1), default=DEFAULT_EXPORT_LIMIT, show_default=True,
              help="Most rows exported per check.")
@config_option
def scan(db: str | None, files: tuple[str, ...], checks: tuple[str, ...], out_dir: Path | None, as_json: bool,
         sample: int, timeout_s: float | None, parallel: int | None, order: Order, llm: bool, allow_empty: bool,
         no_diagnose: bool, export_dir: Path | None, export_format: str, export_limit: int,
         tags: tuple[str, ...], owners: tuple[str, ...], exclude_tags: tuple[str, ...],
         config_path: Path | None) -> None:
    """Run check suites against a database and write findings.json and report.md.

    Exit code: 0 all passed, 1 a check failed, 2 only warnings, 3 an error
    (bad suite, no check at all, no connection, a check that could not run, --llm without an endpoint).
    --tags, --owner and --exclude-tags run only the matching checks; a selection that matches
    none is "no check at all".

    \b
    Example:
        watchdog scan --db sqlite:///reports/demo/crm.db --checks checks/demo_crm.yaml
        watchdog scan --db postgresql://reader@db/shop --checks checks/ --out out/ --json
        watchdog scan --file customers=data/customers.csv --file "data/orders/*.parquet" --checks lake.yaml
        watchdog scan --db shop --checks checks/ --export-failures failed/ --export-limit 1000000
        watchdog scan --db crm --checks checks/ --tags finance --owner @alice --exclude-tags pii
        OPENAI_API_KEY=... watchdog scan --db crm --checks checks/demo_crm.yaml --llm
    """
    from watchdog.sandbox.sqlite_session import prestart_for

    database = _with_files(db, files, config_path).with_limits(timeout_s=timeout_s, parallel=parallel)
    prestart_for(database.url)  # a SQLite worker starts while the scanner is imported and the suites read

    from watchdog.run.scan_run import run_scan, timestamp_dir
    from watchdog.scan.selection import CheckSelection

    settings = None
    no_endpoint = None
    if llm:  # the configuration's llm: section (pydantic) only for an LLM report
        settings, no_endpoint = _llm_settings(config_path)
    target = out_dir or timestamp_dir(Path("reports").resolve() / "adhoc")
    export = None
    if export_dir is not None:
        from watchdog.run.export_failures import ExportRequest

        export = ExportRequest(export_dir, export_format, export_limit)
    with console.scan_progress(enabled=True) as progress, _counterparts(config_path):
        outcome = run_scan(database, checks, out_dir=target, sample=sample, on_progress=progress,
                           llm=llm and no_endpoint is None, settings=settings, allow_empty=allow_empty,
                           order=order, diagnose=not no_diagnose, export=export,
                           selection=CheckSelection.of(tags, owners, exclude_tags))
    _show_outcome(outcome, as_json, order)
    if no_endpoint is not None:  # the scan's findings and report are written and shown; then why no LLM report
        console.error_line(no_endpoint.prefix, no_endpoint)
        sys.exit(int(ExitCode.ERROR))
    sys.exit(int(outcome.exit_code))


def _llm_settings(config_path: Path | None) -> tuple[Settings, WatchdogError | None]:
    """The settings of an LLM report, and why it cannot be written (no model endpoint), if so: the scan
    then still runs and shows its summary before that error."""
    from watchdog.graph.models import LLMNotConfigured, build_models
    from watchdog.settings import load_settings_or_default

    settings = load_settings_or_default(config_path)
    try:
        build_models(settings.llm)  # only to check the configuration (a local server starts with the run)
    except LLMNotConfigured as exc:
        return settings, exc
    return settings, None


def _counterparts(config_path: Path | None) -> Any:
    """Reconcile checks' ``with:`` names come from ``--config`` when it is given (else the default file)."""
    from watchdog.reconcile import counterpart

    if config_path is None:
        return counterpart.using(None)
    return counterpart.using(lambda name: resolve_db(name, config_path))


def _with_files(db: str | None, files: tuple[str, ...], config_path: Path | None) -> DatabaseConfig:
    """``--db`` (default: DuckDB in memory when files are given) with the ``--file`` tables added."""
    from watchdog.database import DatabaseConfig
    from watchdog.sandbox.file_tables import IN_MEMORY, FileTableError, is_duckdb_url, parse_spec

    if db is None and not files:
        raise click.UsageError("give --db URL|NAME, or --file [NAME=]PATH to check files")
    try:
        database = resolve_db(db or IN_MEMORY, config_path)
    except NotADatabase as exc:  # the scan runs, says so once as its error and marks every check not run
        if files or db is None:
            raise
        return DatabaseConfig(url=db, unusable=str(exc))
    if not files:
        return database
    if not is_duckdb_url(database.url):
        raise ConfigError(f"--file needs a DuckDB database (--db {IN_MEMORY} or duckdb:///path.duckdb), "
                          f"not {database.url.split(':', 1)[0]}")
    tables = dict(database.files)
    given: set[str] = set()
    for spec in files:
        try:
            name, path = parse_spec(spec)
        except FileTableError as exc:
            raise ConfigError(str(exc)) from None
        if name in given:
            raise ConfigError(f"--file {spec!r}: two files are named {name!r}; write --file OTHER_NAME=PATH")
        given.add(name)
        tables[name] = str(Path(path).expanduser().absolute())
    return replace(database, files=tables)


def _show_outcome(outcome: ScanOutcome, as_json: bool, order: Order = DEFAULT_ORDER) -> None:
    if as_json:
        click.echo(outcome.doc.to_json(), nl=False)
        if outcome.doc.error:
            console.error_line("error", outcome.doc.error)
    else:
        console.show_scan(outcome.doc, order=order)
        console.stdout().print(f"findings: {outcome.findings_path}\nreport:   {outcome.report_path}")
    if outcome.llm is not None:
        console.llm_summary(outcome.llm)


@cli.command(context_settings=CONTEXT)
@click.option("--db", required=True, help="Database URL, or a database name from the config.")
@click.argument("sql", required=False)
@click.option("--file", "-f", "sql_file", type=click.File("r", encoding="utf-8"), default=None,
              help="Read the statement from this file ('-' for standard input).")
@click.option("--max-rows", type=click.IntRange(min=0), default=None,
              help=f"Most rows to return (default: the database's max_rows, else {DEFAULT_MAX_ROWS}).")
@click.option("--timeout", "timeout_s", type=click.FloatRange(min=0, min_open=True), default=None,
              help=f"Seconds allowed (default: the database's timeout_s, else {DEFAULT_TIMEOUT_S:g}).")
@click.option("--json", "as_json", is_flag=True,
              help="Print {columns, rows, truncated} as JSON; each row is an array in column order.")
@config_option
def query(db: str, sql: str | None, sql_file: TextIO | None, max_rows: int | None, timeout_s: float | None,
          as_json: bool, config_path: Path | None) -> None:
    """Run one read-only statement through the sandbox and print the rows.

    The statement is the argument, a file (`--file F`), or standard input (`-`).
    Put `--` before a statement that starts with `-` (a comment).
    Values are printed as data: markup in them is never rendered.
    Anything but a single read is refused (exit 3, a line starting `refused:`);
    a failed statement prints a line starting `error:` (exit 3).

    \b
    Example:
        watchdog query --db sqlite:///reports/demo/crm.db "SELECT status, count(*) FROM contacts GROUP BY 1"
        watchdog query --db sqlite:///reports/demo/crm.db --file audit.sql --json
        echo "SELECT 1" | watchdog query --db sqlite:///reports/demo/crm.db -
        watchdog query --db sqlite:///reports/demo/crm.db -- $'-- why\\nSELECT 1'
    """
    from watchdog.sandbox import Sandbox

    statement = _statement(sql, sql_file)
    with Sandbox.for_database(resolve_db(db, config_path).with_limits(timeout_s=timeout_s)) as box:
        result = box.query(statement, max_rows=max_rows)
    if as_json:
        click.echo(console.query_json(result))
    else:
        out = console.stdout()
        out.print(console.query_table(result))
        note = " (truncated: more rows than --max-rows)" if result.truncated else ""
        out.print(f"{len(result.rows)} row(s){note}", markup=False)


def _statement(sql: str | None, sql_file: TextIO | None) -> str:
    """The statement from the argument, ``-`` (standard input) or ``--file``: exactly one of them."""
    if sql is not None and sql_file is not None:
        raise click.UsageError("give the statement either as an argument or with --file, not both")
    if sql_file is not None:
        return sql_file.read()
    if sql == "-":
        return sys.stdin.read()
    if sql is None:
        raise click.UsageError("no statement: give it as an argument, with --file F, or on standard input (-)")
    return sql


@cli.command("check-config", context_settings=CONTEXT)
@config_option
@click.option("--checks", "checks", cls=GreedyOption, metavar="PATH [PATH...]", default=(),
              help="Suites to validate (files, or folders searched at any depth), checked together as one scan "
                   "would read them: only these when --config is not given, else besides the configured audits'.")
@click.option("--allow-empty", is_flag=True, help="Accept --checks suites that hold no check at all.")
@click.option("--db", default=None, help="Also expand column globs (`column: 'code_*'`) against this database's "
              "tables (a URL or a database name from the config), reporting a glob that matches no column as "
              "`scan` would; only the catalogue is read.")
def check_config(config_path: Path | None, checks: tuple[str, ...], allow_empty: bool, db: str | None) -> None:
    """Validate the configuration and every check suite, without reading any table.

    With --checks and no --config, only the suites given are validated. The suites of one audit (and the
    --checks suites) are read together, as a scan reads them: a check name used twice, or no check at
    all, is an error as it is for `scan`. Warnings (printed, exit 0)
    point at `where:` conditions that would read differently on MySQL/MariaDB, and, for the incremental tables
    of a configured audit, at a high-water column, a `unique` key or a `foreign_key` parent key that no index
    serves (the only thing read from a database: its catalogue of indexes). Column globs are expanded against
    the tables of --db when it is given (its catalogue read; else a warning says they were not).

    \b
    Example:
        watchdog check-config
        watchdog check-config --checks checks/shop.yaml
        watchdog check-config --config config/watchdog.yaml --checks checks/extra.yaml
        watchdog check-config --checks checks/shop.yaml --db sqlite:///shop.db
    """
    from watchdog.scan.index_lint import window_warnings
    from watchdog.scan.selection import select_checks
    from watchdog.scan.suites import Suite, SuiteError, load_suites
    from watchdog.scan.where_lint import portability_warnings

    settings = None
    # suites scanned together, allow_empty, the audit that selects some of their checks
    groups: list[tuple[list[Path] | tuple[str, ...], bool, str | None]] = []
    if config_path is not None or not checks:
        from watchdog.settings import load_settings

        settings = load_settings(config_path)
        groups += [([settings.path(p) for p in audit.checks], audit.allow_empty, name)
                   for name, audit in settings.audits.items()]
    if checks:
        groups.append((checks, allow_empty, None))
    problems: dict[str, None] = {}  # a suite shared by two audits is reported once
    suites: dict[Path, Suite] = {}
    by_database: dict[str, list[Suite]] = {}
    for paths, allowed, audit_name in groups:
        try:
            loaded = load_suites(paths, allow_empty=allowed)
            if audit_name is not None and settings is not None:  # the audit's tags/owners select some checks
                select_checks(loaded, settings.audits[audit_name].selection, allow_empty=allowed, audit=audit_name)
        except SuiteError as exc:
            problems.update(dict.fromkeys(str(p) for p in exc.problems))
            continue
        suites.update((suite.path.resolve(), suite) for suite in loaded)
        problems.update(dict.fromkeys(_glob_problems(loaded, db, config_path)))
        if audit_name is not None and settings is not None:
            by_database.setdefault(settings.audits[audit_name].database, []).extend(loaded)
    if problems:
        raise ConfigError(f"{len(problems)} problem(s) in check suites:" + "".join(f"\n  {p}" for p in problems))
    warnings = [w for suite in suites.values() for w in [*portability_warnings(suite), *window_warnings(suite)]]
    if settings is not None:
        warnings += _index_warnings(settings, by_database)
    globs = [c for suite in suites.values() for c in suite.checks if c.column_glob]
    if globs and db is None:
        warnings.append(f"{len(globs)} check(s) use column globs (the first at {globs[0].source}:{globs[0].line}); "
                        "give --db to check that each matches a column")
    count = sum(len(suite.checks) for suite in suites.values())
    for warning in warnings:
        console.error_line("warning", warning)
    suites_text = f"{len(suites)} suites, {count} checks"
    if settings is None:
        click.echo(f"ok: {suites_text}")
    else:
        click.echo(f"ok: {settings.source} ({len(settings.databases)} databases, {len(settings.audits)} audits), "
                   f"{suites_text}")


def _glob_problems(suites: list[Any], db: str | None, config_path: Path | None) -> list[str]:
    """The column globs of ``suites`` that the tables of ``db`` cannot expand, as ``scan`` reports them."""
    checks = [c for suite in suites for c in suite.checks]
    if db is None or not any(c.column_glob for c in checks):
        return []
    from watchdog.sandbox import Sandbox
    from watchdog.scan.column_globs import expand_for

    with Sandbox.for_database(resolve_db(db, config_path)) as box:
        return list(expand_for(box, checks)[1].values())


def _index_warnings(settings: Any, by_database: dict[str, list[Any]]) -> list[str]:
    """check-config's index warnings for each database whose audits have incremental tables."""
    from watchdog.sandbox import Sandbox
    from watchdog.scan.index_lint import index_warnings

    warnings: list[str] = []
    for name, suites in by_database.items():
        if not any(c.table_options.get("incremental") for s in suites for c in s.checks):
            continue
        try:
            with Sandbox.for_database(settings.database(name)) as box:
                warnings += [f"database {name}: {w}" for w in index_warnings(box, suites)]
        except Exception as exc:  # noqa: BLE001 (unreachable database: the configuration itself is still valid)
            warnings.append(f"database {name}: could not read its indexes ({str(exc).splitlines()[0][:200]})")
    return warnings


@cli.command(context_settings=CONTEXT)
@config_option
def demo(config_path: Path | None) -> None:
    """Build the demo CRM database (SQLite, planted defects) and run the demo audit on it.

    Exits 0 when the audit ran (the planted defects are meant to be found), 3 on an error.

    \b
    Example:
        watchdog demo
    """
    from watchdog.run.demo import run_demo
    from watchdog.run.scan_run import ScanOutcome
    from watchdog.settings import load_settings

    settings = load_settings(config_path)
    with console.scan_progress() as progress:
        run, _planted = run_demo(settings, on_progress=progress)
    assert run.scan is not None
    _show_outcome(ScanOutcome.filed(run.scan, run.run_dir), as_json=False)
    click.echo(f"run {run.run_id} recorded in the history; latest: {run.run_dir.parent / 'latest'}")
    sys.exit(int(ExitCode.ERROR) if run.exit_code == ExitCode.ERROR else 0)
