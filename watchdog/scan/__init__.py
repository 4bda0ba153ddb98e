"""The deterministic core: suites (file:line errors), check_types, planner (batched per table), sqlbuild, scanner."""
