"""The statements of ``distribution`` (one per check) and how their rows become shares.

Deciles are by nearest rank: over the ``n`` non-NULL values sorted, the edge of decile ``k`` is the value at rank
``ceil(k n / 10)``, and the share of rows at or below it is read from ``COUNT(v) OVER (ORDER BY v)`` at that row (so
ties with the edge are below it, as ``<=`` counts them next run). The ranks are numbered among the values only
(``PARTITION BY`` whether the value is NULL), wherever a database sorts NULL.
"""

from __future__ import annotations

from typing import Any

from sqlglot import exp

from watchdog.scan import sqlbuild

DECILES = range(1, 10)


def categories_query(table: str, where: exp.Expr | None, key: exp.Expr, limit: int) -> exp.Select:
    """Each value (``key``, NULL for NULL and the markers) and its rows, most frequent first, at most ``limit``."""
    count = sqlbuild.count_star()
    return (exp.select(exp.alias_(key.copy(), "wd_value", copy=False), exp.alias_(count, "wd_rows", copy=False),
                       copy=False)
            .from_(sqlbuild.table(table), copy=False).where(where, copy=False)
            .group_by(key, copy=False)
            .order_by(exp.Ordered(this=sqlbuild.count_star(), desc=True), copy=False)
            .limit(limit, copy=False))


def _when(cond: exp.Expr, then: exp.Expr) -> exp.Expr:
    return exp.Case(ifs=[exp.If(this=cond, true=then)])


def deciles_query(table: str, where: exp.Expr | None, value: exp.Expr, edges: list[float]) -> exp.Select:
    """One row: rows, values, then (edge, values at or below it) for each decile of this run, then the values at or
    below each of ``edges`` (the previous run's)."""
    inner = (exp.select(exp.alias_(value, "wd_v", copy=False), copy=False)
             .from_(sqlbuild.table(table), copy=False).where(where, copy=False))
    v = exp.column("wd_v")
    is_null = exp.Is(this=v.copy(), expression=exp.Null())
    ordered = exp.Order(expressions=[exp.Ordered(this=v.copy())])
    flag = exp.Case(ifs=[exp.If(this=is_null.copy(), true=exp.Literal.number(1))], default=exp.Literal.number(0))
    ranked = (exp.select(
        v.copy(),
        exp.alias_(exp.Window(this=exp.RowNumber(), partition_by=[flag], order=ordered.copy()), "wd_rn", copy=False),
        exp.alias_(exp.Window(this=exp.Count(this=v.copy()), order=ordered), "wd_le", copy=False),
        exp.alias_(exp.Window(this=exp.Count(this=v.copy())), "wd_n", copy=False), copy=False)
        .from_(inner.subquery("wd_values", copy=False), copy=False))
    n, rn, le = exp.column("wd_n"), exp.column("wd_rn"), exp.column("wd_le")
    present = exp.Not(this=is_null)
    columns: list[exp.Expr] = [sqlbuild.count_star(), exp.Count(this=v.copy())]
    for k in DECILES:
        rank = exp.Ceil(this=exp.Div(this=exp.Mul(this=exp.Literal.number(k), expression=n.copy()),
                                     expression=exp.Literal.number("10.0")))
        hit = exp.and_(present.copy(), exp.EQ(this=rn.copy(), expression=rank), copy=False)
        columns += [exp.Max(this=_when(hit, v.copy())), exp.Max(this=_when(hit.copy(), le.copy()))]
    for edge in edges:
        columns.append(sqlbuild.case_count(exp.LTE(this=v.copy(), expression=exp.Literal.number(repr(edge)))))
    return (exp.select(*[exp.alias_(c, f"wd_{i}", copy=False) for i, c in enumerate(columns)], copy=False)
            .from_(ranked.subquery("wd_ranked", copy=False), copy=False))


def _int(value: Any) -> int:
    return 0 if value is None else int(value)


def read_deciles(row: Any, previous: dict[str, Any] | None) -> tuple[int, int, list[float], list[float], float,
                                                                   list[int] | None]:
    """(rows, values, this run's edges, the shares of its buckets, the NULL share, values at or below each previous
    edge) from the statement's row."""
    total, n = _int(row[0]), _int(row[1])
    edges: list[float] = []
    below: list[int] = []
    for k in DECILES:
        edge, le = row[2 * k], row[2 * k + 1]
        if edge is None:
            continue
        if edges and float(edge) == edges[-1]:
            continue
        edges.append(float(edge))
        below.append(_int(le))
    shares = _bucket_shares(below, n, total)
    counts = [_int(c) for c in row[20:]] if previous else None
    return total, n, edges, shares, _r((total - n) / total) if total else 0.0, counts


def _bucket_shares(below: list[int], n: int, total: int) -> list[float]:
    """The share of the rows in each bucket ``<= edge 1``, ``(edge 1, edge 2]``, .., ``> last edge``."""
    if not total:
        return []
    bounds = [*below, n]
    return [_r((b - (bounds[i - 1] if i else 0)) / total) for i, b in enumerate(bounds)]


def decile_buckets(previous: dict[str, Any], counts: list[int] | None, total: int, n: int) -> list[dict[str, Any]]:
    """Expected (the previous run's) and actual shares of the previous run's buckets."""
    edges = [float(e) for e in previous.get("edges", [])]
    expected = list(previous.get("values", []))
    actual = _bucket_shares(list(counts or []), n, total) if total else [0.0] * (len(edges) + 1)
    out = []
    for i in range(len(edges) + 1):
        low = edges[i - 1] if i else None
        high = edges[i] if i < len(edges) else None
        label = ("all" if low is None and high is None else f"<= {high:g}" if low is None
                 else f"> {low:g}" if high is None else f"> {low:g}, <= {high:g}")
        out.append({"bucket": label, "low": low, "high": high,
                    "expected": _r(expected[i] if i < len(expected) else 0.0), "actual": actual[i]})
    null_actual = _r((total - n) / total) if total else 0.0
    out.append({"bucket": "null", "low": None, "high": None, "expected": _r(previous.get("null", 0.0)),
                "actual": null_actual})
    return out


def _r(share: float) -> float:
    return round(float(share), 6)
