"""The same row means the same hash on every engine: canonical texts and row hashes of a corpus of edge values,
computed by SQLite, PostgreSQL, MariaDB and DuckDB through the sandbox, against an independent Python oracle."""

from __future__ import annotations

import hashlib
import math
from datetime import date, datetime
from decimal import Decimal

import pytest

from tests.dbs import TestDatabase
from watchdog.reconcile import canonical as c
from watchdog.reconcile.canonical import ColumnForm
from watchdog.sandbox import Sandbox

ENGINES = ("sqlite", "postgresql", "mariadb", "duckdb")

DDL = {
    "sqlite": {"id": "INTEGER", "i": "BIGINT", "dec": "DECIMAL(14, 2)", "f": "DOUBLE", "t": "TEXT", "d": "DATE",
               "ts": "TIMESTAMP", "b": "BOOLEAN"},
    "postgresql": {"id": "INTEGER", "i": "BIGINT", "dec": "NUMERIC(14, 2)", "f": "DOUBLE PRECISION", "t": "TEXT",
                   "d": "DATE", "ts": "TIMESTAMP(6)", "b": "BOOLEAN"},
    "mariadb": {"id": "INT", "i": "BIGINT", "dec": "DECIMAL(14, 2)", "f": "DOUBLE", "t": "VARCHAR(100)",
                "d": "DATE", "ts": "DATETIME(6)", "b": "BOOLEAN"},
    "duckdb": {"id": "INTEGER", "i": "BIGINT", "dec": "DECIMAL(14, 2)", "f": "DOUBLE", "t": "VARCHAR", "d": "DATE",
               "ts": "TIMESTAMP", "b": "BOOLEAN"},
}

TEXTS = ["", " ", "a ", " a", "abc", "ABC", "é", "e\u0301", "👍🏽", "quote'd", '"dq"', "-", "0:", "1:x", "\\", "tab\t",
         "line\nbreak", "NULL", "日本語", "ß"]
DECIMALS = [Decimal("0"), Decimal("10.50"), Decimal("-2.50"), Decimal("2.50"), Decimal("999999999999.99"),
            Decimal("-0.01"), Decimal("0.01"), None]
FLOATS = [0.0, -0.0, 0.1, 2.5, -2.5, 1e-7, 123456.789012, -1e9, 3.0000004, 1 / 3, None]
INTS = [0, -1, 1, 2**53, -(2**62), 9223372036854775807, None]
STAMPS = [datetime(2024, 1, 2, 3, 4, 5, 123456), datetime(1999, 12, 31, 23, 59, 59), datetime(2024, 2, 29, 0, 0, 0, 1),
          None]
DATES = [date(2024, 1, 2), date(1970, 1, 1), date(2099, 12, 31), None]
BOOLS = [True, False, None]


def corpus() -> list[tuple]:
    rows = []
    n = max(len(TEXTS), len(DECIMALS), len(FLOATS), len(INTS), len(STAMPS))
    for i in range(n):
        rows.append((i + 1, INTS[i % len(INTS)], DECIMALS[i % len(DECIMALS)], FLOATS[i % len(FLOATS)],
                     TEXTS[i % len(TEXTS)], DATES[i % len(DATES)], STAMPS[i % len(STAMPS)], BOOLS[i % len(BOOLS)]))
    rows.append((n + 1, None, None, None, None, None, None, None))
    return rows


def load(db: TestDatabase) -> None:
    q = db.quote
    cols = ", ".join(f"{q(name)} {kind}" for name, kind in DDL[db.kind].items())
    db.run(f"CREATE TABLE edge ({cols})")
    rows = corpus()
    if db.kind == "sqlite":  # SQLite keeps timestamps and dates as text, as applications write them
        rows = [(*r[:5], r[5].isoformat() if r[5] else None,
                 r[6].isoformat(sep=" ", timespec="microseconds") if r[6] else None, r[7]) for r in rows]
    if db.kind == "sqlite":
        rows = [(*r[:2], float(r[2]) if r[2] is not None else None, *r[3:]) for r in rows]
    db.insert("edge", list(DDL[db.kind]), rows)


def forms(precision: int) -> list[ColumnForm]:
    return [ColumnForm("id", "int"), ColumnForm("i", "int"), ColumnForm("dec", "num", scale=2),
            ColumnForm("f", "num", scale=6), ColumnForm("t", "text"), ColumnForm("d", "date"),
            ColumnForm("ts", "timestamp", precision=precision), ColumnForm("b", "bool")]  # type: ignore[arg-type]


# ---- the oracle: the documented canonical form, written in Python

def oracle_text(form: ColumnForm, value) -> str | None:
    if value is None:
        return None
    if form.kind == "int":
        return str(int(value))
    if form.kind == "bool":
        return "1" if value else "0"
    if form.kind == "num":
        if isinstance(value, Decimal):
            return str(int((value * 10 ** form.scale + Decimal("0.5")).to_integral_value(rounding="ROUND_FLOOR")))
        return str(int(math.floor(value * 10 ** form.scale + 0.5)))
    if form.kind == "text":
        return value
    if form.kind == "date":
        return value.isoformat()
    stamp = value.strftime("%Y-%m-%d %H:%M:%S")
    if form.precision == 3:
        stamp += f".{value.microsecond // 1000:03d}"
    elif form.precision == 6:
        stamp += f".{value.microsecond:06d}"
    return stamp


def oracle_hash(texts: list[str | None], kinds: list[str] | None = None) -> int:
    kinds = kinds or ["text"] * len(texts)
    row = "".join(("-" if t is None else f"{len(t)}:{t}") if k == "text" else ("~" if t is None else f"{t},")
                  for t, k in zip(texts, kinds, strict=True))
    digest = hashlib.md5(row.encode("utf-8")).hexdigest()
    return int(digest[0:15], 16)


def engine_rows(db: TestDatabase, precision: int) -> list[tuple]:
    with Sandbox(db.url) as box:
        d = c.engine(box.dialect)
        f = forms(precision)
        texts = ", ".join(c.value_text(col, d) for col in f)
        inner = f"SELECT {c.ident('id', d)} AS wd_id, {c.row_hash(c.row_text(f, d), d)} AS wd_m, {texts} FROM edge"
        sql = f"SELECT wd_id, wd_m, s.* FROM ({inner}) AS s ORDER BY wd_id"
        return [tuple(row) for row in box.query(sql, max_rows=1000).rows]


@pytest.mark.parametrize("kind", ENGINES)
@pytest.mark.parametrize("precision", [0, 3])
def test_every_engine_writes_the_documented_canonical_form(make_database, kind: str, precision: int) -> None:
    db = make_database(kind)
    load(db)
    f = forms(precision)
    got = engine_rows(db, precision)
    expected = []
    for row in corpus():
        texts = [oracle_text(col, value) for col, value in zip(f, row, strict=True)]
        expected.append((row[0], oracle_hash(texts, [col.kind for col in f]), texts))
    assert len(got) == len(expected)
    for g, (rid, e_hash, texts) in zip(got, expected, strict=True):
        assert g[0] == rid
        assert [None if v is None else str(v) for v in g[4:]] == texts, f"{kind} row {rid}"
        assert int(g[1]) == e_hash, f"{kind} row {rid}: hash"


@pytest.mark.parametrize("kind", ("postgresql", "mariadb", "duckdb"))
def test_microseconds_where_the_engine_keeps_them(make_database, kind: str) -> None:
    db = make_database(kind)
    load(db)
    got = engine_rows(db, 6)
    stamps = {row[0]: row[6] for row in corpus()}
    for g in got:
        assert g[-2] == oracle_text(ColumnForm("ts", "timestamp", precision=6), stamps[g[0]])


def test_null_and_empty_text_differ_and_values_cannot_run_together() -> None:
    assert oracle_hash([None]) != oracle_hash([""])
    assert oracle_hash(["a", "bc"]) != oracle_hash(["ab", "c"])
    assert oracle_hash(["1:x"]) != oracle_hash(["1", "x"])
    assert oracle_hash(["1", "2"], ["int", "int"]) != oracle_hash(["12", None], ["int", "int"])
    assert oracle_hash(["1", "-"], ["int", "text"]) != oracle_hash(["1", None], ["int", "text"])
