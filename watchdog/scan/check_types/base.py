"""What every check type shares: options, declared metrics, measurement and status.

A check type is a small class registered by name with :func:`register`. It declares the
metrics it needs (:class:`Aggregate` columns that the planner batches into one SELECT per
table and filter, or :class:`Standalone` queries of its own), then turns the measured
values into a :class:`Measurement`. It never runs SQL itself.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field
from datetime import date, datetime
from importlib import import_module
from typing import Any, ClassVar, Literal

from sqlglot import exp

from watchdog.errors import WatchdogError
from watchdog.scan import sqlbuild
from watchdog.scan.check_types.anomaly_options import AnomalyOptions
from watchdog.scan.check_types.fields import Options, option, options_class
from watchdog.scan.grouped import GroupedCount, group_columns
from watchdog.scan.table_options import NO_OPTIONS

Severity = Literal["fail", "warn"]


@options_class
class CheckOptions(Options):
    """Options every check takes."""

    name: str | None = option(None, min_length=1)
    severity: Severity = "fail"
    where: str | None = option(None, min_length=1)
    description: str | None = None
    #: judge the check's figure against its history (see scan/anomaly_series.py)
    anomaly: AnomalyOptions | None = None
    #: who answers for the check (overrides the table's and the suite's) and what it is about (added to theirs)
    owner: str | None = option(None, min_length=1)
    owners: list[str] | None = None
    tags: list[str] | None = None


@options_class
class WarnThresholds(Options):
    """``warn:`` of a row-level check: failing rows above these make it warn (its own thresholds make it fail)."""

    max_count: int | None = option(None, ge=0)
    max_rate: float | None = option(None, ge=0, le=1)

    def __post_init__(self) -> None:
        if self.max_count is None and self.max_rate is None:
            raise ValueError("give max_count, max_rate or both, e.g. `warn: {max_count: 10}`")


@options_class
class RowCheckOptions(CheckOptions):
    """Row-level checks also take thresholds: failing rows tolerated, as a count or a rate; and ``warn:``
    thresholds below them (fail above ``max_count``, warn above ``warn.max_count``)."""

    max_count: int | None = option(None, ge=0)
    max_rate: float | None = option(None, ge=0, le=1)
    warn: WarnThresholds | None = None
    #: judge the check per group of these columns (see :mod:`watchdog.scan.grouped`)
    group_by: list[str] | None = option(None, min_length=1, before=group_columns)

    def __post_init__(self) -> None:  # subclasses with rules of their own call it first
        if self.group_by is not None and self.anomaly is not None:
            raise ValueError("anomaly: and group_by: do not go together (a group's figures have no history of "
                             "their own); drop one of them")
        if self.warn is None:
            return
        if self.severity == "warn":
            raise ValueError("severity: warn and warn: thresholds do not go together (with warn:, the check fails "
                             "above its own thresholds and warns above warn's); drop severity: warn")
        for key in ("max_count", "max_rate"):
            fail, warn = getattr(self, key), getattr(self.warn, key)
            if fail is not None and warn is not None and warn > fail:
                raise ValueError(f"warn.{key} ({warn}) is above {key} ({fail}), so the check would fail before it "
                                 f"warns; give warn a lower {key}")


@options_class
class ColumnOptions(RowCheckOptions):
    column: str = option(min_length=1)


@dataclass(frozen=True)
class Aggregate:
    """One aggregate expression over ``table`` filtered by ``where``; batched by the planner."""

    table: str
    where: str | None
    key: str
    expression: exp.Expr = field(compare=False, hash=False, repr=False)

    @classmethod
    def of(cls, table: str, where: str | None, expression: exp.Expr) -> Aggregate:
        return cls(table, where, expression.sql(), expression)


@dataclass(frozen=True)
class Standalone:
    """A statement of its own that returns one row; ``sql`` is already rendered for the dialect.

    ``sampled(n)``, when given, is a variant of the same statement that also returns up to ``n`` rows
    for the sample: its first ``width`` columns carry the figures (the same in every row), the rest
    the sample; no row at all means every figure is 0. The scanner uses it when samples are wanted,
    so a breaching check's sample costs no second query.
    """

    key: str
    sql: str = field(compare=False)
    #: rows the statement may return (a GROUP BY per time bucket); 1: exactly one row
    rows: int = field(default=1, compare=False)
    sampled: Callable[[int], str] | None = field(default=None, compare=False, repr=False)
    width: int = field(default=1, compare=False)
    #: False: PostgreSQL runs it without JIT compilation (a statement of many short index probes, where
    #: compiling costs more than it saves)
    jit: bool = field(default=True, compare=False)


@dataclass(frozen=True)
class Columns:
    """The columns of ``table`` and their types, read from the catalog (not a query)."""

    table: str

    @property
    def key(self) -> str:
        return f"columns:{self.table}"


@dataclass(frozen=True)
class Procedure:
    """A figure computed by a procedure of its own through the sandbox (several statements, or another database
    too: a ``reconcile`` check). The scanner runs ``run(sandbox)`` as one step and stores what it returns; a
    :class:`WatchdogError` it raises becomes the check's error."""

    key: str
    run: Callable[[Any], Any] = field(compare=False, hash=False, repr=False)
    table: str | None = field(default=None, compare=False)


Metric = Aggregate | Standalone | Columns | Procedure | GroupedCount

#: the alias of the checked table in a :class:`RowFlag` (the same as foreign_key's child alias)
ROW_ALIAS = "wd_child"


@dataclass
class RowFlag:
    """Which rows of a check's table fail, for stages that group them (the diagnosis).

    ``condition`` holds for a failing row of the table aliased :data:`ROW_ALIAS` (unqualified columns are
    that table's) once the ``joins`` are LEFT JOINed to it: each an aliased subquery with at most one row
    per row of the table, and its ON condition. ``scope`` holds for the rows the check looks at (its
    ``where``; None: every row). ``values`` are the columns whose values the failing rows get wrong.
    """

    condition: exp.Expr
    scope: exp.Expr | None = None
    joins: list[tuple[exp.Expr, exp.Expr]] = field(default_factory=list)
    values: list[str] = field(default_factory=list)


@dataclass
class SampleSpec:
    """How a breaching check gets its sample rows.

    Either the rows already came with the check's own statement (``rows``), or they are the rows
    of the check's table that match ``condition``; ``expected`` is how many rows match, when the
    measurement says so (it lets the scanner fetch all of a table's samples in one pass).
    """

    rows: list[dict[str, Any]] | None = None
    condition: exp.Expr | None = None
    expected: int | None = None


@dataclass
class Measurement:
    failing: int | None = None
    total: int | None = None
    observed: float | int | None = None
    details: dict[str, Any] = field(default_factory=dict)

    @property
    def rate(self) -> float | None:
        if self.failing is None or not self.total:
            return None
        return self.failing / self.total


_REGISTRY: dict[str, type[Check]] = {}


def register(cls: type[Check]) -> type[Check]:
    """Class decorator: make a check type available in suites under ``cls.kind``."""
    _REGISTRY[cls.kind] = cls
    return cls


#: the module of each built-in check type, imported when a suite first uses the type (a scan of three checks does
#: not pay for the other dozen); tests/test_suites.py checks that this map and the registered types agree
KIND_MODULES = {
    "accepted_values": "accepted_values", "custom_sql": "custom_sql", "expression": "expression",
    "distribution": "distribution", "foreign_key": "foreign_key", "freshness": "freshness",
    "functional_dependency": "functional_dependency", "metric": "metric", "not_null": "not_null",
    "pattern": "pattern", "range": "range_check", "reconcile": "reconcile", "row_count": "row_count",
    "schema": "schema", "schema_changes": "schema", "unique": "unique",
}


class _Kinds(Mapping[str, "type[Check]"]):
    """Every check type by name; a built-in type's module is imported on first lookup."""

    def __getitem__(self, kind: str) -> type[Check]:
        if kind not in _REGISTRY and kind in KIND_MODULES:
            import_module(f"watchdog.scan.check_types.{KIND_MODULES[kind]}")  # registers it
        return _REGISTRY[kind]

    def __iter__(self) -> Iterator[str]:
        return iter(sorted(set(KIND_MODULES) | set(_REGISTRY)))

    def __len__(self) -> int:
        return len(set(KIND_MODULES) | set(_REGISTRY))


def check_types() -> Mapping[str, type[Check]]:
    """The check types suites may use, by name (built-in ones imported when first looked up)."""
    return _Kinds()


class Check:
    """A configured check on one table (or a custom query)."""

    kind: ClassVar[str]
    Options: ClassVar[type[Options]] = CheckOptions
    #: the option a short form (``- not_null: email``) sets; None when there is no short form
    short_form: ClassVar[str | None] = "column"
    #: thresholds max_count / max_rate make sense (row-level checks)
    row_level: ClassVar[bool] = True
    #: ``group_by:`` judges it per group (it counts failing rows one by one: see :mod:`watchdog.scan.grouped`)
    groupable: ClassVar[bool] = False
    #: the scanner reads the table's column types first and sets ``column_kinds`` (on a copy of the check)
    needs_column_types: ClassVar[bool] = False
    #: groups or joins on column values compared exactly: where columns may carry a collation (see
    #: ``sqlbuild.BINARY_COLLATION``) the scanner reads the column types for it too
    compares_text_keys: ClassVar[bool] = False

    def __init__(self, table: str | None, options: Any, params: dict[str, Any], source: str = ""):
        self.table = table
        self.options = options
        self.params = params
        self.source = source
        #: this check's findings in earlier runs of the audit, oldest first (set by the scanner):
        #: ``{"run_id", "started_at", "finding"}`` each
        self.past: list[dict[str, Any]] = []

        #: the line of the suite the check is written on (set by the suite reader)
        self.line: int | None = None
        #: a column glob (``'code_*'``) the check stands for until the table's columns are known (see
        #: :mod:`watchdog.scan.column_globs`); None for a check of one column
        self.column_glob: str | None = None
        #: who answers for the check and its tags, inherited suite -> table -> check (set by the suite reader)
        self.owners: tuple[str, ...] = ()
        self.tags: tuple[str, ...] = ()
        #: ``{column: (kind, declared type)}`` from the catalogue (see ``needs_column_types``)
        self.column_kinds: dict[str, tuple[str, str]] = {}
        #: the options the suite sets for the check's table (``segments``, ``timestamp_column``, ...: see
        #: :mod:`watchdog.scan.table_options`); read-only, empty when the table sets none
        self.table_options: Mapping[str, Any] = NO_OPTIONS

    def column_kind(self, column: str | None) -> tuple[str, str]:
        """(kind, declared type) of ``column``; ``("unknown", "")`` when the catalogue did not say."""
        return self.column_kinds.get(column or "", ("unknown", ""))

    # ---- naming
    @property
    def column(self) -> str | None:
        value = getattr(self.options, "column", None)
        return value if isinstance(value, str) else None

    @property
    def columns(self) -> list[str] | None:
        return None

    @property
    def name(self) -> str:
        if self.options.name:
            return self.options.name
        target = "+".join(self.columns) if self.columns else self.column
        return ".".join(p for p in (self.table, target, self.kind) if p)

    # ---- SQL building helpers
    def exact_column(self, name: str, dialect: str, table_alias: str | None = None) -> exp.Expr:
        """Column ``name`` compared exactly (see ``sqlbuild.exact``), knowing its type when the catalogue said."""
        return sqlbuild.exact(sqlbuild.column(name, table_alias), dialect, self.column_kind(name)[0])

    def filter(self, dialect: str) -> exp.Expr | None:
        where = getattr(self.options, "where", None)
        return sqlbuild.condition(where, dialect) if where else None

    def total_metric(self) -> Aggregate:
        return Aggregate.of(self.table or "", getattr(self.options, "where", None), sqlbuild.count_star())

    def finding_sql(self, dialect: str) -> str | None:
        """The runnable SQL recorded in the finding: it selects the failing rows."""
        if self.column_glob:  # a glob not expanded (it matched no column): no SQL to show
            return None
        query = self.failing_rows(dialect)  # a fresh tree: rendered without a copy
        return query.sql(dialect=dialect, copy=False) if query is not None else None

    # ---- to implement
    def metrics(self, dialect: str) -> list[Metric]:
        raise NotImplementedError

    def measure(self, values: dict[Metric, Any], dialect: str) -> Measurement:
        raise NotImplementedError

    def failing_rows(self, dialect: str) -> exp.Expr | None:
        """A SELECT of the failing rows (for samples and the findings' ``sql``), or None; a fresh tree
        at every call (callers render and extend it without copying)."""
        return None

    def row_flag(self, dialect: str, tag: str) -> RowFlag | None:
        """Which rows fail, as a condition per row (None: the check does not fail rows one by one).

        ``tag`` is unique per check of a statement: it names the aliases of the flag's joins."""
        return None

    def sample_spec(self, dialect: str, m: Measurement, extra: tuple[list[str], list[tuple[Any, ...]]] | None,
                    rows: int) -> SampleSpec | None:
        """How to get this breaching check's sample (None: run :meth:`sample_query` on its own).

        ``extra`` holds the sample columns and rows its ``sampled`` statement returned, if any.
        """
        return None

    def sample_query(self, dialect: str, rows: int) -> exp.Expr | None:
        """A cheap SELECT of a few failing rows (default: the failing rows, limited)."""
        query = self.failing_rows(dialect)
        return query.limit(rows, copy=False) if isinstance(query, exp.Select) else None

    @property
    def group_by(self) -> tuple[str, ...]:
        """The columns the check is judged per group of (empty: the whole table)."""
        return tuple(getattr(self.options, "group_by", None) or ())

    def breached(self, m: Measurement) -> bool:
        """Over the check's own thresholds (any failing row when it has none and no ``warn:``); with
        ``group_by``, when a group is."""
        if self.group_by:
            return int(m.details.get("groups_failing") or 0) > 0
        if m.failing is None:
            return False
        max_count = getattr(self.options, "max_count", None)
        max_rate = getattr(self.options, "max_rate", None)
        if max_count is None and max_rate is None:  # with only warn: thresholds the check never fails
            return m.failing > 0 and getattr(self.options, "warn", None) is None
        return _over(m, max_count, max_rate)

    def warned(self, m: Measurement) -> bool:
        """Over the ``warn:`` thresholds (False without them): the status is ``warn`` unless :meth:`breached`."""
        if self.group_by:
            return int(m.details.get("groups_warning") or 0) > 0
        warn = getattr(self.options, "warn", None)
        if warn is None or m.failing is None:
            return False
        return _over(m, warn.max_count, warn.max_rate)


def _over(m: Measurement, max_count: int | None, max_rate: float | None) -> bool:
    over_count = max_count is not None and m.failing is not None and m.failing > max_count
    over_rate = max_rate is not None and m.rate is not None and m.rate > max_rate
    return over_count or over_rate


class TypeMismatch(WatchdogError):
    """The check's values and the column's type disagree (the check's status is ``error``)."""


def value_kind(value: Any) -> str:
    """The kind of a value written in a suite: boolean, number, temporal or text."""
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, (int, float)):
        return "number"
    if isinstance(value, (date, datetime)):
        return "temporal"
    return "text"


def as_int(value: Any) -> int:
    """Aggregates come back as int, Decimal, float or NULL (SUM over no rows): make them ints."""
    return 0 if value is None else int(value)
