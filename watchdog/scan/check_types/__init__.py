"""Check types, one small module each, registered by name (see ``base.register``)."""

from watchdog.scan.check_types import (  # noqa: F401  (importing registers them)
    accepted_values,
    custom_sql,
    expression,
    foreign_key,
    freshness,
    functional_dependency,
    not_null,
    pattern,
    range_check,
    row_count,
    schema,
    unique,
)
from watchdog.scan.check_types.base import (
    Aggregate,
    Check,
    Columns,
    Measurement,
    Metric,
    Standalone,
    check_types,
)

__all__ = ["Aggregate", "Check", "Columns", "Measurement", "Metric", "Standalone", "check_types"]
