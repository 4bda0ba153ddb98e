"""Render every statement a scan of tests/golden/warehouses/suite.yaml would send to a warehouse.

Used by tests/test_warehouse_dialects.py to write and compare the golden files. No server is involved:
the planner, the check types and the samples builder are called as the scanner calls them, with the
column types a catalogue would report (:data:`SCHEMA`) and a made-up measurement (every row-level check
breaching with 3 failing rows of 1000) so that the sample statements are built too.
"""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path

from watchdog.sandbox.dialects import GENERATED_ONLY, WAREHOUSES
from watchdog.scan import anomaly_series, samples
from watchdog.scan.check_types import Check
from watchdog.scan.check_types.base import Measurement
from watchdog.scan.planner import plan
from watchdog.scan.suites import load_suites

GOLDEN = Path(__file__).parent / "golden" / "warehouses"
SUITE = GOLDEN / "suite.yaml"
DIALECTS = tuple(WAREHOUSES)
SAMPLE = 5
#: the anomaly statements' clock (their window bounds are literals)
NOW = datetime(2026, 3, 4, 10, 30, tzinfo=UTC)
UPDATE_COMMAND = ".venv/bin/pytest tests/test_warehouse_dialects.py --update-golden"

#: what a catalogue would say: {table: {column: (kind, declared type)}}
SCHEMA: dict[str, dict[str, tuple[str, str]]] = {
    "sales.orders": {
        "order_no": ("number", "bigint"), "customer_id": ("number", "bigint"), "email": ("text", "varchar"),
        "first_name": ("text", "varchar"), "last_name": ("text", "varchar"), "sku": ("text", "varchar"),
        "notes": ("text", "varchar"), "status": ("text", "varchar"), "priority": ("number", "integer"),
        "ship_date": ("temporal", "date"), "order_date": ("temporal", "date"),
        "amount": ("number", "decimal(12,2)"), "discount": ("number", "decimal(12,2)"),
        "created_at": ("temporal", "timestamp"), "zip": ("text", "varchar"), "city": ("text", "varchar"),
    },
    "sales.customers": {"id": ("number", "bigint"), "email": ("text", "varchar")},
}


def suite_checks() -> list[Check]:
    [suite] = load_suites([SUITE])
    for check in suite.checks:
        check.column_kinds = dict(SCHEMA.get(check.table or "", {}))
    return suite.checks


def anomaly_checks() -> list[Check]:
    """Checks judged per time bucket: their statements are rendered with the fixed clock :data:`NOW`."""
    path = GOLDEN / "anomaly_suite.yaml"
    [suite] = load_suites([path])
    return suite.checks


def statements(dialect: str) -> list[tuple[str, str]]:
    """``(label, sql)`` for every statement, in a stable order."""
    checks = suite_checks()
    out: list[tuple[str, str]] = []
    the_plan = plan(checks, dialect, sample=SAMPLE)
    assert not the_plan.errors, the_plan.errors
    for statement in the_plan.statements:
        if statement.is_batch:
            label = f"aggregate pass over {statement.table}" + (f" where {statement.where}" if statement.where else "")
        else:
            label = "own statement" + (f" with up to {statement.sample_rows} sample rows" if statement.sample_rows
                                       else "") + f": {_owner(checks, the_plan.needs, statement.metrics[0])}"
        out.append((label, statement.sql))
    unsampled = plan(checks, dialect, sample=0)
    for statement in unsampled.statements:
        if not statement.is_batch and statement.sql not in {sql for _, sql in out}:
            out.append((f"own statement (no samples wanted): {_owner(checks, unsampled.needs, statement.metrics[0])}",
                        statement.sql))
    for check in checks:
        sql = check.finding_sql(dialect)
        if sql:
            out.append((f"finding sql: {check.name}", sql))
    out.extend(_samples(checks, dialect))
    for check in anomaly_checks():
        spec = anomaly_series.spec_of(check)
        assert spec is not None
        bucket_plan = anomaly_series.plan_buckets(check, spec, dialect, NOW)
        out.append((f"anomaly buckets ({spec.bucket}): {check.name}", bucket_plan.metric.sql))
    return out


def _owner(checks: list[Check], needs: dict[str, list], metric: object) -> str:
    return ", ".join(c.name for c in checks if metric in needs.get(c.name, []))


def _samples(checks: list[Check], dialect: str) -> list[tuple[str, str]]:
    """The one sample pass per table, and the checks that fetch their sample with a query of their own."""
    breaching = Measurement(failing=3, total=1000)
    by_table: dict[str, list[tuple[Check, object]]] = {}
    own: list[tuple[str, str]] = []
    for check in checks:
        if check.kind == "foreign_key":  # its sample rides on its own anti-join (in the plan above)
            continue
        extra = None
        if check.kind == "unique":  # the first duplicated key, as the sampled GROUP BY would return it
            keys = getattr(check, "key_columns", [])
            key = tuple(42 if check.column_kind(c)[0] == "number" else "Lee " for c in keys)
            extra = ([f"k{i}" for i in range(len(keys))] + ["n"], [(*key, 2)])
        spec = check.sample_spec(dialect, breaching, extra, SAMPLE)
        if spec is not None and spec.condition is not None:
            by_table.setdefault(check.table or "", []).append((check, spec))
            continue
        query = check.sample_query(dialect, SAMPLE)
        if query is not None:
            own.append((f"sample query: {check.name}", query.sql(dialect=dialect)))
    out = []
    for table, items in by_table.items():
        conditions = [(spec.condition, spec.expected) for _, spec in items]  # type: ignore[attr-defined]
        names = ", ".join(check.name for check, _ in items)
        out.append((f"sample pass over {table} for: {names}",
                    samples.table_sample(table, conditions, SAMPLE, dialect).sql))
    return out + own


def render(dialect: str) -> str:
    label = WAREHOUSES[dialect].label
    lines = [f"-- {label} ({dialect}): {GENERATED_ONLY}.",
             f"-- The statements a scan of suite.yaml sends; regenerate with: {UPDATE_COMMAND}", ""]
    for label_text, sql in statements(dialect):
        lines += [f"-- {label_text}", sql + ";", ""]
    return "\n".join(lines)
