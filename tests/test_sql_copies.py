"""The check types build their SQL in place (sqlglot ``copy=False``): no shared node may be consumed.

Every statement is built twice from the same check and must come out the same both times (a node
shared between builds and mutated by the first would change the second), and a small scan's
planning makes few deep copies (it made 84 when every builder step copied the query so far).
"""

from __future__ import annotations

from datetime import UTC, datetime

import pytest
from sqlglot.expressions import core

from watchdog.scan import anomaly_series, planner, samples
from watchdog.scan.check_types.base import Aggregate, Measurement, Standalone
from watchdog.scan.suites import load_suite

DIALECTS = ["sqlite", "postgres", "mysql", "duckdb", "trino", "snowflake", "bigquery", "databricks", "spark"]
KINDS = {"id": ("number", "INTEGER"), "email": ("text", "TEXT"), "status": ("text", "TEXT"),
         "amount": ("number", "REAL"), "created_at": ("temporal", "TIMESTAMP"), "customer_id": ("number", "INT"),
         "zip": ("text", "TEXT"), "city": ("text", "TEXT"), "d": ("temporal", "DATE")}

SUITE = """\
tables:
  orders:
    - not_null: id
    - not_null: {column: email, where: "status <> 'x'", anomaly: {timestamp_column: created_at, bucket: week}}
    - unique: {column: [id, email], max_rate: 0.1}
    - unique: {column: email, where: "amount > 0"}
    - accepted_values: {column: status, values: [open, 1, 2.5]}
    - accepted_values: {column: d, values: ['2024-01-01']}
    - range: {column: amount, min: 0, max: 1000.0}
    - range: {column: created_at, min: 2024-01-01, where: "id > 1"}
    - pattern: {column: email, regex: '@', match: yes}
    - pattern: {column: email, regex: '^[a-z]+$', match: false, name: p2}
    - expression: {condition: "amount >= 0", nulls: fail}
    - foreign_key: {column: customer_id, references: customers.id}
    - foreign_key: {column: email, references: sales.customers.email, where: "id > 0"}
    - freshness: {column: created_at, max_age: 30d}
    - functional_dependency: {determinant: [zip, status], dependent: city, where: "id > 0"}
    - row_count: {min: 1, anomaly: {timestamp_column: created_at, detection: 3}}
custom_sql:
  - {name: rows, failing_rows_sql: "SELECT * FROM orders WHERE amount < 0;"}
"""


def _extra(check):
    if check.kind != "unique":
        return ["x"], [(1,)]
    if check.columns:
        return ["k0", "k1", "n"], [("a", None, 2), ("b", 1, 3)]
    return ["k0", "n"], [("a", 2), ("b", 3)]


def _texts(checks, dialect: str) -> list[str]:
    """Every SQL text built from ``checks`` on ``dialect``."""
    out: list[str] = []
    conditions = []
    for check in checks:
        for metric in check.metrics(dialect):
            if isinstance(metric, Aggregate):
                out.append(metric.expression.sql(dialect=dialect))
            elif isinstance(metric, Standalone):
                out += [metric.sql, metric.sampled(5) if metric.sampled else ""]
        out.append(str(check.finding_sql(dialect)))
        query = check.sample_query(dialect, 5)
        out.append(query.sql(dialect=dialect) if query is not None else "")
        spec = check.sample_spec(dialect, Measurement(failing=3, total=10), _extra(check), 5)
        if spec is not None and spec.condition is not None:
            out.append(spec.condition.sql(dialect=dialect))
            conditions.append((spec.condition, spec.expected))
        spec_of = anomaly_series.spec_of(check)
        if spec_of is not None and spec_of.timestamp_column:
            plan = anomaly_series.plan_buckets(check, spec_of, dialect, datetime(2026, 1, 1, tzinfo=UTC))
            out.append(plan.metric.sql)
    out += [s.sql for s in planner.plan(checks, dialect, sample=5).statements]
    out += [s.sql for s in planner.plan(checks, dialect, max_columns=2).statements]
    out.append(samples.table_sample("orders", conditions, 5, dialect).sql)
    out.append(samples.table_sample("orders", [(c, None) for c, _ in conditions[:3]], 5, dialect).sql)
    return out


@pytest.mark.parametrize("dialect", DIALECTS)
def test_every_statement_comes_out_the_same_when_built_again(tmp_path, dialect):
    path = tmp_path / "suite.yaml"
    path.write_text(SUITE, encoding="utf-8")
    checks = load_suite(path).checks
    for check in checks:
        check.column_kinds = dict(KINDS)
    first = _texts(checks, dialect)
    assert first == _texts(checks, dialect)
    assert len(first) > 60 and all("copy" not in text.lower() for text in first)


def test_a_small_scan_plan_makes_few_deep_copies(tmp_path, monkeypatch):
    path = tmp_path / "suite.yaml"
    path.write_text("tables:\n  t:\n    - not_null: email\n    - unique: id\n    - row_count: {min: 1}\n")
    checks = load_suite(path).checks
    copies = []
    real = core.Expression.__deepcopy__

    def counting(self, memo):
        copies.append(type(self).__name__)
        return real(self, memo)

    monkeypatch.setattr(core.Expression, "__deepcopy__", counting)
    plan = planner.plan(checks, "sqlite", sample=5)
    for check in checks:
        check.finding_sql("sqlite")
    assert len(plan.statements) == 2
    assert len(copies) <= 12, copies  # 9 here; 66 when every builder step copied the query built so far
