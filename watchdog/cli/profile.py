"""Commands that start a user from their data: ``profile`` and ``suggest``."""

from __future__ import annotations

import json
from pathlib import Path

import click
from rich.table import Table

from watchdog.cli import console
from watchdog.cli.app import CONTEXT, GreedyOption, cli, config_option, resolve_db
from watchdog.defaults import DEFAULT_TIMEOUT_S, PROFILE_NULL_MARKERS
from watchdog.profile.rules import KINDS, STRICTNESS
from watchdog.profile.stats import TableProfile
from watchdog.report.escape import plain_text
from watchdog.sandbox import Sandbox


def _sandbox(db: str, config_path: Path | None, timeout_s: float | None) -> Sandbox:
    database = resolve_db(db, config_path).with_limits(timeout_s=timeout_s)
    return Sandbox.for_database(database)


def _tables(values: tuple[str, ...]) -> list[str] | None:
    names = [n.strip() for v in values for n in v.split(",") if n.strip()]
    return names or None


def _markers(text: str | None) -> tuple[str, ...] | None:
    """``--null-markers '?,N/A,-'``: the markers, split at commas (kept as written: no blanks trimmed); '' is none."""
    if text is None:
        return None
    return tuple(dict.fromkeys(m for m in text.split(",") if m != "")) if text else ()


_NULL_MARKERS_HELP = ("Text values counted as null markers in text columns, separated by commas, compared exactly "
                      "(default: " + ",".join(PROFILE_NULL_MARKERS) + "; '' for none).")


@cli.command(context_settings=CONTEXT)
@click.option("--db", required=True, help="Database URL (SQLAlchemy form), or a database name from the config.")
@click.option("--tables", "tables", cls=GreedyOption, metavar="TABLE [TABLE...]", help="Only these tables.")
@click.option("--json", "as_json", is_flag=True, help="Print the profile as JSON instead of tables.")
@click.option("--null-markers", "null_markers", metavar="M1,M2,...", default=None, help=_NULL_MARKERS_HELP)
@click.option("--timeout", "timeout_s", type=click.FloatRange(min=0, min_open=True), default=None,
              help=f"Seconds allowed per query (default: the database's timeout_s, else {DEFAULT_TIMEOUT_S:g}).")
@config_option
def profile(db: str, tables: tuple[str, ...], as_json: bool, null_markers: str | None, timeout_s: float | None,
            config_path: Path | None) -> None:
    """Profile tables: rows, and per column nulls, distinct values, min/max, lengths, shapes, top values;
    for text columns also blanks, null markers and the share of numbers stored as text.

    One aggregate SELECT per table and one GROUP BY per low-cardinality column run through the
    read-only sandbox; no row leaves the database. Distinct counts are exact, except on PostgreSQL
    tables of 1,000,000 rows or more, where they are the planner's estimate (marked "~").

    \b
    Example:
        watchdog profile --db sqlite:///reports/demo/crm.db
        watchdog profile --db postgresql://reader@db/shop --tables orders customers --json
        watchdog profile --db sqlite:///beers.db --null-markers '?,N/A,-'
    """
    from watchdog.profile.suggest import profile_database

    with _sandbox(db, config_path, timeout_s) as box, console.scan_progress(enabled=not as_json) as progress:
        profiles = profile_database(box, _tables(tables), on_progress=progress, null_markers=_markers(null_markers))
    if as_json:
        click.echo(json.dumps({"database": box.display_url, "tables": [p.to_dict() for p in profiles]}, indent=2))
        return
    out = console.stdout()
    for p in profiles:
        out.print(_profile_table(p))


def _cell(value: object, width: int = 24) -> str:
    return "" if value is None else plain_text(str(value), width)


def _profile_table(p: TableProfile) -> Table:
    table = Table(title=f"{p.name}: {p.rows:,} rows", title_justify="left")
    for name, justify in [("Column", "left"), ("Type", "left"), ("Nulls", "right"), ("Distinct", "right"),
                          ("Min", "left"), ("Max", "left"), ("Length", "right"), ("Shapes / top values", "left")]:
        table.add_column(name, justify=justify, overflow="fold")  # type: ignore[arg-type]
    for c in p.columns:
        distinct = "" if c.distinct is None else ("~" if c.distinct_method == "estimate" else "") + f"{c.distinct:,}"
        length = "" if c.min_length is None else f"{c.min_length}-{c.max_length}"
        shapes = ", ".join(f"{k} {v:.0%}" for k, v in c.shapes.items())
        top = ", ".join(f"{_cell(v, 16)} ({k:,})" for v, k in (c.top_values or [])[:5])
        found = " (" + ", ".join(f"{_cell(m, 12)} {k:,}" for m, k in c.markers.items()) + ")" if c.markers else ""
        marks = ", ".join(f"{what} {rate:.1%}{found if what == 'markers' else ''}" for what, rate in (
            ("blank", c.blank_rate), ("markers", c.marker_rate), ("numbers as text", c.numeric_text)) if rate)
        extra = "; ".join(x for x in (marks, shapes, top, f"newest {c.age_s / 86400:.1f} d ago" if c.age_s is not None
                                      else "") if x)
        table.add_row(_cell(c.name), _cell(c.type, 16), f"{c.nulls:,} ({c.null_rate:.1%})", distinct,
                      _cell(c.min), _cell(c.max), length, extra)
    return table


@cli.command(context_settings=CONTEXT)
@click.option("--db", required=True, help="Database URL (SQLAlchemy form), or a database name from the config.")
@click.option("--tables", "tables", cls=GreedyOption, metavar="TABLE [TABLE...]", help="Only these tables.")
@click.option("--out", "out_path", type=click.Path(dir_okay=False, path_type=Path), default=None,
              help="Write the suite here (default: print it on stdout).")
@click.option("--strictness", type=click.Choice(STRICTNESS), default="normal", show_default=True,
              help="loose: fewer, safer checks; strict: tighter bounds (row_count at today's count) and more checks.")
@click.option("--kinds", "kinds", cls=GreedyOption, metavar="KIND [KIND...]",
              help=f"Only these check kinds (of: {', '.join(KINDS)}).")
@click.option("--null-markers", "null_markers", metavar="M1,M2,...", default=None, help=_NULL_MARKERS_HELP)
@click.option("--timeout", "timeout_s", type=click.FloatRange(min=0, min_open=True), default=None,
              help=f"Seconds allowed per query (default: the database's timeout_s, else {DEFAULT_TIMEOUT_S:g}).")
@click.option("--llm", is_flag=True, help="Also ask the configured model for semantic checks (from the profile and "
              "up to 10 sample values per column it asks for, read through the sandbox); each is run like the others "
              "(needs OPENAI_API_KEY/OPENAI_BASE_URL or llm: in the config).")
@config_option
def suggest(db: str, tables: tuple[str, ...], out_path: Path | None, strictness: str, kinds: tuple[str, ...],
            null_markers: str | None, timeout_s: float | None, llm: bool, config_path: Path | None) -> None:
    """Suggest a starter check suite from the data, every check run on it before it is written.

    Checks that pass today are written ready to scan, each under a comment with its evidence
    ("0 nulls in 2,000 rows"); checks that fail today are written commented out with their
    measured failure rate; foreign keys guessed from names are kept only when every value is found.

    \b
    Example:
        watchdog suggest --db sqlite:///reports/demo/crm.db --out checks/crm.yaml
        watchdog suggest --db postgresql://reader@db/shop --tables orders --kinds not_null unique
        OPENAI_API_KEY=... watchdog suggest --db crm --llm --out checks/crm.yaml
        watchdog scan --db sqlite:///reports/demo/crm.db --checks checks/crm.yaml
    """
    from watchdog.errors import ConfigError
    from watchdog.profile.suggest import profile_database, suggest_suite

    wanted = _tables(kinds)
    unknown = [k for k in wanted or [] if k not in KINDS]
    if unknown:
        raise ConfigError(f"--kinds: unknown kind(s) {', '.join(unknown)}; expected some of {', '.join(KINDS)}")
    with _sandbox(db, config_path, timeout_s) as box, console.scan_progress(enabled=True) as progress:
        profiles = profile_database(box, _tables(tables), on_progress=progress, null_markers=_markers(null_markers))
        extra, notes = _llm_candidates(profiles, config_path, box) if llm else ([], [])
        result = suggest_suite(box, profiles, strictness=strictness, kinds=wanted, extra=extra, notes=notes)
    err = console.stderr()
    for note in result.notes:
        err.print(f"note: {plain_text(note, 300)}", markup=False, highlight=False)
    if out_path is None:
        click.echo(result.text, nl=False)
    else:
        out_path.parent.mkdir(parents=True, exist_ok=True)
        out_path.write_text(result.text, encoding="utf-8")
    err.print(f"{len(result.active)} checks pass on today's data; {len(result.commented)} commented out "
              f"(they fail today)" + (f"; suite: {out_path}" if out_path else ""), markup=False, highlight=False)


def _llm_candidates(profiles: list[TableProfile], config_path: Path | None,
                    box: Sandbox) -> tuple[list, list[str]]:
    from watchdog.profile.llm import propose
    from watchdog.settings import load_settings_or_default

    return propose(load_settings_or_default(config_path).llm, profiles, box)
