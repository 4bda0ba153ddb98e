"""Check types, one small module each, registered by name (see ``base.register``); a type's module is imported
when a suite first uses it (``base.KIND_MODULES``)."""

from watchdog.scan.check_types.base import (
    Aggregate,
    Check,
    Columns,
    Measurement,
    Metric,
    Procedure,
    Standalone,
    check_types,
)

__all__ = ["Aggregate", "Check", "Columns", "Measurement", "Metric", "Procedure", "Standalone", "check_types"]
