"""Which columns are compared, and how each is written on each side (a :class:`ColumnForm` per side).

The declared types of both sides decide a column's canonical kind. Pairs whose values cannot mean the same on
both sides (text against a number, a date against a timestamp, JSON, binary) are refused with an error naming
the column: never a silent difference or a silent match. SQLite declares types loosely and keeps dates as
text, so a SQLite side takes the other side's temporal or numeric kind.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from watchdog.reconcile.canonical import ColumnForm, Kind, Precision
from watchdog.reconcile.errors import ReconcileError

#: fractional digits kept for floating-point columns when no --precision is given
DEFAULT_FLOAT_SCALE = 6

_INT = re.compile(r"^(TINY|SMALL|MEDIUM|BIG)?INT(EGER)?[0-9]*\b|^(INT2|INT4|INT8|HUGEINT|UBIGINT|UINTEGER|"
                  r"USMALLINT|UTINYINT|LONG|SHORT|BYTE|SERIAL|BIGSERIAL)\b")
_DECIMAL = re.compile(r"^(NUMERIC|DECIMAL|DEC|NUMBER)\s*(\(\s*(\d+)\s*(,\s*(\d+)\s*)?\))?")
_FLOAT = re.compile(r"^(FLOAT|REAL|DOUBLE|FLOAT4|FLOAT8)\b")
_TEXT = re.compile(r"^(N?VARCHAR|N?CHAR|CHARACTER|TEXT|STRING|CLOB|TINYTEXT|MEDIUMTEXT|LONGTEXT|ENUM|"
                   r"UUID|CITEXT|NAME|BPCHAR)\b")
_ZONED = re.compile(r"^TIMESTAMP.*WITH TIME ZONE|^TIMESTAMPTZ|^TIMESTAMP_TZ|^TIMESTAMP WITH LOCAL")
_TIMESTAMP = re.compile(r"^(TIMESTAMP|DATETIME)(_S|_MS|_NS)?\s*(\(\s*(\d)\s*\))?")


@dataclass(frozen=True)
class Declared:
    """What one side's catalogue says of a column."""

    name: str
    type: str
    kind: str  # int, bool, num, float, text, date, timestamp, timestamptz, other
    scale: int | None = None
    precision: int | None = None


def classify(name: str, declared: str, dialect: str) -> Declared:
    t = declared.strip().upper()
    if t.startswith("BOOL") or t == "TINYINT(1)":
        return Declared(name, declared, "bool")
    if _INT.match(t):
        return Declared(name, declared, "int")
    m = _DECIMAL.match(t)
    if m:
        scale = int(m.group(5)) if m.group(5) else (0 if m.group(3) else None)
        return Declared(name, declared, "num", scale=scale)
    if _FLOAT.match(t):
        return Declared(name, declared, "float")
    if _ZONED.match(t):
        return Declared(name, declared, "timestamptz", precision=_fraction(t, dialect))
    if dialect == "mysql" and t.startswith("TIMESTAMP"):  # stored in UTC, shown in the session's zone
        return Declared(name, declared, "timestamptz", precision=_fraction(t, dialect))
    if _TIMESTAMP.match(t):
        return Declared(name, declared, "timestamp", precision=_fraction(t, dialect))
    if t == "DATE":
        return Declared(name, declared, "date")
    if _TEXT.match(t) or (dialect == "sqlite" and t == ""):
        return Declared(name, declared, "text")
    return Declared(name, declared, "other")


def _fraction(t: str, dialect: str) -> int:
    """Fractional-second digits a timestamp type keeps."""
    m = re.search(r"\((\d)\)", t)
    if m:
        return int(m.group(1))
    if "_S" in t:
        return 0
    if "_MS" in t:
        return 3
    if dialect == "mysql":
        return 0
    if dialect == "sqlite":
        return 3
    return 6


def _precision(digits: int) -> Precision:
    return 0 if digits == 0 else (3 if digits <= 3 else 6)


def pair(source: Declared, target: Declared, src_dialect: str, tgt_dialect: str, *,
         scale: int | None = None, timestamp_precision: Precision | None = None) -> tuple[ColumnForm, ColumnForm]:
    """The canonical forms of one column on each side (raises :class:`ReconcileError` when they cannot agree)."""
    s, t = source.kind, target.kind
    if src_dialect == "sqlite" and tgt_dialect != "sqlite" and t != "other":
        s = _sqlite_reads_as(s, t)
    elif tgt_dialect == "sqlite" and src_dialect != "sqlite" and s != "other":
        t = _sqlite_reads_as(t, s)
    kinds = {s, t}
    name = source.name
    if kinds <= {"int", "bool"}:
        return ColumnForm(name, _k(s)), ColumnForm(target.name, _k(t))
    if kinds <= {"int", "num", "float"}:
        digits = scale if scale is not None else _scale(source, target)
        return ColumnForm(name, "num", scale=digits), ColumnForm(target.name, "num", scale=digits)
    if kinds == {"text"} or kinds == {"date"}:
        kind: Kind = "text" if kinds == {"text"} else "date"
        return ColumnForm(name, kind), ColumnForm(target.name, kind)
    if kinds <= {"timestamp", "timestamptz"}:
        p = timestamp_precision
        if p is None:
            p = _precision(min(source.precision if source.precision is not None else 6,
                               target.precision if target.precision is not None else 6))
        if p == 6 and "sqlite" in (src_dialect, tgt_dialect):
            raise ReconcileError(f"column {name!r}: SQLite reads timestamps to the millisecond; "
                                 "give --timestamp-precision ms (or s)")
        return (ColumnForm(name, _k(s), precision=p), ColumnForm(target.name, _k(t), precision=p))
    raise ReconcileError(
        f"column {name!r} is {source.type or 'untyped'} on the source and {target.type or 'untyped'} on the "
        f"target: their values cannot be compared faithfully; leave it out (--exclude {name}) or compare views "
        "that cast it to one type")


def _k(kind: str) -> Kind:
    return kind  # type: ignore[return-value]


def _sqlite_reads_as(sqlite_kind: str, other: str) -> str:
    """SQLite's loose declared kind, read as the other side's where SQLite's functions can."""
    if other in ("date", "timestamp", "timestamptz") and sqlite_kind in ("text", "date", "timestamp", "other"):
        return "date" if other == "date" else "timestamp"
    if other in ("num", "float", "int") and sqlite_kind in ("num", "float", "int"):
        return sqlite_kind
    if other == "bool" and sqlite_kind in ("int", "bool"):
        return "bool"
    return sqlite_kind


def _scale(source: Declared, target: Declared) -> int:
    scales = [d.scale for d in (source, target) if d.kind == "num" and d.scale is not None]
    if any(d.kind == "float" for d in (source, target)) and not scales:
        return DEFAULT_FLOAT_SCALE
    return max(scales) if scales else 0


def select_columns(source: list[Declared], target: list[Declared], key: list[str], *,
                   columns: list[str] | None, exclude: list[str]) -> tuple[list[tuple[Declared, Declared]],
                                                                            list[str], list[str]]:
    """(pairs of the key columns then the compared columns, columns only in the source, only in the target)."""
    src = {d.name.lower(): d for d in source}
    tgt = {d.name.lower(): d for d in target}
    for name in key:
        for side, found in (("source", src), ("target", tgt)):
            if name.lower() not in found:
                raise ReconcileError(f"key column {name!r} is not a column of the {side} table "
                                     f"(columns: {', '.join(d.name for d in found.values())})")
    keyset = {k.lower() for k in key}
    skip = {c.lower() for c in exclude}
    unknown = sorted(skip - set(src) - set(tgt))
    if unknown:
        raise ReconcileError(f"--exclude names no column of either table: {', '.join(unknown)}")
    if columns is not None:
        for name in columns:
            for side, found in (("source", src), ("target", tgt)):
                if name.lower() not in found:
                    raise ReconcileError(f"column {name!r} is not a column of the {side} table")
        chosen = [c.lower() for c in columns if c.lower() not in keyset]
    else:
        chosen = [d.name.lower() for d in source if d.name.lower() in tgt and d.name.lower() not in keyset]
    chosen = [c for c in chosen if c not in skip]
    only_source = [d.name for d in source if d.name.lower() not in tgt and d.name.lower() not in skip]
    only_target = [d.name for d in target if d.name.lower() not in src and d.name.lower() not in skip]
    pairs = [(src[k.lower()], tgt[k.lower()]) for k in key] + [(src[c], tgt[c]) for c in chosen]
    return pairs, only_source, only_target
