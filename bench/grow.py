"""Grow a SQLite database by a share of new rows drawn from each table's own distribution (seeded).

Used by ``bench/suggest_growth.py`` to measure how often a suggested suite fails when the data grows as
it would in production, with nothing wrong in it. The model of "more rows like these", per table:

* **Rows are resampled whole** (a bootstrap), so what holds between columns of one row in today's data
  (a zip and its city, a status and its dates) holds in the new rows too.
* **Keys are new**: a single-column integer primary key, and any column whose values are all different
  integers (an undeclared row id), continues after today's maximum; a composite primary key is resampled
  until the combination is unseen (or the row is skipped).
* **Foreign keys point at existing rows**: a resampled row keeps its references, which exist.
* **Continuous values move**: a numeric or ISO-date column with many distinct values (at least 20, and
  at least half its non-null rows) gets a smoothed bootstrap: the resampled value plus Gaussian noise of
  Silverman's bandwidth (``1.06 * sd * n^-1/5``), rounded to the column's precision, reflected at zero for
  a column that is never negative. New extremes appear as they do when real data grows.
* **Unseen values appear** at the rate Good-Turing estimates for each text column: the share of
  values seen exactly once (``n1 / n``). Such a cell gets a new value of the same shape (a resampled
  value with one letter or digit changed), so a column where every value is different keeps getting new
  ones, and a categorical column seen on few rows gets a category it never had.
* **What a column is determined by stays so**: a column that another, repeating column determines exactly
  in today's data (every value of that column has one value of this one) is neither moved nor given
  unseen values: it keeps the resampled row's value, as its determinant does.
* Nulls are kept as resampled (the row's own null).

Everything is drawn from ``random.Random(seed)``: the same seed grows the same rows.
"""

from __future__ import annotations

import math
import random
import re
import sqlite3
import statistics
from collections import Counter
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

_ISO = re.compile(r"^\d{4}-\d{2}-\d{2}([ T]\d{2}:\d{2}(:\d{2})?)?$")
_NUMBER = re.compile(r"^[+-]?\d+(\.\d+)?$")


def q(name: str) -> str:
    return '"' + name.replace('"', '""') + '"'


@dataclass
class Column:
    name: str
    values: list[Any]
    kind: str = "other"           # "number", "date", "text", "other"
    continuous: bool = False
    decimals: int = 0
    as_text: bool = False
    nonneg: bool = False
    bandwidth: float = 0.0
    novelty: float = 0.0
    pool: list[Any] = field(default_factory=list)


def _decimals(value: Any) -> int:
    text = repr(value) if isinstance(value, float) else str(value)
    return len(text.split(".", 1)[1]) if "." in text and "e" not in text.lower() else 0


def _to_number(value: Any) -> float | None:
    if isinstance(value, bool) or value is None:
        return None
    if isinstance(value, (int, float)):
        return float(value)
    if isinstance(value, str) and _NUMBER.match(value.strip()):
        return float(value)
    return None


def _to_date(value: Any) -> datetime | None:
    if isinstance(value, str) and _ISO.match(value.strip()):
        try:
            return datetime.fromisoformat(value.strip().replace("T", " "))
        except ValueError:
            return None
    return None


def model(name: str, values: list[Any]) -> Column:
    col = Column(name, values)
    present = [v for v in values if v is not None]
    if not present:
        return col
    numbers = [_to_number(v) for v in present]
    dates = [_to_date(v) for v in present] if all(isinstance(v, str) for v in present) else []
    distinct = len(set(present))
    many = distinct >= 20 and distinct >= 0.5 * len(present)
    if all(x is not None for x in numbers):
        col.kind, col.as_text = "number", isinstance(present[0], str)
        col.decimals = max(_decimals(v) for v in present)
        floats = [x for x in numbers if x is not None]
        col.nonneg = min(floats) >= 0
        col.continuous = many
        col.bandwidth = 1.06 * statistics.pstdev(floats) * len(floats) ** -0.2 if len(floats) > 1 else 0.0
    elif dates and all(d is not None for d in dates):
        col.kind, col.continuous = "date", many
        stamps = [d.timestamp() for d in dates if d is not None]
        col.bandwidth = 1.06 * statistics.pstdev(stamps) * len(stamps) ** -0.2 if len(stamps) > 1 else 0.0
    elif all(isinstance(v, str) for v in present):
        col.kind = "text"
        counts = Counter(present)
        col.novelty = sum(1 for c in counts.values() if c == 1) / len(present)
    return col


def _mutate(value: str, rng: random.Random) -> str:
    """The same shape, one letter or digit changed."""
    spots = [i for i, ch in enumerate(value) if ch.isalnum()]
    if not spots:
        return value + "x"
    i = rng.choice(spots)
    ch = value[i]
    pool = "0123456789" if ch.isdigit() else ("abcdefghijklmnopqrstuvwxyz" if ch.islower() else
                                               "ABCDEFGHIJKLMNOPQRSTUVWXYZ")
    return value[:i] + rng.choice([c for c in pool if c != ch] or [ch]) + value[i + 1:]


def new_value(col: Column, value: Any, rng: random.Random, seen: set[Any]) -> Any:
    if value is None:
        return None
    if col.kind == "number" and col.continuous and col.bandwidth > 0:
        x = (_to_number(value) or 0.0) + rng.gauss(0.0, col.bandwidth)
        if col.nonneg:
            x = abs(x)
        x = round(x, col.decimals) if col.decimals else round(x)
        out: Any = (f"{x:.{col.decimals}f}" if col.as_text else x) if col.decimals else (
            str(int(x)) if col.as_text else int(x))
        return out
    if col.kind == "date" and col.continuous and col.bandwidth > 0:
        d = _to_date(value)
        assert d is not None
        moved = d + timedelta(seconds=rng.gauss(0.0, col.bandwidth))
        text = str(value).strip()
        if len(text) == 10:
            return moved.date().isoformat()
        return moved.replace(microsecond=0).isoformat(sep="T" if "T" in text else " ")[:len(text)]
    if col.kind == "text" and rng.random() < col.novelty:
        for _ in range(20):
            fresh = _mutate(str(value), rng)
            if fresh not in seen:
                seen.add(fresh)
                return fresh
    return value


def _int_key_start(values: list[Any]) -> int | None:
    """An undeclared row id (every value a different integer, none null): the next value after today's largest."""
    numbers = [_to_number(v) for v in values]
    if len(values) < 20 or any(x is None or not x.is_integer() for x in numbers) or len(set(numbers)) != len(values):
        return None
    return int(max(x for x in numbers if x is not None)) + 1


def _determined(cols: list[Column]) -> set[int]:
    """Columns another repeating column determines exactly, on enough evidence: X has at most half as many values as
    rows and at least 20 rows repeat one of its values (a dependency seen on 8 rows is not one)."""
    out = set()
    for j, y in enumerate(cols):
        for i, x in enumerate(cols):
            distinct = len(set(x.values))
            if i == j or distinct * 2 > len(x.values) or len(x.values) - distinct < 20:
                continue
            seen: dict[Any, Any] = {}
            if all(seen.setdefault(a, b) == b for a, b in zip(x.values, y.values, strict=True)):
                out.add(j)
                break
    return out


def _schema(conn: sqlite3.Connection, table: str) -> tuple[list[str], list[str], list[tuple[str, str, str]]]:
    info = conn.execute(f"PRAGMA table_info({q(table)})").fetchall()
    columns = [r[1] for r in info]
    pk = [r[1] for r in sorted((r for r in info if r[5]), key=lambda r: r[5])]
    fks = [(r[3], r[2], r[4]) for r in conn.execute(f"PRAGMA foreign_key_list({q(table)})").fetchall()]
    return columns, pk, fks


def _order(conn: sqlite3.Connection, tables: list[str]) -> list[str]:
    """Parents before children (declared foreign keys); cycles keep the given order."""
    parents = {t: {fk[1] for fk in _schema(conn, t)[2] if fk[1] != t} for t in tables}
    done: list[str] = []
    while len(done) < len(tables):
        ready = [t for t in tables if t not in done and parents[t] <= set(done)]
        done.append(ready[0] if ready else next(t for t in tables if t not in done))
    return done


def grow(db: Path, share: float, seed: int) -> dict[str, int]:
    """Add ``ceil(share * rows)`` drawn rows to every table of the SQLite file ``db``; returns rows added per table."""
    rng = random.Random(seed)
    conn = sqlite3.connect(db)
    tables = [r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE type = 'table' "
                                         "AND name NOT LIKE 'sqlite_%' ORDER BY name")]
    added: dict[str, int] = {}
    for table in _order(conn, tables):
        columns, pk, fks = _schema(conn, table)
        rows = conn.execute(f"SELECT {', '.join(q(c) for c in columns)} FROM {q(table)}").fetchall()
        if not rows:
            added[table] = 0
            continue
        cols = [model(name, [r[i] for r in rows]) for i, name in enumerate(columns)]
        foreign = {columns.index(fk[0]) for fk in fks if fk[0] in columns}
        seen = [set(c.values) for c in cols]
        key_at = [columns.index(c) for c in pk]
        int_key = len(key_at) == 1 and all(isinstance(r[key_at[0]], int) for r in rows)
        next_key = max((r[key_at[0]] for r in rows), default=0) + 1 if int_key else 0
        counters = {i: _int_key_start(c.values) for i, c in enumerate(cols) if i not in key_at}
        counters = {i: start for i, start in counters.items() if start is not None}
        fixed = _determined(cols)
        keys = {tuple(r[i] for i in key_at) for r in rows} if key_at else set()
        new_rows = []
        for _ in range(math.ceil(share * len(rows))):
            base = rows[rng.randrange(len(rows))]
            row = [v if i in fixed or i in foreign else new_value(c, v, rng, seen[i])
                   for i, (c, v) in enumerate(zip(cols, base, strict=True))]
            for i, start in counters.items():
                row[i] = str(start) if cols[i].as_text else start
                counters[i] = start + 1
            if int_key:
                row[key_at[0]] = next_key
                next_key += 1
            elif key_at:
                for _attempt in range(20):
                    if tuple(row[i] for i in key_at) not in keys:
                        break
                    other = rows[rng.randrange(len(rows))]
                    for i in key_at:
                        row[i] = other[i]
                else:
                    continue
                keys.add(tuple(row[i] for i in key_at))
            new_rows.append(row)
        conn.executemany(f"INSERT INTO {q(table)} VALUES ({', '.join('?' * len(columns))})", new_rows)
        added[table] = len(new_rows)
    conn.commit()
    conn.close()
    return added

