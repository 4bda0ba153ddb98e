"""``watchdog diff``: compare a table on two databases (a thin shell over :mod:`watchdog.reconcile`)."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import click

from watchdog.cli.app import CONTEXT, cli, config_option, resolve_db
from watchdog.exit_codes import ExitCode

_PRECISIONS = {"s": 0, "ms": 3, "us": 6}


def _precisions(values: tuple[str, ...]) -> tuple[int | None, dict[str, int]]:
    """``--precision 2`` (every number column) and ``--precision amount=4`` (one column)."""
    overall: int | None = None
    per_column: dict[str, int] = {}
    for value in values:
        name, sep, digits = value.rpartition("=")
        if not digits.isdigit():
            raise click.BadParameter(f"{value!r}: give decimal places, N or COLUMN=N", param_hint="--precision")
        if sep:
            per_column[name] = int(digits)
        else:
            overall = int(digits)
    return overall, per_column


def _columns(value: str | None) -> list[str] | None:
    return None if value is None else [c.strip() for c in value.split(",") if c.strip()]


@cli.command(context_settings=CONTEXT)
@click.argument("source")
@click.argument("target")
@click.option("--table", required=True, help="The table on SOURCE (schema.table where needed).")
@click.option("--target-table", default=None, help="The table on TARGET (default: the same name).")
@click.option("--key", "keys", multiple=True, help="A key column (repeat for a compound key). Without a key the "
              "tables are compared as wholes and differing rows cannot be located.")
@click.option("--columns", default=None, metavar="A,B", help="Compare only these columns (default: every column "
              "both tables have).")
@click.option("--exclude", "excluded", multiple=True, metavar="COLUMN", help="Leave a column out (repeatable; "
              "commas also separate).")
@click.option("--where", default=None, help="A condition both sides are filtered by (SQL, read by each engine).")
@click.option("--target-where", default=None, help="A different condition for TARGET.")
@click.option("--precision", "precision", multiple=True, metavar="N | COLUMN=N",
              help="Decimal places numbers are compared at (default: the declared scale; 6 for floating point).")
@click.option("--timestamp-precision", type=click.Choice(sorted(_PRECISIONS)), default=None,
              help="Timestamps compared to the second, millisecond or microsecond (default: the coarser side's).")
@click.option("--samples", type=click.IntRange(min=0), default=5, show_default=True,
              help="Keys (and changed values) shown per kind of difference.")
@click.option("--timeout", "timeout_s", type=click.FloatRange(min=0, min_open=True), default=None,
              help="Seconds the whole comparison may take (each statement also keeps its database's timeout).")
@click.option("--json", "as_json", is_flag=True, help="Print the result as JSON.")
@config_option
def diff(source: str, target: str, table: str, target_table: str | None, keys: tuple[str, ...], columns: str | None,
         excluded: tuple[str, ...], where: str | None, target_where: str | None, precision: tuple[str, ...],
         timestamp_precision: str | None, samples: int, timeout_s: float | None, as_json: bool,
         config_path: Path | None) -> None:
    """Compare a table on SOURCE with its copy on TARGET: rows missing on either side, and changed rows.

    SOURCE and TARGET are database URLs or names from the configuration, on any two engines watchdog
    reads. Each side computes counts and checksums of key segments in its own database; only segments that
    differ are split further, and only small differing segments send their keys. Exit code: 0 identical,
    1 different, 3 error.

    \b
    Example:
        watchdog diff sqlite:///shop.db postgresql://reader@db/shop --table orders --key id
        watchdog diff crm warehouse --table contacts --target-table analytics.contacts --key id --json
        watchdog diff prod replica --table order_lines --key order_id --key line --exclude updated_at
    """
    from watchdog.reconcile import DiffSpec, diff_tables
    from watchdog.sandbox import Sandbox

    overall, per_column = _precisions(precision)
    spec = DiffSpec(
        table=table, target_table=target_table, key=list(keys), columns=_columns(columns),
        exclude=[c for value in excluded for c in _columns(value) or []], where=where, target_where=target_where,
        samples=samples, precision=overall, column_precision=per_column,
        timestamp_precision=_PRECISIONS[timestamp_precision] if timestamp_precision else None,  # type: ignore[arg-type]
        deadline_s=timeout_s)
    with Sandbox.for_database(resolve_db(source, config_path)) as src, \
            Sandbox.for_database(resolve_db(target, config_path)) as tgt:
        result = diff_tables(src, tgt, spec)
    if as_json:
        click.echo(json.dumps(result.to_json(), indent=2, default=str))
    else:
        _print(result)
    sys.exit(int(ExitCode.OK if result.identical else ExitCode.FAILED))


def _print(result: object) -> None:
    from watchdog.reconcile.text import summary

    click.echo(summary(result))  # type: ignore[arg-type]
