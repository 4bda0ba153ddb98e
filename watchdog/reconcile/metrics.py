"""The cheap reconciliation: a few aggregates of a table, one statement per side, compared in canonical form.

Metrics are written ``count``, ``count(col)``, ``count_distinct(col)``, ``sum(col)``, ``avg(col)``, ``min(col)``,
``max(col)``. Each is rendered in the canonical form of its column's kind on its own engine
(:mod:`watchdog.reconcile.canonical`), so ``sum(amount)`` at 2 decimal places or ``max(updated_at)`` to the
second mean the same on both sides.
"""

from __future__ import annotations

import re
from typing import Any

from watchdog.reconcile import canonical as c
from watchdog.reconcile.canonical import ColumnForm
from watchdog.reconcile.columns import DEFAULT_FLOAT_SCALE, pair
from watchdog.reconcile.diff import declared_columns
from watchdog.reconcile.errors import ReconcileError
from watchdog.sandbox import Sandbox
from watchdog.scan import sqlbuild

_METRIC = re.compile(r"^\s*(count|count_distinct|sum|avg|min|max)\s*(?:\(\s*([^()]*?)\s*\))?\s*$", re.IGNORECASE)


def parse_metric(text: str) -> tuple[str, str | None]:
    """``"sum(amount)"`` -> ``("sum", "amount")``; ``"count"`` -> ``("count", None)`` (ValueError otherwise)."""
    m = _METRIC.match(text)
    if not m or (m.group(1).lower() not in ("count",) and not m.group(2)):
        raise ValueError(f"unknown metric {text!r}: write count, count(col), count_distinct(col), sum(col), "
                         "avg(col), min(col) or max(col)")
    column = m.group(2) or None
    if column == "*":
        column = None
    return m.group(1).lower(), column


def _aggregate(func: str, column: str | None, dialect: str) -> str:
    if column is None:
        return "COUNT(*)"
    col = c.ident(column, dialect)
    if func == "count_distinct":
        return f"COUNT(DISTINCT {col})"
    return f"{func.upper()}({col})"


def _shown(text: str | None, form: ColumnForm) -> str | None:
    """A canonical number of ``10^-scale`` units back as a decimal (``1050`` at scale 2 -> ``10.50``)."""
    if text is None or form.kind != "num" or form.scale == 0:
        return text
    sign, digits = ("-", text[1:]) if text.startswith("-") else ("", text)
    digits = digits.rjust(form.scale + 1, "0")
    return f"{sign}{digits[:-form.scale]}.{digits[-form.scale:]}"


def compare_metrics(source: Sandbox, target: Sandbox, table: str, target_table: str, metrics: list[str], *,
                    where: str | None = None, target_where: str | None = None,
                    precision: int | None = None) -> dict[str, Any]:
    """``{"metrics": [{"metric", "source", "target", "equal"}], "differing": n, "statements": {...}}``."""
    parsed = [parse_metric(m) for m in metrics]
    src_cols = {d.name.lower(): d for d in declared_columns(source, table)}
    tgt_cols = {d.name.lower(): d for d in declared_columns(target, target_table)}
    forms: list[tuple[ColumnForm, ColumnForm]] = []
    for func, column in parsed:
        if column is None or func in ("count", "count_distinct"):
            forms.append((ColumnForm("n", "int"), ColumnForm("n", "int")))
            continue
        s, t = src_cols.get(column.lower()), tgt_cols.get(column.lower())
        if s is None or t is None:
            raise ReconcileError(f"metric {func}({column}): no column {column!r} on the "
                                 f"{'source' if s is None else 'target'} table")
        a, b = pair(s, t, c.engine(source.dialect), c.engine(target.dialect), scale=precision)
        if func == "avg" and a.kind == "num" and precision is None:
            a = b = ColumnForm(a.name, "num", scale=max(a.scale, DEFAULT_FLOAT_SCALE))
        elif func == "avg" and a.kind in ("int", "bool"):
            a = b = ColumnForm(a.name, "num", scale=precision if precision is not None else DEFAULT_FLOAT_SCALE)
        elif func == "sum" and a.kind == "bool":
            a = b = ColumnForm(a.name, "int")
        forms.append((a, b))
    values = []
    for side, (box, name, filt) in enumerate(((source, table, where), (target, target_table, target_where or where))):
        d = c.engine(box.dialect)
        cols = [c.canonical_of(_aggregate(func, column, d), form[side], d)
                for (func, column), form in zip(parsed, forms, strict=True)]
        sql = f"SELECT {', '.join(cols)} FROM {c.ident(name, d)}"
        if filt:
            sql += " WHERE " + sqlbuild.condition(filt, d).sql(dialect=d)
        values.append(list(box.query(sql, max_rows=2).rows[0]))
    rows = [{"metric": m, "source": _shown(s, f[0]), "target": _shown(t, f[0]), "equal": s == t}
            for m, s, t, f in zip(metrics, values[0], values[1], forms, strict=True)]
    return {"metrics": rows, "differing": sum(not r["equal"] for r in rows),
            "statements": {"source": 1, "target": 1}}
