"""A check on a table or column that is not there: the error says so and names the closest one the
catalogue has (``no such table: rayyan (did you mean 'rayyan_dirty'?)``)."""

from __future__ import annotations

import re

from watchdog.errors import WatchdogError, closest
from watchdog.redact import redact
from watchdog.sandbox import Sandbox
from watchdog.scan.check_types import Check
from watchdog.scan.sqlbuild import split_name

_MISSING_OBJECT = re.compile(r"no such (table|column)|(relation|column) .* does not exist|doesn't exist|"
                             r"unknown column|table .* not found|column .* not found", re.IGNORECASE)


def explain(message: str, check: Check, sandbox: Sandbox) -> str:
    """``message`` of a failed statement of ``check``; for a missing table or column, with what to do."""
    if not check.table or not _MISSING_OBJECT.search(message):
        return redact(message)
    try:
        hint = _table_hint(check.table, sandbox) or _column_hint(check, check.table, sandbox)
    except WatchdogError:  # the catalogue cannot be read: say what the database said
        hint = ""
    return redact(f"{message}{hint} (check `{check.table}` and its columns in the suite)")


def _table_hint(table: str, sandbox: Sandbox) -> str:
    names = sandbox.table_names()
    folded = {n.casefold() for n in names}
    bare = {n.rpartition(".")[2]: n for n in names}  # "public.orders" is also "orders"
    if table.casefold() in folded or table.rpartition(".")[2].casefold() in {b.casefold() for b in bare}:
        return ""  # the table is there: a column is missing
    found = closest(table, names) if "." in table else closest(table, bare)  # as the suite names it
    return "" if found is None else f" (did you mean {found!r}?)"


def _column_hint(check: Check, table: str, sandbox: Sandbox) -> str:
    known = list(sandbox.column_types(split_name(table)))
    if not known:
        return ""
    folded = {k.casefold() for k in known}
    wanted = [c for c in ([check.column] if check.column else []) + list(check.columns or []) if c]
    hints = {}
    for column in wanted:
        found = None if column.casefold() in folded else closest(column, known)
        if found is not None:
            hints[column] = found
    if len(hints) == 1:
        return f" (did you mean {next(iter(hints.values()))!r}?)"
    return f" ({'; '.join(f'{c!r}: did you mean {f!r}?' for c, f in hints.items())})" if hints else ""
