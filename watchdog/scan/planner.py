"""Batch the metrics that checks declare into as few statements as possible.

All aggregate metrics over one table and filter become one SELECT (split only when it
grows very long); the checks of a table judged per group of the same columns one GROUP BY statement
(:mod:`watchdog.scan.grouped`); each unique check is one GROUP BY statement, each foreign key one
anti-join, each custom query itself. Identical metrics are computed once. When samples are
wanted, a statement that can also return them (the unique GROUP BY its first duplicated keys, the
foreign-key anti-join its first orphans) is planned in that form, and on the engines of
``samples.KEYED_DIALECTS`` a table's aggregate pass also returns the keys of the rows failing each row-level
condition when they are few (:mod:`watchdog.scan.samples`), with the plain pass as its fallback.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from sqlglot import exp

from watchdog.errors import WatchdogError
from watchdog.scan import anomaly_series, grouped, samples, sqlbuild
from watchdog.scan.check_types import Aggregate, Check, Columns, Metric, Procedure, Standalone

MAX_COLUMNS_PER_SELECT = 200
MAX_SQL_CHARS = 60_000


@dataclass
class Statement:
    """One statement to run: a batch of aggregates (one column each) or one standalone query."""

    sql: str
    metrics: list[Metric]
    table: str | None = None
    where: str | None = None
    #: > 0: the metric's ``sampled`` form, returning up to this many rows
    sample_rows: int = 0
    #: the aggregates of the same pass without the failing rows' keys, run if this one fails (a view, a table
    #: without rowid)
    plain: list[Aggregate] | None = None

    @property
    def is_batch(self) -> bool:
        return bool(self.metrics) and isinstance(self.metrics[0], Aggregate)


@dataclass
class Plan:
    statements: list[Statement] = field(default_factory=list)
    #: the metrics each check needs, by check name
    needs: dict[str, list[Metric]] = field(default_factory=dict)
    #: checks that could not be planned (e.g. an invalid ``where``), with the reason
    errors: dict[str, str] = field(default_factory=dict)
    #: the failing rows' keys a check's counting pass returns (``samples.KeyAggregate``), by check name
    keys: dict[str, samples.KeyAggregate] = field(default_factory=dict)


def plan(checks: list[Check], dialect: str, *, sample: int = 0, max_columns: int = MAX_COLUMNS_PER_SELECT,
         max_chars: int = MAX_SQL_CHARS, split: int = 1) -> Plan:
    """The statements of a scan. ``split``: how many sandboxes may run them at once (see :func:`batch_statements`:
    a keyed pass over many conditions is cut into that many, each evaluating its share of the conditions)."""
    result = Plan()
    batches: dict[tuple[str, str | None], list[Aggregate]] = {}
    groups: dict[tuple[str, str], list[grouped.GroupedCount]] = {}
    standalone: dict[str, Standalone | Columns | Procedure] = {}
    for check in checks:
        try:
            metrics = check.metrics(dialect) + anomaly_series.extra_metrics(check, dialect)
        except (WatchdogError, ValueError) as exc:
            result.errors[check.name] = str(exc)
            continue
        result.needs[check.name] = metrics
        try:
            key = _key_metric(check, dialect) if sample > 0 and dialect in samples.KEYED_DIALECTS else None
        except (WatchdogError, ValueError):
            key = None
        if key is not None:
            result.keys[check.name] = key
            metrics = [*metrics, key]  # batched with its count, but not a need: its failure fails no check
        for metric in metrics:
            _place(metric, batches, groups, standalone)
    for (table, where), aggregates in batches.items():
        result.statements.extend(batch_statements(table, where, aggregates, dialect, max_columns, max_chars,
                                                  sample=sample, split=split))
    for (table, _), counts in groups.items():
        result.statements.append(Statement(grouped.statement(table, counts, dialect), list(counts), table))
    for metric in standalone.values():
        if isinstance(metric, (Columns, Procedure)):  # a catalog read, or a procedure of its own: not one query
            result.statements.append(Statement("", [metric], metric.table))
        elif sample > 0 and metric.sampled is not None:
            result.statements.append(Statement(metric.sampled(sample), [metric], sample_rows=sample))
        else:
            result.statements.append(Statement(metric.sql, [metric]))
    return result


def _place(metric: Metric, batches: dict[tuple[str, str | None], list[Aggregate]],
           groups: dict[tuple[str, str], list[grouped.GroupedCount]],
           standalone: dict[str, Standalone | Columns | Procedure]) -> None:
    """File ``metric`` with the statement it rides in (each identical metric once)."""
    if isinstance(metric, Aggregate):
        batch = batches.setdefault((metric.table, metric.where), [])
        if metric not in batch:
            batch.append(metric)
    elif isinstance(metric, grouped.GroupedCount):
        keys = ",".join(k.sql() for k in (*metric.exact_keys, *metric.order_keys))
        together = groups.setdefault((metric.table, keys), [])
        if metric not in together:
            together.append(metric)
    else:
        standalone.setdefault(metric.key, metric)


def _key_metric(check: Check, dialect: str) -> samples.KeyAggregate | None:
    """The keys of ``check``'s failing rows, for a row-level check whose count is one batched condition."""
    from watchdog.scan.check_types.row_condition import RowConditionCheck

    if not isinstance(check, RowConditionCheck) or not check.table or check.group_by:
        return None
    failing = check._failing_metric(dialect)  # noqa: SLF001 - the count the keys ride with
    return samples.key_metric(failing.table, failing.where, check.condition(dialect), failing.key)


def batch_statements(table: str, where: str | None, aggregates: list[Aggregate], dialect: str,
                     max_columns: int = MAX_COLUMNS_PER_SELECT, max_chars: int = MAX_SQL_CHARS,
                     sample: int = 0, split: int = 1) -> list[Statement]:
    """One SELECT of all ``aggregates`` over ``table``/``where``, split into several only when too long; with
    :class:`~watchdog.scan.samples.KeyAggregate` s among them, the keyed form of the pass (one chunk only).

    A keyed pass over at least :data:`SPLIT_MIN_KEYS` conditions is cut into ``split`` passes, each evaluating
    its share of the conditions (a condition with its count and keys): SQLite runs a statement on one core, and a
    slow one lets a second sandbox take the next (:mod:`watchdog.scan.parallel`), so the conditions are
    evaluated on two cores at once; the table's rows are read by each."""
    keys = [m for m in aggregates if isinstance(m, samples.KeyAggregate)]
    if keys and split > 1 and len(keys) >= SPLIT_MIN_KEYS:
        return [statement for part in _parts(aggregates, keys, min(split, len(keys) // 2))
                for statement in batch_statements(table, where, part, dialect, max_columns, max_chars, sample)]
    if keys:
        plain = [m for m in aggregates if m not in keys]
        size = sum(len(m.expression.sql(dialect=dialect)) + 10 for m in aggregates)
        keyed = None
        if len(aggregates) <= max_columns and size <= max_chars:
            condition = sqlbuild.condition(where, dialect) if where else None
            keyed = samples.keyed_select(table, condition, aggregates, sample,
                                         lambda e: _for_dialect(e, dialect))
        if keyed is None:
            return batch_statements(table, where, plain, dialect, max_columns, max_chars)
        return [Statement(keyed.sql(dialect=dialect, copy=False), list(aggregates), table, where, plain=plain)]
    condition = sqlbuild.condition(where, dialect) if where else None
    chunks: list[list[Aggregate]] = [[]]
    size = 0
    for metric in aggregates:
        cost = len(metric.expression.sql(dialect=dialect)) + 10
        if chunks[-1] and (len(chunks[-1]) >= max_columns or size + cost > max_chars):
            chunks.append([])
            size = 0
        chunks[-1].append(metric)
        size += cost
    statements = []
    for chunk in chunks:  # the metrics' expressions are shared: copied once; the rest is fresh (copy=False)
        columns = [exp.alias_(_for_dialect(m.expression.copy(), dialect), f"m{i}", copy=False)
                   for i, m in enumerate(chunk)]
        query = exp.select(*columns, copy=False).from_(sqlbuild.table(table), copy=False)
        if condition is not None:
            query = query.where(condition if len(chunks) == 1 else condition.copy(), copy=False)
        statements.append(Statement(query.sql(dialect=dialect, copy=False), list(chunk), table, where))
    return statements


#: a keyed pass is cut for parallel sandboxes from this many conditions on (each part evaluates at least half of
#: them: with fewer, reading the rows again costs more than the conditions spread over two cores save)
SPLIT_MIN_KEYS = 8


def _parts(aggregates: list[Aggregate], keys: list[samples.KeyAggregate], n: int) -> list[list[Aggregate]]:
    """``aggregates`` in ``n`` parts of about as many conditions each: a condition's keys with its count; the other
    aggregates with the first part."""
    counts = {key.count_key for key in keys}
    keyed = [[m for m in aggregates if m.key == key.count_key] + [key] for key in keys]
    parts: list[list[Aggregate]] = [[m for m in aggregates if m not in keys and m.key not in counts]]
    parts += [[] for _ in range(n - 1)]
    for i, unit in enumerate(keyed):
        parts[i * n // len(keyed)].extend(unit)
    return [part for part in parts if part]


def _for_dialect(expression: exp.Expr, dialect: str) -> exp.Expr:
    """On PostgreSQL, a counted condition ``SUM(CASE WHEN c THEN 1 ELSE 0 END)`` is sent as
    ``COUNT(*) FILTER (WHERE c)``: the same count (0 instead of NULL over no rows, which is read as 0
    anyway), evaluated faster in the table's one pass."""
    if dialect != "postgres" or not isinstance(expression, exp.Sum):
        return expression
    case = expression.this
    if not (isinstance(case, exp.Case) and case.this is None and len(case.args.get("ifs") or []) == 1):
        return expression
    branch, default = case.args["ifs"][0], case.args.get("default")
    if not (_is_number(branch.args.get("true"), "1") and _is_number(default, "0")):
        return expression
    return exp.Filter(this=exp.Count(this=exp.Star()), expression=exp.Where(this=branch.this))


def _is_number(node: exp.Expr | None, text: str) -> bool:
    return isinstance(node, exp.Literal) and not node.is_string and node.this == text
