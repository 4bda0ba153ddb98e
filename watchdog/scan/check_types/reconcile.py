"""``reconcile``: the table matches its copy on another database (``with:``, a configured name or a URL).

Two forms. With ``key``, rows are compared by checksum bisection (:mod:`watchdog.reconcile`): ``failing`` is the
rows missing on either side plus the changed rows (and keys held by several rows), ``total`` the source's rows,
so ``max_count``/``max_rate`` tolerate a lag. With ``metrics`` (``count``, ``sum(amount)``, ``max(updated_at)``
...), one statement per side computes the aggregates and ``failing`` is the number that differ. ``where`` filters
both sides (``target_where`` the target's differently).
"""

from __future__ import annotations

import re
from typing import Any, Literal

from watchdog.scan.check_types.base import (
    Check,
    Measurement,
    Metric,
    Procedure,
    RowCheckOptions,
    SampleSpec,
    register,
)
from watchdog.scan.check_types.fields import OptionsError, Problem, option, options_class

_TIMESTAMPS = {"s": 0, "ms": 3, "us": 6}


def _names(value: Any) -> Any:
    return [value] if isinstance(value, str) else value


@options_class
class ReconcileOptions(RowCheckOptions):
    #: written ``with:`` in suites: a database name from the configuration, or a URL
    with_: str = option(min_length=1)
    #: the table on the other database (default: the same name)
    table: str | None = option(None, min_length=1)
    key: list[str] | None = option(None, before=_names)
    columns: list[str] | None = option(None, before=_names)
    exclude: list[str] | None = option(None, before=_names)
    target_where: str | None = option(None, min_length=1)
    precision: int | None = option(None, ge=0, le=18)
    timestamp_precision: Literal["s", "ms", "us"] | None = None
    metrics: list[str] | None = option(None, min_length=1)
    samples: int = option(5, ge=0)

    @classmethod
    def parse(cls, data: Any) -> Any:
        """``with`` is a Python keyword: the field is ``with_``, and every message says ``with``."""
        if isinstance(data, dict):
            if "with_" in data:
                raise OptionsError([Problem(("with_",), "unknown option 'with_' (write with:)")])
            data = {("with_" if k == "with" else k): v for k, v in data.items()}
        try:
            return super().parse(data)
        except OptionsError as exc:
            raise OptionsError([Problem(tuple("with" if part == "with_" else part for part in p.loc),
                                        p.message.replace("'with_'", "'with'")) for p in exc.problems]) from None

    def __post_init__(self) -> None:
        super().__post_init__()
        if self.metrics is not None and (self.key or self.columns or self.exclude):
            raise ValueError("give metrics (aggregates compared) or key/columns (rows compared), not both")
        if self.metrics is not None:
            from watchdog.reconcile.metrics import parse_metric

            for metric in self.metrics:
                parse_metric(metric)


def _label(with_: str) -> str:
    """A configured name as it is; a URL by its database's name (``sqlite:///data/copy.db`` -> ``copy``), never its
    host or user info."""
    if "://" not in with_:
        return with_
    tail = with_.split("?", 1)[0].rstrip("/").rsplit("/", 1)[-1]
    name = re.sub(r"\.(db|sqlite3?|duckdb)$", "", tail)
    return re.sub(r"[^A-Za-z0-9_]+", "_", name).strip("_") or "other"


@register
class Reconcile(Check):
    kind = "reconcile"
    Options = ReconcileOptions
    options: ReconcileOptions
    short_form = None

    @property
    def name(self) -> str:
        if self.options.name:
            return self.options.name
        form = "metrics." if self.options.metrics is not None else ""
        return f"{self.table}.{_label(self.options.with_)}.{form}reconcile"

    def metrics(self, dialect: str) -> list[Metric]:
        from watchdog.reconcile import counterpart

        resolver = counterpart.current()  # on the scan's own thread: the run's configuration
        return [Procedure(f"reconcile:{self.name}", lambda sandbox: self._compare(sandbox, resolver), self.table)]

    def _compare(self, sandbox: Any, resolver: Any) -> Any:
        from watchdog.reconcile import DiffSpec, counterpart, diff_tables
        from watchdog.reconcile.metrics import compare_metrics
        from watchdog.sandbox import Sandbox

        o = self.options
        target_db = counterpart.resolve(o.with_, resolver)
        with Sandbox.for_database(target_db) as other:
            if o.metrics is not None:
                return compare_metrics(sandbox, other, self.table or "", o.table or self.table or "", o.metrics,
                                       where=o.where, target_where=o.target_where, precision=o.precision)
            spec = DiffSpec(table=self.table or "", target_table=o.table, key=list(o.key or []),
                            columns=o.columns, exclude=list(o.exclude or []), where=o.where,
                            target_where=o.target_where, samples=o.samples, precision=o.precision,
                            deadline_s=target_db.timeout_s * 10,
                            timestamp_precision=_TIMESTAMPS[o.timestamp_precision]  # type: ignore[arg-type]
                            if o.timestamp_precision else None)
            return diff_tables(sandbox, other, spec)

    def measure(self, values: dict[Metric, Any], dialect: str) -> Measurement:
        (result,) = values.values()
        if isinstance(result, dict):  # the metrics form: failing = the metrics that differ
            return Measurement(failing=result["differing"], total=len(result["metrics"]),
                               details={"metrics": result["metrics"], "statements": result["statements"]})
        doc = result.to_json()
        del doc["seconds"]
        return Measurement(failing=result.differences, total=result.source_rows, details=doc)

    def sample_spec(self, dialect: str, m: Measurement, extra: Any, rows: int) -> SampleSpec | None:
        """The keys bisection found, each with what differs: ``{"difference": "changed", "id": 42, "column": …}``."""
        if "metrics" in m.details:  # the metrics that differ
            return SampleSpec(rows=[{k: r[k] for k in ("metric", "source", "target")}
                                    for r in m.details["metrics"] if not r["equal"]][:max(rows, 0)])
        found = m.details.get("samples") or {}
        keys = list(m.details.get("key") or [])
        out = []
        for kind in ("missing_in_target", "missing_in_source", "changed", "duplicate_keys"):
            for row in found.get(kind) or []:
                out.append({"difference": kind, **{k: row.get(k) for k in keys},
                            **{k: row.get(k, "") for k in ("column", "source", "target")}})
        return SampleSpec(rows=out[:max(rows, 0)])
