"""``metric``: one aggregate of a column (``agg:``), judged against ``min``/``max``, ``warn:`` bounds or ``anomaly:``.

``observed`` is the value. What each ``agg`` counts, with NULLs and the table's null markers (:mod:`.null_markers`):

* ``count``: values that are neither NULL nor a marker; ``distinct``: how many different ones (compared exactly);
* ``sum``, ``avg``, ``min``, ``max``, ``stddev`` (sample), ``median``, ``p01`` .. ``p99``: over the values as
  numbers (doubles; :mod:`.metric_sql` says how percentiles interpolate). A text column needs ``numeric_text: true``
  (:mod:`.numeric_text`): its values that are not numbers are left out and counted in ``details.not_numeric``;
* ``null_rate``: the share of rows that are NULL or a marker; ``blank_rate``: the share of rows whose value is
  text of nothing or only blanks (whatever the markers say).

No value to aggregate (an empty table, a column of NULLs) gives ``observed`` null, except ``count`` and ``distinct``
(0) and ``sum`` (0: the sum of no values); stddev needs two values. A null ``observed`` with ``min``/``max`` given
fails (``warn:`` bounds only: warns), and ``details.note`` says why. Floating results are rounded to 12
significant digits, so the summation order of each database does not show.

Every aggregate but a percentile on SQLite and MySQL/MariaDB rides in the table's one aggregate statement.
"""

from __future__ import annotations

import math
from typing import Any

from sqlglot import exp

from watchdog.errors import QueryRefused, did_you_mean
from watchdog.scan import grouped, sqlbuild
from watchdog.scan.check_types import metric_sql, numeric_text
from watchdog.scan.check_types.base import (
    Aggregate,
    CheckOptions,
    Measurement,
    Metric,
    Standalone,
    TypeMismatch,
    as_int,
    register,
)
from watchdog.scan.check_types.fields import Options, option, options_class
from watchdog.scan.check_types.null_markers import MARKED_KINDS, MarkedColumn, _markers
from watchdog.scan.grouped import group_columns

#: significant digits kept of a floating result
DIGITS = 12


def _agg(value: Any) -> Any:
    if isinstance(value, str) and value.strip().lower() in metric_sql.AGGS:
        return value.strip().lower()
    if isinstance(value, str) and len(value.strip()) == 2 and value.strip()[0] in "pP" and value.strip()[1].isdigit():
        raise ValueError(f"unknown agg {value!r} (did you mean 'p0{value.strip()[1]}'?); percentiles take two digits")
    shown = ", ".join(a for a in metric_sql.AGGS if a not in metric_sql.PERCENTILES[1:-1])
    raise ValueError(f"unknown agg {value!r}{did_you_mean(value, metric_sql.AGGS)}; expected one of "
                     f"{shown.replace('p01, p99', 'p01..p99')}")


@options_class
class MetricWarn(Options):
    """``warn:`` of a metric: a value outside these bounds warns (outside the check's own ``min``/``max``: fails)."""

    min: float | None = None
    max: float | None = None

    def __post_init__(self) -> None:
        if self.min is None and self.max is None:
            raise ValueError("give min, max or both, e.g. `warn: {max: 400}`")
        if self.min is not None and self.max is not None and self.min > self.max:
            raise ValueError(f"min ({self.min:g}) is greater than max ({self.max:g})")


@options_class
class MetricOptions(CheckOptions):
    column: str = option(min_length=1)
    agg: str = option(before=_agg)
    min: float | None = None
    max: float | None = None
    warn: MetricWarn | None = None
    numeric_text: bool = False
    null_values: list[str] | None = option(None, before=_markers)
    #: the value per group of these columns (see :mod:`watchdog.scan.grouped`)
    group_by: list[str] | None = option(None, min_length=1, before=group_columns)
    #: on an incremental table, the value over the run's window (its new rows); false: over the whole table
    window: bool = option(True)

    def __post_init__(self) -> None:
        if self.group_by is not None and self.anomaly is not None:
            raise ValueError("anomaly: and group_by: do not go together (a group's value has no history of its "
                             "own); drop one of them")
        if self.min is not None and self.max is not None and self.min > self.max:
            raise ValueError(f"min ({self.min:g}) is greater than max ({self.max:g})")
        if self.numeric_text and self.agg not in metric_sql.NUMERIC:
            raise ValueError(f"numeric_text: true reads numbers stored as text, which agg {self.agg} does not use; "
                             f"drop numeric_text")
        if self.warn is None:
            return
        if self.severity == "warn":
            raise ValueError("severity: warn and warn: bounds do not go together (with warn:, the metric fails "
                             "outside min/max and warns outside warn's); drop severity: warn")
        if self.min is not None and self.warn.min is not None and self.warn.min < self.min:
            raise ValueError(f"warn.min ({self.warn.min:g}) is below min ({self.min:g}), so the check would fail "
                             "before it warns; give warn a higher min")
        if self.max is not None and self.warn.max is not None and self.warn.max > self.max:
            raise ValueError(f"warn.max ({self.warn.max:g}) is above max ({self.max:g}), so the check would fail "
                             "before it warns; give warn a lower max")


def rounded(value: Any) -> float | int | None:
    """A figure as stored: whole counts as ints, other numbers as floats of :data:`DIGITS` significant digits."""
    if value is None:
        return None
    number = float(value)
    if not math.isfinite(number) or number == 0:
        return number if math.isfinite(number) else None
    return float(f"{number:.{DIGITS}g}")


@register
class MetricCheck(MarkedColumn):
    kind = "metric"
    Options = MetricOptions
    options: MetricOptions
    short_form = None
    row_level = False
    reads_column_types = True
    groupable = True

    @property
    def agg(self) -> str:
        return self.options.agg

    @property
    def name(self) -> str:
        if self.options.name:
            return self.options.name
        return ".".join(p for p in (self.table, self.column, self.agg) if p)

    # ---- the value aggregated
    def _value(self, dialect: str) -> exp.Expr:
        """The column as the aggregate reads it: NULL where the row does not count."""
        col = sqlbuild.column(self.column or "")
        kind, declared = self.column_kind(self.column)
        if self.agg not in metric_sql.NUMERIC:
            return exp.Case(ifs=[exp.If(this=self.present(dialect), true=self.exact_column(self.column or "",
                                                                                          dialect))])
        if self.options.numeric_text:
            if kind not in numeric_text.TEXT_KINDS:
                raise TypeMismatch(f"numeric_text: true reads numbers stored as text, but column {self.column!r} is "
                                   f"{declared} ({kind}); drop numeric_text")
            number = exp.and_(self.present(dialect), numeric_text.is_number(col.copy(), dialect), copy=False)
            return exp.Case(ifs=[exp.If(this=number, true=numeric_text.cast(col))])
        if kind == "text":
            raise TypeMismatch(f"agg {self.agg} reads numbers, but column {self.column!r} is {declared} (text); "
                               "add `numeric_text: true` to read numbers stored as text, or use count, distinct, "
                               "blank_rate or null_rate")
        if kind not in ("number", "unknown"):
            raise TypeMismatch(f"agg {self.agg} reads numbers, but column {self.column!r} is {declared} ({kind}); "
                               "use count, distinct, blank_rate or null_rate")
        return metric_sql.as_double(col)

    def _aggregate(self, expression: exp.Expr) -> Aggregate:
        return Aggregate.of(self.table or "", self.options.where, expression)

    def _main(self, dialect: str) -> Aggregate | Standalone:
        agg = self.agg
        if agg == "count":
            return self._aggregate(sqlbuild.case_count(self.present(dialect)))
        if agg == "null_rate":
            return self._aggregate(sqlbuild.case_count(self.missing(dialect)))
        if agg == "blank_rate":
            if self.column_kind(self.column)[0] not in MARKED_KINDS:
                return self._aggregate(sqlbuild.case_count(exp.false()))
            return self._aggregate(sqlbuild.case_count(metric_sql.blank(sqlbuild.column(self.column or ""),
                                                                         dialect)))
        value = self._value(dialect)
        if metric_sql.is_percentile(agg) and dialect in metric_sql.BY_RANKS:
            query = metric_sql.ranks_query(self.table or "", self.filter(dialect), value,
                                           [metric_sql.hundredths(agg)], dialect)
            sql = query.sql(dialect=dialect, copy=False)
            return Standalone(sql, sql)
        return self._aggregate(metric_sql.aggregate(agg, value, dialect, (self.table or "", self.filter(dialect))))

    def _not_numeric(self, dialect: str) -> Aggregate:
        col = sqlbuild.column(self.column or "")
        bad = exp.and_(self.present(dialect), exp.Not(this=numeric_text.is_number(col, dialect)), copy=False)
        return self._aggregate(sqlbuild.case_count(bad))

    def _grouped(self, dialect: str) -> grouped.GroupedCount:
        """The value per group (rates: the share of the group's rows), judged against min/max and warn."""
        main = self._main(dialect)
        if isinstance(main, Standalone):
            raise QueryRefused(f"a percentile per group needs PostgreSQL, DuckDB or Spark, not {dialect}")
        if self.agg == "stddev" and dialect in ("sqlite", "strictsqlite"):
            raise QueryRefused("stddev per group needs PostgreSQL, MySQL/MariaDB, DuckDB or Spark, not SQLite")
        if self.agg == "distinct" and self.options.where:
            raise QueryRefused("distinct per group with a where: drop where or group_by")
        where = self.filter(dialect)
        total = sqlbuild.case_count(where) if where is not None else sqlbuild.count_star()
        expression = main.expression.copy()
        if where is not None:  # the statement is shared: the where goes into the aggregate's value
            expression = _within(expression, where)
        if self.agg in metric_sql.RATES:
            expression = exp.Div(this=metric_sql.as_double(expression),
                                 expression=exp.Nullif(this=total.copy(), expression=exp.Literal.number(0)))
        fail = grouped.Bounds(self.options.min, self.options.max) \
            if self.options.min is not None or self.options.max is not None else None
        warn = grouped.Bounds(self.options.warn.min, self.options.warn.max) if self.options.warn else None
        exact = tuple(self.exact_column(g, dialect) for g in self.group_by)
        order = tuple(sqlbuild.column(g) if self.column_kind(g)[0] not in ("text", "unknown") else
                      self.exact_column(g, dialect) for g in self.group_by)
        return grouped.GroupedCount.of(self.table or "", self.group_by, expression, total, fail, warn, exact, order)

    def _groups_sql(self, dialect: str) -> str:
        """The per-group query: each group's value and rows, the groups outside the bounds (or warn's) only."""
        metric = self._grouped(dialect)
        value, rows = metric.failing.copy(), metric.total.copy()
        cols: list[exp.Expr] = [exp.alias_(sqlbuild.column(g), sqlbuild.ident(g), copy=False) for g in self.group_by]
        cols += [exp.alias_(value, "value", copy=False), exp.alias_(rows, "total_rows", copy=False)]
        return (exp.select(*cols, copy=False).from_(sqlbuild.table(self.table or ""), copy=False)
                .group_by(*[sqlbuild.column(g) for g in self.group_by], copy=False)
                .having(metric.over_any(metric.failing, metric.total), copy=False)
                .sql(dialect=dialect, copy=False))

    def metrics(self, dialect: str) -> list[Metric]:
        self.filter(dialect)
        out: list[Metric] = [self._main(dialect)]
        if self.group_by:
            out.append(self._grouped(dialect))
        if self.agg in metric_sql.RATES:
            out.append(self.total_metric())
        if self.options.numeric_text:
            out.append(self._not_numeric(dialect))
        return out

    def measure(self, values: dict[Metric, Any], dialect: str) -> Measurement:
        main = self._main(dialect)
        raw = values[main]
        details: dict[str, Any] = {"agg": self.agg}
        agg = self.agg
        observed: float | int | None
        if isinstance(main, Standalone):
            count, low, high = raw[0], raw[1], raw[2]
            observed = rounded(metric_sql.interpolate(as_int(count), metric_sql.hundredths(agg), low, high))
        elif agg in ("count", "distinct"):
            observed = as_int(raw)
        elif agg in metric_sql.RATES:
            total = as_int(values[self.total_metric()])
            observed = rounded(as_int(raw) / total) if total else None
            details["rows"] = total
        elif agg == "sum":
            observed = rounded(raw) if raw is not None else 0.0
        else:
            observed = rounded(raw)
        if self.options.numeric_text:
            details["not_numeric"] = as_int(values[self._not_numeric(dialect)])
        if self.group_by:
            details.update(values[self._grouped(dialect)].details())
        if observed is None:
            details["note"] = ("no value to aggregate (no rows, or only NULLs and null markers"
                               + (", or a single value: stddev needs two" if agg == "stddev" else "") + ")")
        return Measurement(observed=observed, details=details)

    # ---- per bucket of a timestamp_column (anomaly: {timestamp_column: …}; see scan/anomaly_series.py)
    def bucket_aggregates(self, dialect: str) -> list[exp.Expr]:
        """The aggregates computed per bucket: the metric's own (rates: the rows, then the rows counted)."""
        main = self._main(dialect)
        if isinstance(main, Standalone):
            raise QueryRefused(f"a percentile per bucket needs PostgreSQL, DuckDB or Spark, not {dialect}: leave "
                               "timestamp_column out to judge it against the audit's run history")
        if self.agg in metric_sql.RATES:
            return [sqlbuild.count_star(), main.expression.copy()]
        return [main.expression.copy()]

    def bucket_value(self, got: tuple[Any, ...] | None) -> float | None:
        """A bucket's value from the aggregates of :meth:`bucket_aggregates` (None: the bucket had no rows)."""
        if self.agg in metric_sql.RATES:
            total = as_int(got[0]) if got else 0
            return as_int(got[1]) / total if got and total else None
        if self.agg in ("count", "distinct", "sum"):
            return float(got[0] or 0) if got else 0.0
        value = rounded(got[0]) if got else None
        return None if value is None else float(value)

    def breached(self, m: Measurement) -> bool:
        if self.group_by:
            return super().breached(m)
        return _outside(m.observed, self.options.min, self.options.max)

    def warned(self, m: Measurement) -> bool:
        if self.group_by:
            return super().warned(m)
        warn = self.options.warn
        return warn is not None and _outside(m.observed, warn.min, warn.max)

    def finding_sql(self, dialect: str) -> str | None:
        if self.group_by:
            return self._groups_sql(dialect)
        main = self._main(dialect)
        if isinstance(main, Standalone):
            return main.sql
        query = (exp.select(main.expression.copy(), copy=False).from_(sqlbuild.table(self.table or ""), copy=False)
                 .where(self.filter(dialect), copy=False))
        return query.sql(dialect=dialect, copy=False)


def _within(expression: exp.Expr, where: exp.Expr) -> exp.Expr:
    """``expression``, an aggregate over the table, over the rows of ``where`` only: its argument is NULL
    elsewhere (a CASE around the argument; counts, as SUM(CASE ...), become SUM(CASE WHEN where ...))."""
    node = expression
    inner = node.this if isinstance(node, exp.AggFunc) else None
    if inner is None:
        raise QueryRefused("this metric cannot be judged per group with a where; drop where or group_by")
    node.set("this", exp.Case(ifs=[exp.If(this=where.copy(), true=inner)]))
    return node


def _outside(observed: float | int | None, low: float | None, high: float | None) -> bool:
    if low is None and high is None:
        return False
    if observed is None:  # nothing to compare with the bounds: not a pass
        return True
    return (low is not None and observed < low) or (high is not None and observed > high)


__all__ = ["MetricCheck", "MetricOptions"]
