"""``anomaly:`` on a check: judge its figure against history with :mod:`watchdog.anomaly_detector`.

Two sources of history:

* the run history of the audit (no ``timestamp_column``): the figure of this run against the same
  check's figures in earlier runs (``check.past``, set by the scanner);
* per-bucket values from the table itself (``timestamp_column`` + ``bucket`` + ``training``): one
  GROUP BY statement over the training window and the detection period. Only complete buckets are
  judged: the last ``detection`` buckets before the current one, each against the buckets before
  the detection period. The current bucket is never judged.

The figure: row-level checks judge their ``rate`` (or ``failing``), ``row_count`` the number of
rows, ``freshness`` the age of the newest value (per bucket: the age at the bucket's end of the
newest value seen by then). With ``anomaly`` the check breaches when the figure is anomalous, or
when a threshold that was given explicitly (max_count, max_rate, min, max, max_age) is crossed.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import TYPE_CHECKING, Any, cast

from sqlglot import exp

from watchdog.errors import QueryError
from watchdog.scan import sqlbuild
from watchdog.scan.check_types import Check, Measurement, Metric, Standalone
from watchdog.scan.check_types.anomaly_options import BUCKET_SECONDS, AnomalyOptions
from watchdog.scan.check_types.freshness import to_utc
from watchdog.scan.check_types.row_condition import RowConditionCheck

if TYPE_CHECKING:  # the detector (and statistics) is imported where a check has anomaly: (not every scan)
    from watchdog.anomaly_detector import DetectorConfig, Judgement

SERIES_POINTS = 400
THRESHOLDS = ("max_count", "max_rate", "min", "max", "max_age", "max_psi")
#: checks whose figure is one value (``observed``), judged as ``metric: value``
VALUE_KINDS = ("row_count", "freshness", "metric", "distribution")
#: of those, the ones whose value can be computed per bucket of a ``timestamp_column``
BUCKETED_VALUE_KINDS = ("row_count", "freshness", "metric")


def spec_of(check: Check) -> AnomalyOptions | None:
    spec = getattr(check.options, "anomaly", None)
    return spec if isinstance(spec, AnomalyOptions) else None


def metric_of(check: Check, spec: AnomalyOptions) -> str:
    if spec.metric:
        return spec.metric
    return "value" if check.kind in VALUE_KINDS else "rate"


def suite_problems(check: Check) -> list[str]:
    """What is wrong with a check's ``anomaly:`` (reported with the suite's file and line)."""
    spec = spec_of(check)
    if spec is None:
        return []
    problems = []
    whole_table = check.kind in VALUE_KINDS
    metric = metric_of(check, spec)
    if whole_table and metric != "value":
        problems.append(f"anomaly metric {metric!r} is for row-level checks; {check.kind} judges its value")
    if not whole_table and metric == "value":
        problems.append("anomaly metric 'value' is for row_count, freshness, metric and distribution; use rate or "
                        "failing")
    bucketed = check.kind in BUCKETED_VALUE_KINDS or isinstance(check, RowConditionCheck)
    if spec.timestamp_column and not bucketed:
        problems.append(f"{check.kind} cannot be bucketed by timestamp_column (it is not one condition per row); "
                        "leave timestamp_column out to judge it against the audit's run history")
    return problems


def config_of(spec: AnomalyOptions) -> DetectorConfig:
    from watchdog.anomaly_detector import DetectorConfig

    return DetectorConfig(sensitivity=spec.sensitivity, direction=spec.direction, min_change=spec.min_change,
                          min_training=spec.min_training, seasonality=spec.seasonality, trend=spec.trend)


# ---- buckets


@dataclass
class BucketPlan:
    metric: Standalone
    starts: list[datetime]
    size: timedelta
    detection: int


def current_bucket_start(now: datetime, bucket: str) -> datetime:
    start = now.astimezone(UTC).replace(minute=0, second=0, microsecond=0)
    if bucket in ("day", "week"):
        start = start.replace(hour=0)
    if bucket == "week":
        start -= timedelta(days=start.weekday())
    return start


#: warehouses (generated SQL only): weeks start on Monday everywhere (Snowflake: with WEEK_START at its default 0)
WAREHOUSE_DIALECTS = ("trino", "snowflake", "bigquery", "databricks")


def _bucket_key(col: exp.Expr, bucket: str, dialect: str) -> exp.Expr:
    if dialect == "bigquery":  # the column as a DATETIME (a TIMESTAMP in UTC), weeks from Monday
        unit: exp.Expr = exp.var("WEEK(MONDAY)") if bucket == "week" else exp.var(bucket.upper())
        return exp.Anonymous(this="DATETIME_TRUNC", expressions=[_bound(col, dialect), unit])
    if dialect in WAREHOUSE_DIALECTS or dialect == "spark":  # DATE_TRUNC('DAY', col): the unit in any case
        return exp.TimestampTrunc(this=col, unit=exp.var(bucket.upper()))
    if dialect in ("postgres", "duckdb"):
        return exp.Anonymous(this="DATE_TRUNC", expressions=[exp.Literal.string(bucket), col])
    if dialect == "mysql":
        if bucket == "week":
            col = exp.DateSub(this=col, expression=exp.Anonymous(this="WEEKDAY", expressions=[col.copy()]),
                              unit=exp.var("DAY"))
        fmt = "%Y-%m-%d %H:00:00" if bucket == "hour" else "%Y-%m-%d"
        return exp.Anonymous(this="DATE_FORMAT", expressions=[col, exp.Literal.string(fmt)])
    if bucket == "week":  # SQLite: the Monday on or before the day
        return exp.Anonymous(this="DATE", expressions=[col, exp.Literal.string("-6 days"),
                                                       exp.Literal.string("weekday 1")])
    fmt = "%Y-%m-%d %H:00:00" if bucket == "hour" else "%Y-%m-%d"
    return exp.Anonymous(this="STRFTIME", expressions=[exp.Literal.string(fmt), col])


def _bound(col: exp.Expr, dialect: str) -> exp.Expr:
    """The column as compared with the window's bounds (SQLite: normalised text, 'T' or not)."""
    if dialect == "bigquery":  # DATE, DATETIME and TIMESTAMP do not compare with each other: all as DATETIME
        return exp.Cast(this=col, to=exp.DataType.build("datetime", dialect="bigquery"))
    if dialect in ("postgres", "mysql", "duckdb", "spark") or dialect in WAREHOUSE_DIALECTS:
        return col
    return exp.Anonymous(this="DATETIME", expressions=[col])


def _stamp(moment: datetime, dialect: str) -> exp.Expr:
    """A window bound: text, typed as a TIMESTAMP where text does not compare with one (Trino)."""
    text = exp.Literal.string(moment.strftime("%Y-%m-%d %H:%M:%S"))
    if dialect in WAREHOUSE_DIALECTS and dialect != "bigquery":  # BigQuery coerces a literal itself
        return exp.Cast(this=text, to=exp.DataType.build("timestamp"))
    return text


def _aggregates(check: Check, dialect: str) -> list[exp.Expr]:
    if check.kind == "row_count":
        return [sqlbuild.count_star()]
    if check.kind == "freshness":
        return [exp.Max(this=sqlbuild.column(check.column or ""))]
    if check.kind == "metric":  # the metric's own aggregate per bucket (see MetricCheck.bucket_aggregates)
        return cast(list[exp.Expr], check.bucket_aggregates(dialect))  # type: ignore[attr-defined]
    assert isinstance(check, RowConditionCheck)
    return [sqlbuild.count_star(), sqlbuild.case_count(check.condition(dialect))]


def plan_buckets(check: Check, spec: AnomalyOptions, dialect: str, now: datetime) -> BucketPlan:
    bucket = spec.bucket or "day"
    size = timedelta(seconds=BUCKET_SECONDS[bucket])
    current = current_bucket_start(now, bucket)
    training = max(1, int(round(spec.training_seconds() / size.total_seconds())))
    first = current - size * (training + spec.detection)
    starts = [first + size * i for i in range(training + spec.detection)]
    ts = sqlbuild.column(spec.timestamp_column or "")
    key = _bucket_key(ts.copy(), bucket, dialect)
    window = cast(exp.Expr, exp.and_(
        exp.GTE(this=_bound(ts.copy(), dialect), expression=_stamp(first, dialect)),
        exp.LT(this=_bound(ts, dialect), expression=_stamp(current, dialect)), copy=False))
    query = (exp.select(exp.alias_(key.copy(), "wd_bucket", copy=False),
                        *[exp.alias_(a, f"wd_a{i}", copy=False) for i, a in enumerate(_aggregates(check, dialect))],
                        copy=False)  # fresh nodes: built in place (see unique._groups)
             .from_(sqlbuild.table(check.table or ""), copy=False)
             .where(sqlbuild.and_all(window, check.filter(dialect)), copy=False)
             .group_by(key, copy=False))
    sql = query.sql(dialect=dialect, copy=False)
    return BucketPlan(Standalone(sql, sql, rows=len(starts) + 2), starts, size, spec.detection)


def extra_metrics(check: Check, dialect: str, now: datetime | None = None) -> list[Metric]:
    """The statement an ``anomaly`` with ``timestamp_column`` needs (remembered on the check)."""
    spec = spec_of(check)
    if spec is None or not spec.timestamp_column or suite_problems(check):
        return []
    plan = plan_buckets(check, spec, dialect, now or datetime.now(UTC))
    check.__dict__["_wd_bucket_plan"] = plan
    return [plan.metric]


def _bucket_series(check: Check, spec: AnomalyOptions, plan: BucketPlan,
                   rows: list[tuple[Any, ...]]) -> list[tuple[datetime, float | None]]:
    by_start: dict[datetime, tuple[Any, ...]] = {}
    for row in rows:
        if row[0] is None:
            continue
        by_start[to_utc(row[0])] = tuple(row[1:])
    metric = metric_of(check, spec)
    series: list[tuple[datetime, float | None]] = []
    newest: datetime | None = None
    seen = False
    for start in plan.starts:
        got = by_start.get(start)
        if check.kind == "row_count":  # no bucket before the first with rows counts (the table was not there yet)
            seen = seen or got is not None
            series.append((start, float(got[0]) if got else (0.0 if seen else None)))
        elif check.kind == "freshness":
            if got and got[0] is not None:
                stamp = to_utc(got[0])
                newest = stamp if newest is None or stamp > newest else newest
            end = start + plan.size
            series.append((start, (end - newest).total_seconds() if newest is not None else None))
        elif check.kind == "metric":
            series.append((start, check.bucket_value(got)))  # type: ignore[attr-defined]
        else:
            total, failing = (int(got[0] or 0), int(got[1] or 0)) if got else (0, 0)
            if metric == "failing":
                series.append((start, float(failing)))
            else:
                series.append((start, failing / total if total else None))
    return series


# ---- run history


def _figure(finding: dict[str, Any], metric: str) -> float | None:
    value = finding.get("observed") if metric == "value" else finding.get(metric)
    return None if value is None or finding.get("status") == "error" else float(value)


def _current(m: Measurement, metric: str) -> float | None:
    value = m.observed if metric == "value" else (m.rate if metric == "rate" else m.failing)
    return None if value is None else float(value)


def _history_series(check: Check, spec: AnomalyOptions, now: datetime) -> list[tuple[datetime, float]]:
    metric = metric_of(check, spec)
    since = now - timedelta(seconds=spec.training_seconds()) if spec.training else None
    points: list[tuple[datetime, float]] = []
    for item in check.past:
        value = _figure(item.get("finding") or {}, metric)
        try:
            at = to_utc(item.get("started_at"))
        except QueryError:
            continue
        if value is not None and (since is None or at >= since):
            points.append((at, value))
    return points


# ---- judging


def _verdict(j: Judgement, at: datetime) -> dict[str, Any]:
    return {"at": at.isoformat(), **{k: v for k, v in j.as_dict().items() if k != "training_points"}}


def evaluate(check: Check, m: Measurement, values: dict[Metric, Any], now: datetime | None = None) -> Measurement:
    """Add ``details["anomaly"]`` to a check's measurement (no-op without ``anomaly:``)."""
    spec = spec_of(check)
    if spec is None:
        return m
    now = now or datetime.now(UTC)
    from watchdog.anomaly_detector import judge_point

    metric = metric_of(check, spec)
    config = config_of(spec)
    info: dict[str, Any] = {"metric": metric, "sensitivity": spec.sensitivity, "direction": spec.direction}
    plan: BucketPlan | None = check.__dict__.get("_wd_bucket_plan")
    if spec.timestamp_column and plan is not None:
        series = _bucket_series(check, spec, plan, list(values[plan.metric] or []))
        training = [(at, v) for at, v in series[:-plan.detection] if v is not None]
        judged = []
        for at, value in series[-plan.detection:]:
            if value is None:
                continue
            j = judge_point(training, at, value, config, hourly=spec.bucket == "hour")
            judged.append((at, j))
        info.update(source="buckets", bucket=spec.bucket, timestamp_column=spec.timestamp_column,
                    training=spec.training or "28d", current_bucket=(plan.starts[-1] + plan.size).isoformat())
        points = [(at, v) for at, v in series if v is not None]
    else:
        training = _history_series(check, spec, now)
        value = _current(m, metric)
        judged = [] if value is None else [(now, judge_point(training, now, value, config))]
        info.update(source="history", training=spec.training)
        points = [*training, *([(now, value)] if value is not None else [])]
    if judged:
        last_at, last = judged[-1]
        info.update(value=last.value, expected=_r(last.expected), low=_r(last.low), high=_r(last.high),
                    training_points=last.training_points, reason=last.reason,
                    anomalous=any(j.anomalous for _, j in judged),
                    judged=[_verdict(j, at) for at, j in judged])
    else:
        info.update(value=None, expected=None, low=None, high=None, training_points=len(training),
                    anomalous=False, reason="no value to judge", judged=[])
    info["series"] = [{"at": at.isoformat(), "value": _r(v)} for at, v in points[-SERIES_POINTS:]]
    m.details["anomaly"] = info
    return m


def _r(value: float | None) -> float | None:
    return None if value is None else round(value, 6)


def breached(check: Check, m: Measurement) -> bool:
    """With ``anomaly:``: anomalous, or over a threshold given explicitly; otherwise the check's own rule."""
    info = m.details.get("anomaly")
    if spec_of(check) is None or not isinstance(info, dict):
        return check.breached(m)
    explicit = any(getattr(check.options, key, None) is not None for key in THRESHOLDS)
    return bool(info.get("anomalous")) or (explicit and check.breached(m))
