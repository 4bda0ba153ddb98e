"""Compare one table on two databases: :func:`diff_tables` plans the columns, bisects, and says what differs."""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import Any

from watchdog.reconcile.bisect import Differences, bisect
from watchdog.reconcile.canonical import ColumnForm, Precision, engine
from watchdog.reconcile.columns import Declared, classify, pair, select_columns
from watchdog.reconcile.errors import ReconcileError
from watchdog.reconcile.native import NATIVE_ENGINES, agree
from watchdog.reconcile.side import Partition, Side, both
from watchdog.sandbox import Sandbox

#: segments per level, rows of a segment fetched rather than split, rows fetched per leaf statement
DEFAULT_FANOUT = 32
DEFAULT_LEAF_ROWS = 256
DEFAULT_LEAF_FETCH_ROWS = 50_000
DEFAULT_SAMPLES = 5


@dataclass(frozen=True)
class DiffSpec:
    """What to compare: ``table`` on the source against ``target_table`` (default: the same name) on the target."""

    table: str
    key: list[str]
    target_table: str | None = None
    columns: list[str] | None = None
    exclude: list[str] = field(default_factory=list)
    where: str | None = None
    target_where: str | None = None
    samples: int = DEFAULT_SAMPLES
    #: decimal places numbers are compared at (all number columns), and per column
    precision: int | None = None
    column_precision: dict[str, int] = field(default_factory=dict)
    timestamp_precision: Precision | None = None
    deadline_s: float | None = None
    fanout: int = DEFAULT_FANOUT
    leaf_rows: int = DEFAULT_LEAF_ROWS


@dataclass
class DiffResult:
    table: str
    target_table: str
    key: list[str]
    columns: list[str]
    source_rows: int
    target_rows: int
    #: None when the tables have no key: rows cannot be located, only the wholes compared
    missing_in_target: int | None
    missing_in_source: int | None
    changed: int | None
    samples: dict[str, list[dict[str, Any]]]
    statements: dict[str, int]
    seconds: float
    duplicate_keys: int = 0
    bytes_fetched: dict[str, int] = field(default_factory=dict)
    only_in_source: list[str] = field(default_factory=list)
    only_in_target: list[str] = field(default_factory=list)
    #: how each column was compared ({column: "num(2)"...}) and a note when rows cannot be located
    forms: dict[str, str] = field(default_factory=dict)
    note: str | None = None
    levels: int = 0
    null_keys: dict[str, int] = field(default_factory=dict)
    #: keyless comparison: whether the row counts and checksums of the wholes agree
    wholes_match: bool | None = None
    #: how rows were hashed: "md5" of their canonical text, or "native" (both sides PostgreSQL, probe agreed)
    row_hash: str = "md5"

    @property
    def differences(self) -> int:
        """Rows that differ (missing on either side, changed, duplicated keys); keyless: 1 when the wholes differ."""
        if self.wholes_match is not None:
            return 0 if self.wholes_match else 1
        return (self.missing_in_target or 0) + (self.missing_in_source or 0) + (self.changed or 0) + self.duplicate_keys

    @property
    def identical(self) -> bool:
        return self.differences == 0 and self.source_rows == self.target_rows

    def to_json(self) -> dict[str, Any]:
        doc = {
            "table": self.table, "target_table": self.target_table, "key": self.key, "columns": self.columns,
            "source_rows": self.source_rows, "target_rows": self.target_rows,
            "missing_in_target": self.missing_in_target, "missing_in_source": self.missing_in_source,
            "changed": self.changed, "duplicate_keys": self.duplicate_keys, "identical": self.identical,
            "samples": self.samples, "statements": self.statements, "bytes_fetched": self.bytes_fetched,
            "seconds": round(self.seconds, 3), "levels": self.levels, "forms": self.forms, "row_hash": self.row_hash,
        }
        if self.only_in_source or self.only_in_target:
            doc["only_in_source"] = self.only_in_source
            doc["only_in_target"] = self.only_in_target
        if self.note:
            doc["note"] = self.note
        if self.null_keys:
            doc["null_keys"] = self.null_keys
        if self.wholes_match is not None:
            doc["wholes_match"] = self.wholes_match
        return doc


def declared_columns(box: Sandbox, table: str) -> list[Declared]:
    """Each column of ``table`` with its declared type, as the reconciler reads it."""
    try:
        described = box.columns(table)
    except Exception as exc:  # noqa: BLE001 - the sandbox's own error, said with the table's name
        raise ReconcileError(f"cannot read the columns of {table!r} on {box.display_url}: {exc}") from None
    if not described:
        raise ReconcileError(f"no table {table!r} on {box.display_url}")
    return [classify(col["name"], col.get("type", ""), engine(box.dialect)) for col in described]


def plan_forms(source: Sandbox, target: Sandbox, spec: DiffSpec
               ) -> tuple[list[tuple[ColumnForm, ColumnForm]], list[str], list[str]]:
    declared_s, declared_t = both(lambda: declared_columns(source, spec.table),
                                  lambda: declared_columns(target, spec.target_table or spec.table))
    pairs, only_s, only_t = select_columns(declared_s, declared_t, spec.key, columns=spec.columns,
                                           exclude=spec.exclude)
    forms = []
    for s, t in pairs:
        scale = spec.column_precision.get(s.name, spec.precision)
        forms.append(pair(s, t, engine(source.dialect), engine(target.dialect), scale=scale,
                          timestamp_precision=spec.timestamp_precision))
    return forms, only_s, only_t


def diff_tables(source: Sandbox, target: Sandbox, spec: DiffSpec) -> DiffResult:
    """Compare ``spec.table`` on ``source`` with ``spec.target_table`` on ``target``; exact counts, a few samples."""
    clock = time.monotonic()
    deadline = clock + spec.deadline_s if spec.deadline_s else float("inf")
    forms, only_s, only_t = plan_forms(source, target, spec)  # the catalogue of each side, read at once
    nkey = len(spec.key)
    sides = [Side(box, table, where, [f[i] for f in forms[:nkey]], [f[i] for f in forms[nkey:]], deadline)
             for i, (box, table, where) in enumerate(
                 ((source, spec.table, spec.where), (target, spec.target_table or spec.table,
                                                      spec.target_where or spec.where)))]
    src, tgt = sides
    src.probe = tgt.probe = src.dialect == tgt.dialect and src.dialect in NATIVE_ENGINES
    if not spec.key:
        (n_s, *sum_s), (n_t, *sum_t) = both(src.whole, tgt.whole)
        result = _result(spec, forms, src, tgt, Differences(), n_s, n_t, clock, only_s, only_t, [])
        result.note = ("no key: the tables were compared as wholes (row count and checksum); rows that differ "
                       "cannot be located")
        result.missing_in_target = result.missing_in_source = result.changed = None
        result.wholes_match = (n_s, sum_s) == (n_t, sum_t)
        return result
    partition, n_s, n_t = _partition(src, tgt)
    src.native = tgt.native = agree(src.probed, tgt.probed)
    found = Differences()
    if partition is not None:
        found = bisect(src, tgt, partition, rows=max(n_s, n_t), fanout=spec.fanout, leaf_rows=spec.leaf_rows,
                       leaf_fetch_rows=DEFAULT_LEAF_FETCH_ROWS)
    changed = _changed_samples(src, tgt, found, spec.samples)  # its statements count too: before the result
    result = _result(spec, forms, src, tgt, found, n_s, n_t, clock, only_s, only_t, changed)
    if src.null_keys or tgt.null_keys:
        result.null_keys = {"source": src.null_keys, "target": tgt.null_keys}
        result.note = (f"rows with a NULL key cannot be located and were not compared: {src.null_keys} on the "
                       f"source, {tgt.null_keys} on the target")
    return result


def _partition(src: Side, tgt: Side) -> tuple[Partition | None, int, int]:
    if len(src.key) == 1 and src.key[0].kind == "int" and tgt.key[0].kind == "int":
        (n_s, lo_s, hi_s), (n_t, lo_t, hi_t) = both(src.bounds, tgt.bounds)
        los = [x for x in (lo_s, lo_t) if x is not None]
        his = [x for x in (hi_s, hi_t) if x is not None]
        if not los:
            return None, n_s, n_t
        return Partition(by_hash=False, lo=min(los), hi=max(his)), n_s, n_t
    n_s, n_t = both(src.count, tgt.count)
    return Partition(by_hash=True), n_s, n_t


def _result(spec: DiffSpec, forms: list[tuple[ColumnForm, ColumnForm]], src: Side, tgt: Side, found: Differences,
            n_s: int, n_t: int, clock: float, only_s: list[str], only_t: list[str],
            changed: list[dict[str, Any]]) -> DiffResult:
    nkey = len(spec.key)
    samples = {
        "missing_in_target": [_key_doc(spec.key, v) for v in list(found.missing_in_target.values())[:spec.samples]],
        "missing_in_source": [_key_doc(spec.key, v) for v in list(found.missing_in_source.values())[:spec.samples]],
        "changed": changed,
    }
    if found.duplicates:
        samples["duplicate_keys"] = [dict(_key_doc(spec.key, v), source_rows=a, target_rows=b)
                                     for v, a, b in list(found.duplicates.values())[:spec.samples]]
    return DiffResult(
        table=spec.table, target_table=spec.target_table or spec.table, key=list(spec.key),
        columns=[f[0].name for f in forms[nkey:]], source_rows=n_s, target_rows=n_t,
        missing_in_target=len(found.missing_in_target), missing_in_source=len(found.missing_in_source),
        changed=len(found.changed), duplicate_keys=len(found.duplicates),
        samples=samples, statements={"source": src.statements, "target": tgt.statements},
        bytes_fetched={"source": src.bytes_fetched, "target": tgt.bytes_fetched},
        seconds=time.monotonic() - clock, only_in_source=only_s, only_in_target=only_t,
        forms={f[0].name: _form_label(f[0]) for f in forms}, levels=found.levels,
        row_hash="native" if src.native else "md5")


def _form_label(form: ColumnForm) -> str:
    if form.kind == "num":
        return f"num({form.scale})"
    if form.kind in ("timestamp", "timestamptz"):
        return f"{form.kind}({form.precision})"
    return form.kind


def _key_doc(key: list[str], values: Any) -> dict[str, Any]:
    return {name: _plain(v) for name, v in zip(key, values, strict=True)}


def _plain(value: Any) -> Any:
    if value is None or isinstance(value, (bool, int, str)):
        return value
    if isinstance(value, float) and value.is_integer():
        return int(value)
    return str(value)


def _changed_samples(src: Side, tgt: Side, found: Differences, n: int) -> list[dict[str, Any]]:
    """For a few changed rows, the first compared column that differs, with both sides' values."""
    keys = list(found.changed)[:n]
    if not keys:
        return []
    s_vals, t_vals = both(src.values, tgt.values, keys)
    out = []
    key_names = [k.name for k in src.key]
    for key in keys:
        if key not in s_vals or key not in t_vals:
            continue
        (s_text, s_raw), (t_text, t_raw) = s_vals[key], t_vals[key]
        doc = _key_doc(key_names, found.changed[key])
        for i, col in enumerate(src.columns):
            if s_text[i] != t_text[i]:
                doc.update(column=col.name, source=_shown(s_raw[i]), target=_shown(t_raw[i]))
                break
        out.append(doc)
    return out


def _shown(value: Any) -> str | None:
    return None if value is None else str(value)
