"""What every rendering of findings shares: the order of the checks and how a threshold is written.

The terminal table, report.md, report.html, the e-mails and the dashboard all list the checks that need
attention first (failed, then could not run, then warned, then passed; suite order within each), unless
asked for the suite's order (``--order suite``). A threshold is written after the figure it bounds, the same
way everywhere: ``3 (max 5)``, ``12 (max 5%)``, ``200 rows (min 1)``, ``newest is 2h 0m old (max 1d)``.

Plain Python without Jinja2 or rich: report.md and the terminal use it on every scan.
"""

from __future__ import annotations

import re
import shlex
from collections.abc import Iterable, Mapping
from typing import Any, Literal, TypeVar

from watchdog.sandbox.functions.sqlite import WATCHDOG_SQLITE_FUNCTIONS

Order = Literal["problems", "suite"]
ORDERS: tuple[Order, ...] = ("problems", "suite")
DEFAULT_ORDER: Order = "problems"
#: the rank of each status in the ``problems`` order
RANK = {"fail": 0, "error": 1, "warn": 2, "pass": 3}

T = TypeVar("T")


def _status(item: Any) -> str:
    return str(item.get("status") if isinstance(item, Mapping) else getattr(item, "status", "pass"))


def ordered(findings: Iterable[T], order: Order = DEFAULT_ORDER) -> list[T]:
    """``findings`` (Finding objects or their JSON dicts) in the rendering order: problems first (suite
    order within each status), or as the suites list them."""
    items = list(findings)
    if order == "suite":
        return items
    return sorted(items, key=lambda f: RANK.get(_status(f), len(RANK)))  # stable: suite order within a status


def owners(item: Any) -> list[str]:
    """A finding's owners (a Finding or its JSON dict), the most specific first; [] when none."""
    value = item.get("owners") if isinstance(item, Mapping) else getattr(item, "owners", None)
    return [str(o) for o in value or ()]


def tags(item: Any) -> list[str]:
    """A finding's tags (a Finding or its JSON dict); [] when none."""
    value = item.get("tags") if isinstance(item, Mapping) else getattr(item, "tags", None)
    return [str(t) for t in value or ()]


def problem_owners(findings: Iterable[Any]) -> list[tuple[str, int]]:
    """Each owner of a failed, erroring or warning check with how many of them they own, most first
    (then as first met): who has something to look at."""
    tally: dict[str, int] = {}
    for f in findings:
        if _status(f) in ("fail", "error", "warn"):
            for owner in owners(f):
                tally[owner] = tally.get(owner, 0) + 1
    return sorted(tally.items(), key=lambda item: -item[1])


def _count(value: Any) -> str:
    if isinstance(value, float):
        return f"{value:,.0f}" if value.is_integer() else f"{value:g}"
    return f"{value:,}" if isinstance(value, int) and not isinstance(value, bool) else str(value)


def _percent(value: float) -> str:
    return f"{value * 100:g}%"


def allowed(params: Mapping[str, Any]) -> str:
    """The failing rows a row check tolerates, written after its failing count: `` (max 50)``,
    `` (max 5%)``, `` (max 50 and 5%)``; empty when it tolerates none."""
    limits = []
    count, rate = params.get("max_count"), params.get("max_rate")
    if isinstance(count, int) and not isinstance(count, bool):
        limits.append(_count(count))
    if isinstance(rate, (int, float)) and not isinstance(rate, bool):
        limits.append(_percent(float(rate)))
    return f" (max {' and '.join(limits)})" if limits else ""


def bounds(check: str | None, params: Mapping[str, Any]) -> str:
    """The bounds of a measurement, written after it: `` (min 1)``, `` (min 1, max 10)``, `` (max 1d)``
    (row_count, freshness, custom_sql measurements); empty when the check has none (an anomaly judges it)."""
    if check == "freshness":
        return f" (max {params['max_age']})" if params.get("max_age") is not None else ""
    if check not in ("row_count", "custom_sql"):
        return ""
    parts = [f"{word} {_count(params[word])}" for word in ("min", "max")
             if isinstance(params.get(word), (int, float)) and not isinstance(params.get(word), bool)]
    if not parts and check == "row_count" and "anomaly" not in params:
        parts = ["min 1"]  # row_count without bounds: at least one row
    return f" ({', '.join(parts)})" if parts else ""


_STRING = re.compile(r"'(?:[^']|'')*'")
_CALLS = re.compile(r"\b(" + "|".join(sorted(WATCHDOG_SQLITE_FUNCTIONS, key=len, reverse=True)) + r")\b\s*(\()?",
                    re.IGNORECASE)


def own_functions(sql: str | None, database: str) -> list[str]:
    """watchdog's own SQLite functions that ``sql`` calls (``REGEXP`` as an operator too), outside string
    literals; none on other databases, whose functions are their own."""
    if not sql or not database.lower().startswith("sqlite"):
        return []
    found: dict[str, None] = {}
    for m in _CALLS.finditer(_STRING.sub("''", sql)):
        name = m.group(1).lower()
        if m.group(2) or name == "regexp":  # md5/md5_int only as calls; REGEXP is also an operator
            found[name.upper()] = None
    return list(found)


def query_command(database: str) -> str:
    """The command that runs a statement (given on standard input) through watchdog's sandbox."""
    return f"watchdog query --db {shlex.quote(database)} -"
