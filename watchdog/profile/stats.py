"""The profile of one table: one batched aggregate SELECT, then one GROUP BY per low-cardinality column."""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from datetime import UTC, datetime
from typing import Any

from sqlglot import exp

from watchdog.defaults import PROFILE_APPROX_DISTINCT_ROWS, PROFILE_NULL_MARKERS, PROFILE_TOP_VALUES
from watchdog.errors import QueryError
from watchdog.profile import text_values
from watchdog.profile.schema import ColumnInfo, TableInfo
from watchdog.profile.shapes import COARSE, GROUP_OF, SHAPES
from watchdog.sandbox import Sandbox
from watchdog.scan import sqlbuild
from watchdog.scan.check_types.freshness import to_utc

TEXT_FAMILIES = ("text",)
ORDERED_FAMILIES = ("int", "real", "time", "date", "text")


@dataclass
class ColumnProfile:
    name: str
    type: str
    family: str
    nullable: bool
    nulls: int = 0
    null_rate: float = 0.0
    #: rows that are not NULL
    nonnull: int = 0
    distinct: int | None = None
    #: "exact" (COUNT(DISTINCT)), "estimate" (the database's planner statistics) or None (not measured)
    distinct_method: str | None = None
    min: Any = None
    max: Any = None
    min_length: int | None = None
    max_length: int | None = None
    #: share of non-null values matching each recognised shape (only shapes with at least one match)
    shapes: dict[str, float] = field(default_factory=dict)
    #: most frequent values with their counts (low-cardinality columns only)
    top_values: list[tuple[Any, int]] | None = None
    #: seconds since the newest value (timestamp/date columns)
    age_s: int | None = None
    #: text columns: rows holding '' or only spaces, and rows holding a null marker (``markers``), of all rows
    blank_rate: float | None = None
    marker_rate: float | None = None
    #: text columns: rows holding '' or only spaces, and of those the rows holding exactly ''
    blanks: int | None = None
    empty: int | None = None
    #: text columns: rows holding each null marker found (markers not found are left out)
    markers: dict[str, int] = field(default_factory=dict)
    #: the markers found that are themselves numbers by the numeric-text rule (``'0'``, ``'-1'``)
    number_markers: list[str] = field(default_factory=list)
    #: text columns: values that are numbers by the numeric-text rule, their share of the non-null values, and the
    #: smallest and largest of them (as ``range … numeric_text: true`` reads them)
    numbers: int | None = None
    numeric_text: float | None = None
    numeric_min: float | None = None
    numeric_max: float | None = None


@dataclass
class TableProfile:
    name: str
    rows: int
    columns: list[ColumnProfile]
    primary_key: list[str]
    foreign_keys: list[tuple[str, str, str]]
    statements: int = 0
    #: the null markers the text columns were searched for
    null_markers: list[str] = field(default_factory=list)

    def column(self, name: str) -> ColumnProfile:
        return next(c for c in self.columns if c.name == name)

    def to_dict(self) -> dict[str, Any]:
        return {k: _plain(v) for k, v in asdict(self).items()}


def _plain(value: Any) -> Any:
    if isinstance(value, dict):
        return {k: _plain(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_plain(v) for v in value]
    if value is None or isinstance(value, (bool, int, float, str)):
        return value
    if isinstance(value, datetime):
        return value.isoformat()
    try:
        return float(value) if "Decimal" in type(value).__name__ else str(value)
    except (TypeError, ValueError):
        return str(value)


def _length(col: exp.Expr, dialect: str) -> exp.Expr:
    if dialect == "mysql":
        return exp.Anonymous(this="CHAR_LENGTH", expressions=[col])
    return exp.Length(this=col)


def _column_metrics(col: ColumnInfo, dialect: str, exact_distinct: bool, gate_shapes: bool = True,
                    markers: tuple[str, ...] = PROFILE_NULL_MARKERS) -> list[tuple[str, exp.Expr]]:
    ref = sqlbuild.column(col.name)
    family = col.family
    out: list[tuple[str, exp.Expr]] = [("nonnull", exp.Count(this=ref.copy()))]
    if exact_distinct:
        out.append(("distinct", exp.Count(this=exp.Distinct(expressions=[ref.copy()]))))
    if family in ORDERED_FAMILIES:
        out += [("min", exp.Min(this=ref.copy())), ("max", exp.Max(this=ref.copy()))]
    if family in TEXT_FAMILIES:
        out += [("min_length", exp.Min(this=_length(ref.copy(), dialect))),
                ("max_length", exp.Max(this=_length(ref.copy(), dialect)))]
        out += text_values.first_pass(ref, dialect, markers, number_gate=gate_shapes)
        if gate_shapes:
            out += [(f"gate:{group}", sqlbuild.case_count(text_values.gate(ref, group, dialect, COARSE)))
                    for group in COARSE]
        else:  # every regex on every row (the old way, kept for the benchmark's before/after)
            out += [(f"shape:{shape}", sqlbuild.case_count(sqlbuild.regex_search(ref.copy(), regex, dialect)))
                    for shape, regex in SHAPES.items()]
            out += text_values.number_metrics(ref, dialect)
    return out


def _second_pass(box: Sandbox, table: str, wanted: list[tuple[str, str]],
                 markers: tuple[str, ...]) -> dict[tuple[str, str], Any]:
    """One batched statement for what the first pass found worth measuring. ``wanted`` holds (column, what) pairs:
    ``shape:NAME`` (behind the shape's gate), ``numbers`` (the numeric-text rule, behind its gate), ``markers``
    (the rows holding each of ``markers``) and ``empty`` (the rows holding exactly ''). When markers are counted,
    whether each is itself a number rides along as constants (key ``("", "is_number:M")``)."""
    if not wanted:
        return {}
    dialect = box.dialect
    metrics: list[tuple[tuple[str, str], exp.Expr]] = []
    for column, what in wanted:
        ref = sqlbuild.column(column)
        if what.startswith("shape:"):
            found = [(what, text_values.shape_metric(ref, what.split(":", 1)[1], dialect))]
        elif what == "numbers":
            found = text_values.number_metrics(ref, dialect)
        elif what == "empty":
            found = [text_values.empty_metric(ref, dialect)]
        else:
            found = text_values.marker_metrics(ref, dialect, markers)
        metrics += [((column, key), expression) for key, expression in found]
    if any(what == "markers" for _, what in wanted):
        metrics += [(("", key), expression) for key, expression in text_values.markers_that_are_numbers(markers,
                                                                                                          dialect)]
    selects = [exp.alias_(expression, f"s{i}") for i, (_, expression) in enumerate(metrics)]
    row = box.query(exp.select(*selects).from_(sqlbuild.table(table)).sql(dialect=dialect), max_rows=1).rows[0]
    return {key: value for (key, _), value in zip(metrics, row, strict=True)}


def _estimated_distinct(box: Sandbox, table: str) -> dict[str, int]:
    """PostgreSQL's planner estimate of distinct values per column (pg_stats, filled by ANALYZE)."""
    query = exp.select("attname", "n_distinct").from_("pg_stats").where(
        exp.and_(exp.EQ(this=exp.column("tablename"), expression=sqlbuild.literal(table)),
                 exp.EQ(this=exp.column("schemaname"), expression=exp.Anonymous(this="current_schema"))))
    return {str(r[0]): r[1] for r in box.query(query.sql(dialect=box.dialect), max_rows=10_000).rows}


def profile_table(box: Sandbox, info: TableInfo, *, top_values: int = PROFILE_TOP_VALUES,
                  approx_rows: int = PROFILE_APPROX_DISTINCT_ROWS, gate_shapes: bool = True,
                  markers: tuple[str, ...] = PROFILE_NULL_MARKERS) -> TableProfile:
    """Measure ``info``: one batched aggregate statement, one batched pass for the shapes whose cheap gate
    let a value through, and one GROUP BY per low-cardinality column. With ``gate_shapes=False`` every
    shape regex runs on every text value in the first pass (same figures, much slower: for benchmarks)."""
    dialect = box.dialect
    statements = 0
    estimates: dict[str, Any] = {}
    if dialect == "postgres":
        reltuples = box.query(exp.select("c.reltuples").from_("pg_class AS c").join(
            "pg_namespace AS s", on="s.oid = c.relnamespace").where(exp.and_(
                exp.EQ(this=exp.column("relname", "c"), expression=sqlbuild.literal(info.name)),
                exp.EQ(this=exp.column("nspname", "s"), expression=exp.Anonymous(this="current_schema")))).sql(
            dialect=dialect)).scalar()
        statements += 1
        if reltuples is not None and float(reltuples) >= approx_rows:
            estimates = _estimated_distinct(box, info.name)
            statements += 1
    selects: list[exp.Expr] = [exp.alias_(sqlbuild.count_star(), "m0")]
    keys: list[tuple[str, str]] = []
    for col in info.columns:
        for key, expression in _column_metrics(col, dialect, col.name not in estimates, gate_shapes, markers):
            keys.append((col.name, key))
            selects.append(exp.alias_(expression, f"m{len(selects)}"))
    query = exp.select(*selects).from_(sqlbuild.table(info.name))
    row = box.query(query.sql(dialect=dialect), max_rows=1).rows[0]
    statements += 1
    total = int(row[0] or 0)
    values: dict[str, dict[str, Any]] = {}
    for (column, key), value in zip(keys, row[1:], strict=True):
        values.setdefault(column, {})[key] = value
    passed = {(column, key.split(":", 1)[1]) for column, key in keys
              if key.startswith("gate:") and int(values[column][key] or 0)}
    wanted = [(col.name, f"shape:{shape}") for col in info.columns for shape in SHAPES
              if (col.name, GROUP_OF[shape]) in passed]
    wanted += [(column, "numbers") for column, group in sorted(passed) if group == "number"]
    wanted += [(column, what) for column, v in values.items() for what, key in (("markers", "markers"),
                                                                                ("empty", "blank"))
               if int(v.get(key) or 0)]
    second = _second_pass(box, info.name, wanted, markers)
    for (column, key), value in second.items():
        values.setdefault(column, {})[key] = value
    statements += 1 if wanted else 0
    columns = [_column_profile(col, values.get(col.name, {}), total, estimates) for col in info.columns]
    found = {key.split(":", 1)[1] for (column, key), value in second.items() if column == "" and int(value or 0)}
    for prof in columns:
        prof.number_markers = [m for m in prof.markers if m in found]
    for prof in columns:
        if prof.distinct is not None and 0 < prof.distinct <= top_values and prof.family in ("text", "int", "bool"):
            prof.top_values = _top_values(box, info.name, prof.name, top_values)
            statements += 1
    return TableProfile(info.name, total, columns, list(info.primary_key), list(info.foreign_keys), statements,
                        list(text_values.counted_markers(markers)))


def _column_profile(col: ColumnInfo, v: dict[str, Any], total: int, estimates: dict[str, Any]) -> ColumnProfile:
    nonnull = int(v.get("nonnull") or 0)
    prof = ColumnProfile(col.name, col.type, col.family, col.nullable, nulls=total - nonnull,
                         null_rate=round((total - nonnull) / total, 6) if total else 0.0, nonnull=nonnull,
                         min=v.get("min"), max=v.get("max"), min_length=_int(v.get("min_length")),
                         max_length=_int(v.get("max_length")))
    if "distinct" in v:
        prof.distinct, prof.distinct_method = int(v["distinct"] or 0), "exact"
    elif col.name in estimates and estimates[col.name] is not None:
        n = float(estimates[col.name])
        prof.distinct, prof.distinct_method = int(round(-n * total if n < 0 else n)), "estimate"
    if "blank" in v and total:
        prof.blanks, prof.empty = int(v["blank"] or 0), int(v.get("empty") or 0)
        prof.blank_rate = round(prof.blanks / total, 6)
        prof.marker_rate = round(int(v.get("markers") or 0) / total, 6)
        prof.markers = {k.split(":", 1)[1]: int(c) for k, c in v.items() if k.startswith("marker:") and int(c or 0)}
        prof.numbers = int(v.get("numbers") or 0)
        prof.numeric_text = round(prof.numbers / nonnull, 6) if nonnull else None
        prof.numeric_min = text_values.plain_number(v.get("number_min"))
        prof.numeric_max = text_values.plain_number(v.get("number_max"))
    if nonnull:
        prof.shapes = {k.split(":", 1)[1]: round(int(c or 0) / nonnull, 6) for k, c in v.items()
                       if k.startswith("shape:") and int(c or 0)}
    if prof.max is not None and (col.family in ("time", "date") or prof.shapes.get("iso_date") == 1.0):
        try:
            prof.age_s = round((datetime.now(UTC) - to_utc(prof.max)).total_seconds())
        except QueryError:
            prof.age_s = None
    return prof


def _int(value: Any) -> int | None:
    return None if value is None else int(value)


def _top_values(box: Sandbox, table: str, column: str, limit: int) -> list[tuple[Any, int]]:
    ref = sqlbuild.column(column)
    # ordered by position: an alias such as ``n`` would be ambiguous beside a column of that name
    query = (exp.select(ref.copy(), sqlbuild.count_star()).from_(sqlbuild.table(table))
             .where(exp.Not(this=exp.Is(this=ref.copy(), expression=exp.Null())))
             .group_by(ref.copy()).order_by(exp.Ordered(this=exp.Literal.number(2), desc=True),
                                            exp.Ordered(this=exp.Literal.number(1))).limit(limit))
    return [(_plain(r[0]), int(r[1])) for r in box.query(query.sql(dialect=box.dialect), max_rows=limit).rows]
