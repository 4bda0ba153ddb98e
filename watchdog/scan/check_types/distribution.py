"""``distribution``: how far a column's mix of values moved from a baseline, as a population stability index.

The baseline is the same check's distribution in the audit's previous run (read from the run history), or the
shares written in ``baseline:``. ``observed`` is ``PSI = sum over buckets of (actual - expected) * ln(actual /
expected)``, shares of the rows looked at, with :data:`EPSILON` standing in for a share of 0; the check fails
above ``max_psi`` (warns above ``warn.max_psi``). Without a baseline (the first run) it passes with a note.

Buckets:

* **categories** (text, boolean, dates; or any column given ``baseline:``): each value is a bucket, compared
  exactly; NULL and the null markers (:mod:`.null_markers`) are one bucket, ``null``. One ``GROUP BY``
  statement; more than :data:`MAX_CATEGORIES` values is an error.
* **deciles** (numeric columns): the baseline's deciles, by nearest rank (the edge of decile k is the value at
  rank ceil(k n / 10) of the n values sorted), cut the values into at most ten buckets ``<= edge``, ``> last
  edge``, plus ``null``. One statement ranks the values (``ROW_NUMBER``), returns this run's edges and their shares
  for the next run, and counts the values into the previous run's edges.

``details.buckets`` lists each bucket's expected and actual share; ``details.baseline`` says where the baseline came
from; ``details.shares`` is what the next run compares with.
"""

from __future__ import annotations

import json
import math
from typing import Any, Literal

from sqlglot import exp

from watchdog.errors import QueryError
from watchdog.scan import sqlbuild
from watchdog.scan.check_types import distribution_sql as dsql
from watchdog.scan.check_types.base import CheckOptions, Measurement, Metric, Standalone, TypeMismatch, register
from watchdog.scan.check_types.fields import Options, option, options_class
from watchdog.scan.check_types.null_markers import MarkedColumn, _markers

#: the share given to an empty bucket, so the logarithm stays finite (documented in docs/checks.md)
EPSILON = 0.0001
#: the most distinct values a categorical distribution takes
MAX_CATEGORIES = 1000
#: the sum of ``baseline:`` shares may miss 1 by this much
SUM_TOLERANCE = 0.001


def _baseline(value: Any) -> Any:
    """``baseline:``: a mapping of value to share (``null:`` for NULL), the shares summing to 1."""
    if value is None:
        return None
    if not isinstance(value, dict) or not value:
        raise ValueError("expected a mapping of value to share, e.g. `baseline: {a: 0.5, b: 0.3, c: 0.2}`")
    shares: dict[str, float] = {}
    for key, share in value.items():
        if isinstance(share, bool) or not isinstance(share, (int, float)) or not 0 <= share <= 1:
            raise ValueError(f"the share of {key!r} is {share!r}; give a number from 0 to 1")
        shares[bucket_key(key)] = float(share)
    total = sum(shares.values())
    if abs(total - 1) > SUM_TOLERANCE:
        raise ValueError(f"the baseline's shares add up to {total:g}; they must add up to 1")
    return shares


def bucket_key(value: Any) -> str:
    """A category's key: ``null`` for NULL, else its text in JSON (so 1 and '1' are one bucket)."""
    if value is None:
        return "null"
    if isinstance(value, (bytes, bytearray, memoryview)):
        value = bytes(value).decode("utf-8", "replace")
    return json.dumps(str(value), ensure_ascii=False)


def key_value(key: str) -> str | None:
    return None if key == "null" else json.loads(key)


@options_class
class DistributionWarn(Options):
    max_psi: float = option(ge=0)


@options_class
class DistributionOptions(CheckOptions):
    column: str = option(min_length=1)
    max_psi: float | None = option(None, ge=0)
    warn: DistributionWarn | None = None
    baseline: dict[str, float] | None = option(None, before=_baseline)
    #: how values are bucketed (default: deciles for numeric columns, categories otherwise)
    buckets: Literal["auto", "categories", "deciles"] = "auto"
    null_values: list[str] | None = option(None, before=_markers)

    def __post_init__(self) -> None:
        if self.baseline is not None and self.buckets == "deciles":
            raise ValueError("baseline: lists the shares of categories; drop `buckets: deciles`")
        if self.warn is not None and self.max_psi is not None and self.warn.max_psi > self.max_psi:
            raise ValueError(f"warn.max_psi ({self.warn.max_psi:g}) is above max_psi ({self.max_psi:g}), so the "
                             "check would fail before it warns; give warn a lower max_psi")
        if self.warn is not None and self.severity == "warn":
            raise ValueError("severity: warn and warn: thresholds do not go together; drop severity: warn")


def psi(pairs: list[tuple[float, float]]) -> float:
    """The population stability index of (expected, actual) shares; :data:`EPSILON` for a share of 0."""
    total = 0.0
    for expected, actual in pairs:
        e, a = max(expected, EPSILON), max(actual, EPSILON)
        total += (a - e) * math.log(a / e)
    return float(f"{total:.12g}")


@register
class Distribution(MarkedColumn):
    kind = "distribution"
    Options = DistributionOptions
    options: DistributionOptions
    short_form = "column"
    row_level = False
    reads_column_types = True

    @property
    def mode(self) -> str:
        if self.options.buckets != "auto":
            return self.options.buckets
        if self.options.baseline is not None:
            return "categories"
        return "deciles" if self.column_kind(self.column)[0] == "number" else "categories"

    def _previous(self) -> tuple[str | None, dict[str, Any] | None]:
        """The run and the shares of the latest earlier run that measured this column's distribution."""
        for item in reversed(self.past):
            finding = item.get("finding") or {}
            shares = (finding.get("details") or {}).get("shares")
            if finding.get("status") != "error" and isinstance(shares, dict) and shares.get("mode") == self.mode:
                return item.get("run_id"), shares
        return None, None

    def _statement(self, dialect: str) -> Standalone:
        table, where = self.table or "", self.filter(dialect)
        col = sqlbuild.column(self.column or "")
        if self.mode == "categories":
            key = exp.Case(ifs=[exp.If(this=self.missing(dialect), true=exp.null())],
                           default=self.exact_column(self.column or "", dialect))
            query = dsql.categories_query(table, where, key, MAX_CATEGORIES + 1)
            sql = query.sql(dialect=dialect, copy=False)
            return Standalone(sql, sql, rows=MAX_CATEGORIES + 1)
        kind, declared = self.column_kind(self.column)
        if kind not in ("number", "unknown"):
            raise TypeMismatch(f"deciles read numbers, but column {self.column!r} is {declared} ({kind}); compare "
                               "its values as categories (`buckets: categories`)")
        _, previous = self._previous()
        edges = [float(e) for e in (previous or {}).get("edges", [])]
        query = dsql.deciles_query(table, where, exp.Cast(this=col, to=exp.DataType.build("double")), edges)
        sql = query.sql(dialect=dialect, copy=False)
        return Standalone(sql, sql)

    def metrics(self, dialect: str) -> list[Metric]:
        return [self._statement(dialect)]

    def measure(self, values: dict[Metric, Any], dialect: str) -> Measurement:
        raw = values[self._statement(dialect)]
        run_id, previous = self._previous()
        if self.mode == "categories":
            rows = list(raw or [])
            if len(rows) > MAX_CATEGORIES:
                raise QueryError(f"column {self.column!r} has more than {MAX_CATEGORIES} distinct values; a mix of "
                                 "categories that wide says little: bucket numbers by deciles (`buckets: deciles`) "
                                 "or check a column with fewer values")
            counts: dict[str, int] = {}
            for value, count in rows:
                key = bucket_key(value)
                counts[key] = counts.get(key, 0) + int(count)
            total = sum(counts.values())
            actual = {k: c / total for k, c in counts.items()} if total else {}
            shares: dict[str, Any] = {"mode": "categories", "values": [
                {"value": key_value(k), "share": _r(s)} for k, s in sorted(actual.items())]}
            expected = self.options.baseline if self.options.baseline is not None else _category_shares(previous)
            buckets = [{"value": key_value(k), "expected": _r(expected.get(k, 0.0)), "actual": _r(actual.get(k, 0.0))}
                       for k in sorted(set(expected) | set(actual))] if expected is not None else []
        else:
            total, n, edges, edge_shares, null_share, previous_counts = dsql.read_deciles(raw, previous)
            shares = {"mode": "deciles", "edges": edges, "values": edge_shares, "null": null_share}
            expected = previous
            buckets = dsql.decile_buckets(previous, previous_counts, total, n) if previous else []
        source = ("option" if self.options.baseline is not None
                  else f"run {run_id}" if previous is not None else None)
        details: dict[str, Any] = {"mode": self.mode, "rows": total, "baseline": source, "epsilon": EPSILON,
                                   "buckets": buckets, "shares": shares if total else None}
        if expected is None:
            details["note"] = "no baseline yet: this run's distribution is the next run's baseline"
            return Measurement(observed=None, total=total, details=details)
        if not total:
            details["note"] = "no rows to compare with the baseline"
            return Measurement(observed=None, total=0, details=details)
        observed = psi([(float(b["expected"] or 0.0), float(b["actual"] or 0.0)) for b in buckets])
        return Measurement(observed=observed, total=total, details=details)

    def _compared(self, m: Measurement) -> bool:
        return m.details.get("baseline") is not None

    def breached(self, m: Measurement) -> bool:
        limit = self.options.max_psi
        if limit is None and (self.options.warn is not None or self.options.anomaly is not None):
            return False
        limit = DEFAULT_MAX_PSI if limit is None else limit
        if not self._compared(m):
            return False
        return m.observed is None or float(m.observed) > limit

    def warned(self, m: Measurement) -> bool:
        warn = self.options.warn
        if warn is None or not self._compared(m):
            return False
        return m.observed is None or float(m.observed) > warn.max_psi

    def finding_sql(self, dialect: str) -> str | None:
        return self._statement(dialect).sql


#: max_psi when a distribution gives no bound (0.2: the usual line between a small and a large shift)
DEFAULT_MAX_PSI = 0.2


def _category_shares(previous: dict[str, Any] | None) -> dict[str, float] | None:
    """The shares a previous run stored, by bucket key."""
    if previous is None or not isinstance(previous.get("values"), list):
        return None
    return {bucket_key(item.get("value")): float(item.get("share") or 0.0) for item in previous["values"]
            if isinstance(item, dict)}


def _r(share: float) -> float:
    return round(float(share), 6)
