"""The defaults every entry point shares (a database's limits, the samples per breaching check): set once, here.

No imports: the scan path reads these without the configuration model (:mod:`watchdog.settings` re-exports them).
"""

DEFAULT_TIMEOUT_S = 30.0
DEFAULT_MAX_ROWS = 1000
DEFAULT_SAMPLE = 5
#: sandboxes a scan may use at once when its statements are slow (SQLite only; see watchdog/scan/parallel.py)
DEFAULT_PARALLEL = 2
#: earlier runs of an audit read as history for ``anomaly:`` (without a timestamp column) and ``schema_changes``
DEFAULT_HISTORY_RUNS = 90
#: profile/suggest: top values are listed for columns with at most this many distinct values
PROFILE_TOP_VALUES = 20
#: profile: on PostgreSQL tables of at least this many rows, distinct counts are the planner's estimate
PROFILE_APPROX_DISTINCT_ROWS = 1_000_000
#: suggest: at most this many functional-dependency column pairs are tried per table
PROFILE_FD_PAIRS = 24
#: suggest: a functional dependency is suggested when it holds on at least this share of rows
PROFILE_FD_MIN_HOLD = 0.99
#: suggest: a dependency that holds on at least this share (but under PROFILE_FD_MIN_HOLD) is written commented out
PROFILE_FD_NEAR_HOLD = 0.9
#: suggest: a functional dependency is tried only when at least this many rows repeat a determinant value
PROFILE_FD_MIN_SUPPORT = 20
#: suggest: range bounds are widened on each side by this share of the observed spread (max - min)
PROFILE_RANGE_HEADROOM = 0.1
#: diagnosis: statements one table's diagnosis may run (it needs at most 3: probe, segments, failing rows)
DIAGNOSE_MAX_STATEMENTS = 3
#: diagnosis: seconds one table's diagnosis may take, all its statements together
DIAGNOSE_TIMEOUT_S = 60.0
#: the most failing rows exported per check (``--export-failures``, ``export_failures:``)
DEFAULT_EXPORT_LIMIT = 100_000
#: failing rows fetched per statement while exporting (the memory an export holds at once)
EXPORT_BATCH_ROWS = 10_000
#: values the profile counts as null markers in text columns (compared exactly: case-sensitive)
PROFILE_NULL_MARKERS = ("?", "N/A", "n/a", "NA", "NULL", "null", "None", "none", "-")
