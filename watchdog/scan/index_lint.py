"""``check-config``'s index warnings for incremental tables, read from the database's catalogue (no table read).

An incremental table costs what its new rows cost only where the database can find them and their keys
without scanning: its high-water column, the key of a ``unique`` check judged against the whole table, and the
parent key of a ``foreign_key`` should each lead an index. A database whose catalogue cannot be read gives one
warning saying so; a database whose catalogue watchdog does not read gives none.
"""

from __future__ import annotations

from collections.abc import Iterable

from watchdog.sandbox import Sandbox
from watchdog.scan import sqlbuild
from watchdog.scan.check_types import Check
from watchdog.scan.indexes import covered, index_prefixes
from watchdog.scan.suites import Suite


def _wanted(checks: Iterable[Check]) -> dict[tuple[str, tuple[str, ...]], str]:
    """``{(table, columns): why}``: the lookups an incremental run makes, each of which wants an index."""
    wanted: dict[tuple[str, tuple[str, ...]], str] = {}
    for check in checks:
        options = check.table_options.get("incremental")
        if options is None or not check.table:
            continue
        wanted.setdefault((check.table, (options.column,)), f"the high-water column of `incremental` ({check.name})")
        if check.kind == "unique":
            key = tuple(check.key_columns)  # type: ignore[attr-defined]
            wanted.setdefault((check.table, key), f"the key of {check.name}, looked up for each new row")
        elif check.kind == "foreign_key":
            *parts, ref = sqlbuild.split_name(check.options.references, max_parts=4)
            wanted.setdefault((sqlbuild.join_name(parts), (ref,)),
                              f"the parent key of {check.name}, looked up for each new child row")
    return wanted


def index_warnings(box: Sandbox, suites: Iterable[Suite]) -> list[str]:
    """One warning per lookup of an incremental table that no index serves (see the module)."""
    wanted = _wanted(check for suite in suites for check in suite.checks)
    warnings: list[str] = []
    prefixes: dict[str, list[tuple[str, ...]] | None] = {}
    for (table, columns), why in wanted.items():
        if table not in prefixes:
            try:
                prefixes[table] = index_prefixes(box, table)
            except Exception as exc:  # noqa: BLE001 (a missing table, no permission: say so, keep going)
                warnings.append(f"{table}: could not read its indexes ({str(exc).splitlines()[0][:200]})")
                prefixes[table] = None
        if covered(prefixes[table], list(columns)) is False:
            warnings.append(f"{table}.{'+'.join(columns)}: no index starts with it; it is {why}, so each "
                            f"incremental run reads the whole table for it (create an index on it)")
    return warnings


def window_warnings(suite: Suite) -> list[str]:
    """``row_count: {window: true}`` on a table that is not incremental counts every row: say so."""
    return [f"{suite.path}:{check.line}: {check.name}: `window: true` counts the new rows of an incremental table, "
            f"but {check.table} has no `incremental` option, so it counts every row"
            for check in suite.checks
            if check.kind == "row_count" and getattr(check.options, "window", False)
            and check.table_options.get("incremental") is None]
