"""Findings from the catalogue: ``<table>.volume``, ``<table>.freshness``, ``<table>.schema_changes``.

* **volume** -- the table's rows (exact or an estimate, said in ``details``), judged against the audit's earlier
  runs by the robust detector with a trend line (a table that grows steadily is not an anomaly, a jump or a drop
  is); ``min_rows`` is a floor whatever the history says.
* **freshness** -- how long no change has been seen. MySQL/MariaDB give the time of the last write
  (``update_time``); elsewhere a change is seen when the write counters (PostgreSQL) or the row count (DuckDB,
  SQLite) moved since the previous run, so the age is *at least* the figure (the change happened between that
  run and the one that saw it). Judged with the trend too, spikes only, and against ``max_age`` when given.
* **schema_changes** -- columns added, removed, or whose declared type changed since the previous run; a table
  that appeared since then is reported as new, one that disappeared as dropped (once).
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

from watchdog.findings import Finding, Status, jsonable
from watchdog.monitor.catalogue import Catalogue
from watchdog.monitor.config import FreshnessOptions, Judging, MonitorConfig, VolumeOptions, age_seconds
from watchdog.monitor.history import Past, PreviousRun, last, previous_run, series
from watchdog.monitor.stats import TableStats

#: the series kept in each finding (for the chart): short, as a monitor files thousands of findings a run
SERIES_POINTS = 30


def table_findings(catalogue: Catalogue, config: MonitorConfig, past: Past, now: datetime) -> list[Finding]:
    """Every monitored table's findings, then the dropped tables' (see the module)."""
    judge = _Judge(config, past, now, previous_run(past), catalogue.schemas)
    out: list[Finding] = []
    for table in catalogue.tables:
        out += judge.table(table)
    seen = {t.name for t in catalogue.tables}
    for name, schema in sorted((judge.previous.tables if judge.previous else {}).items()):
        if name not in seen and (schema is None or schema in catalogue.schemas):
            out.append(judge.dropped(name, schema))
    return out


class _Judge:
    def __init__(self, config: MonitorConfig, past: Past, now: datetime, previous: PreviousRun | None,
                 schemas: list[str]):
        self.config, self.past, self.now, self.previous = config, past, now, previous
        self.params: dict[str, Any] = {"monitor": True, "schemas": schemas}

    def table(self, t: TableStats) -> list[Finding]:
        volume, freshness = self.config.volume_options(), self.config.freshness_options()
        out = [self._volume(t, volume)] if volume else []
        out += [self._freshness(t, freshness)] if freshness else []
        return out + ([self._schema(t)] if self.config.schema_changes else [])

    def _finding(self, t_name: str, kind: str, breach: bool, *, observed: float | None, details: dict[str, Any],
                 params: dict[str, Any] | None = None, description: str) -> Finding:
        status: Status = self.config.severity if breach else "pass"
        return Finding(name=f"{t_name}.{kind}", check=kind, table=t_name, status=status,
                       severity=self.config.severity, params={**self.params, **(params or {})},
                       failing=int(breach) if kind == "schema_changes" else None, observed=observed,
                       details=jsonable(details), description=description)

    # ---- volume

    def _volume(self, t: TableStats, opts: VolumeOptions) -> Finding:
        name = f"{t.name}.volume"
        details: dict[str, Any] = {"schema": t.schema, "rows": t.rows, "rows_exact": t.rows_exact,
                                   "rows_source": t.rows_source, "write_counter": t.write_counter, **t.extra}
        before = last(self.past, name)
        if before is not None:
            old = before[1].get("details") or {}
            since: dict[str, Any] = {"run_at": before[0].isoformat()}
            if t.rows is not None and old.get("rows") is not None:
                since["rows"] = t.rows - int(old["rows"])
            for key in ("inserted", "updated", "deleted"):
                if key in t.extra and old.get(key) is not None and t.extra[key] >= old[key]:
                    since[key] = t.extra[key] - int(old[key])
            if t.write_counter is not None and old.get("write_counter") is not None:
                since["statistics_reset"] = t.write_counter < int(old["write_counter"])
            details["since_previous_run"] = since
        breach = False
        if t.rows is None:
            details["note"] = ("the catalogue has no row count for this table (SQLite keeps one only after ANALYZE); "
                               "list it under exact_counts for count(*)")
        else:
            details["anomaly"] = self._anomaly(name, float(t.rows), opts, "both")
            breach = bool(details["anomaly"]["anomalous"])
            if opts.min_rows is not None and t.rows < opts.min_rows:
                breach = True
        label = "exact" if t.rows_exact else "estimated"
        return self._finding(t.name, "volume", breach, observed=t.rows, details=details,
                             params={"min_rows": opts.min_rows} if opts.min_rows is not None else None,
                             description=f"Rows of {t.name} ({label}, from {t.rows_source}).")

    # ---- freshness

    def _freshness(self, t: TableStats, opts: FreshnessOptions) -> Finding:
        name = f"{t.name}.freshness"
        details: dict[str, Any] = {"schema": t.schema}
        observed: float | None
        if t.modified_age_s is not None:
            observed = float(t.modified_age_s)
            details.update(basis="information_schema.tables.update_time", age_is="exact",
                           last_change_at=(self.now - timedelta(seconds=observed)).isoformat())
        else:
            observed = self._seen_change(t, name, details)
        params: dict[str, Any] = {}
        breach = False
        if opts.max_age is not None:
            params = {"max_age": opts.max_age, "max_age_s": age_seconds(opts.max_age)}
            breach = observed is not None and observed > params["max_age_s"]
        if observed is not None:
            details["anomaly"] = self._anomaly(name, observed, opts, "spike")
            breach = breach or bool(details["anomaly"]["anomalous"])
        return self._finding(t.name, "freshness", breach, observed=observed, details=details, params=params,
                             description=f"Time since {t.name} last changed ({details.get('basis')}).")

    def _seen_change(self, t: TableStats, name: str, details: dict[str, Any]) -> float | None:
        """The age of the last change seen between runs (a lower bound), or None before there is one to compare."""
        signature = t.write_counter if t.write_counter is not None else t.rows
        details.update(basis="pg_stat_user_tables write counters" if t.write_counter is not None else
                       f"row count ({t.rows_source})", age_is="at least", signature=signature)
        before = last(self.past, name)
        old = (before[1].get("details") or {}) if before else {}
        if signature is None:
            details["note"] = "no figure that moves with writes: list the table under exact_counts"
            return None
        if before is None or old.get("signature") is None:
            details.update(watching_since=self.now.isoformat(), last_change_seen_at=None,
                           note="first run: a change is seen from the next run on")
            return None
        watching = old.get("watching_since") or before[0].isoformat()
        if signature != old["signature"]:
            seen, after = self.now, before[0]
            details.update(last_change_after=after.isoformat())
        else:
            seen_text = old.get("last_change_seen_at")
            seen = datetime.fromisoformat(seen_text) if seen_text else datetime.fromisoformat(watching)
            if old.get("last_change_after"):
                details["last_change_after"] = old["last_change_after"]
        details.update(watching_since=watching, last_change_seen_at=seen.isoformat() if signature != old["signature"]
                       or old.get("last_change_seen_at") else None)
        return round(max(0.0, (self.now - seen.astimezone(UTC)).total_seconds()), 3)

    # ---- schema changes

    def _schema(self, t: TableStats) -> Finding:
        name = f"{t.name}.schema_changes"
        details: dict[str, Any] = {"schema": t.schema, "previous_run": None, "added": [], "removed": [],
                                   "type_changed": [], "columns": t.columns}
        before = last(self.past, name)
        if self.previous is None:
            details["note"] = "no previous run to compare with"
        elif before is None or t.name not in self.previous.tables:
            details.update(previous_run=self.previous.run_id, new_table=True, added=[c["name"] for c in t.columns])
        else:
            details["previous_run"] = self.previous.run_id
            old = {c["name"]: c for c in (before[1].get("details") or {}).get("columns") or []}
            new = {c["name"]: c for c in t.columns}
            details["added"] = [n for n in new if n not in old]
            details["removed"] = [n for n in old if n not in new]
            details["type_changed"] = [
                {"column": n, "old": old[n]["generic"], "new": new[n]["generic"], "old_type": old[n]["type"],
                 "new_type": new[n]["type"]}
                for n in new if n in old and old[n]["type"].lower() != new[n]["type"].lower()]
        changes = len(details["added"]) + len(details["removed"]) + len(details["type_changed"])
        breach = bool(details.get("new_table")) or changes > 0
        finding = self._finding(t.name, "schema_changes", breach, observed=None, details=details,
                                description=f"Columns of {t.name} against the previous run.")
        finding.failing = 1 if details.get("new_table") else changes
        return finding

    def dropped(self, name: str, schema: str | None) -> Finding:
        kind = "schema_changes" if self.config.schema_changes else ("volume" if self.config.volume else "freshness")
        assert self.previous is not None
        details: dict[str, Any] = {"schema": schema, "dropped": True, "previous_run": self.previous.run_id, "added": [],
                   "removed": [], "type_changed": [], "columns": []}
        return self._finding(name, kind, True, observed=None, details=details,
                             description=f"{name} was there in the previous run and is gone.")

    # ---- the detector

    def _anomaly(self, name: str, value: float, opts: Judging, direction: str) -> dict[str, Any]:
        from watchdog.anomaly_detector import DetectorConfig, judge_point

        points = series(self.past, name)
        config = DetectorConfig(sensitivity=opts.sensitivity, direction=direction,  # type: ignore[arg-type]
                                min_change=opts.min_change, min_training=opts.min_training, trend=True)
        j = judge_point(points, self.now, value, config)
        info = {"metric": "value", "source": "history", "sensitivity": opts.sensitivity, "direction": direction,
                **{k: v for k, v in j.as_dict().items() if k != "score"}}
        info["judged"] = [{"at": self.now.isoformat(), **j.as_dict()}] if j.expected is not None else []
        info["series"] = [{"at": at.isoformat(), "value": v} for at, v in [*points, (self.now, value)][-SERIES_POINTS:]]
        return info
