"""The canonical text of a value, and the row hash built from it, written for each engine.

Two rows are the same row when their canonical texts are equal, whatever engine holds them. The
canonical forms (stated in docs/reconcile.md and proven equal across engines in tests/test_reconcile_canonical.py):

* ``int``: the decimal digits (``-12``), booleans as ``1``/``0``;
* ``num``: the value rounded to ``scale`` decimal places, half up (``floor(x * 10^scale + 0.5)``), written as
  that whole number of ``10^-scale`` units: ``10.5`` at scale 2 is ``1050``; ``-0.0`` is ``0``;
* ``text``: the characters themselves (compared as bytes: collations never decide equality);
* ``date``: ``YYYY-MM-DD``; ``timestamp``: ``YYYY-MM-DD HH:MM:SS`` in UTC, then ``.fff`` or ``.ffffff`` at the
  stated precision (truncated, never rounded);
* in a row's text, a text value is written ``<length>:<text>`` and its NULL ``-`` (so NULL and the empty
  string ``0:`` differ); every other value ``<text>,`` and its NULL ``~`` (those texts hold neither): no value
  can run into the next one.

A row's text is its columns' texts one after the other; its hash is the MD5 of that text, read as two
numbers (hex digits 1-7 and 8-15, 60 bits in all), summed per key segment with the row count: an
order-independent checksum that every engine computes exactly in its own integers.

Identifiers come quoted by sqlglot, literals rendered by sqlglot: nothing of the user's is pasted into SQL.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from sqlglot import exp

Kind = Literal["int", "bool", "num", "text", "date", "timestamp", "timestamptz"]
#: fractional digits of a timestamp's canonical form
Precision = Literal[0, 3, 6]

#: sqlglot's name of each engine watchdog reconciles
DIALECTS = ("sqlite", "postgres", "mysql", "duckdb", "spark")


def engine(sandbox_dialect: str) -> str:
    """The engine of a sandbox's sqlglot dialect (the sandbox reads SQLite as ``strictsqlite``)."""
    return {"strictsqlite": "sqlite", "databricks": "spark"}.get(sandbox_dialect, sandbox_dialect)


@dataclass(frozen=True)
class ColumnForm:
    """How one column is written canonically: its kind, and the scale or precision that kind needs."""

    name: str
    kind: Kind
    scale: int = 0
    precision: Precision = 6


def ident(name: str, dialect: str) -> str:
    """``name`` as a quoted identifier of ``dialect`` (dotted names are split into parts)."""
    parts = name.split(".")
    return ".".join(exp.to_identifier(part, quoted=True).sql(dialect=dialect) for part in parts)


def literal(value: str | int, dialect: str) -> str:
    node = exp.Literal.number(value) if isinstance(value, int) else exp.Literal.string(value)
    return node.sql(dialect=dialect)


def concat(parts: list[str], dialect: str) -> str:
    """Text concatenation that is NULL when any part is NULL (MySQL's ``||`` is OR; PostgreSQL's concat() skips
    NULLs)."""
    if len(parts) == 1:
        return parts[0]
    if dialect == "mysql":
        return f"CONCAT({', '.join(parts)})"
    return " || ".join(parts)


def as_text(sql: str, dialect: str) -> str:
    target = {"mysql": "CHAR", "duckdb": "VARCHAR", "spark": "STRING"}.get(dialect, "TEXT")
    return f"CAST({sql} AS {target})"


def char_length(sql: str, dialect: str) -> str:
    return f"{'LENGTH' if dialect == 'sqlite' else 'CHAR_LENGTH'}({sql})"


def value_text(column: ColumnForm, dialect: str) -> str:
    """The canonical text of ``column`` (NULL stays NULL)."""
    return canonical_of(ident(column.name, dialect), column, dialect)


def canonical_of(c: str, column: ColumnForm, dialect: str) -> str:
    """The canonical text of the SQL expression ``c`` (a column, or an aggregate of one), written as ``column``'s
    kind says."""
    if column.kind == "int":
        return as_text(c, dialect)
    if column.kind == "bool":
        if dialect in ("sqlite", "mysql"):  # booleans are integers there
            return as_text(f"CASE WHEN {c} IS NULL THEN NULL WHEN {c} <> 0 THEN 1 ELSE 0 END", dialect)
        return f"CASE WHEN {c} IS NULL THEN NULL WHEN {c} THEN '1' ELSE '0' END"
    if column.kind == "num":
        return _scaled(c, column.scale, dialect)
    if column.kind == "text":
        return as_text(c, dialect) if dialect in ("sqlite", "mysql") else c
    if column.kind == "date":
        return _date_text(c, dialect)
    return _timestamp_text(c, column.precision, column.kind == "timestamptz", dialect)


def _scaled(c: str, scale: int, dialect: str) -> str:
    units = literal(10 ** scale, dialect)
    if dialect == "sqlite":  # REAL arithmetic; an integer result fits INTEGER up to 2^63
        return f"CAST(CAST(floor({c} * {units} + 0.5) AS INTEGER) AS TEXT)"
    if dialect == "postgres":
        return f"CAST(CAST(floor({c} * {units} + 0.5) AS NUMERIC) AS TEXT)"
    if dialect == "mysql":
        return f"CAST(CAST(FLOOR({c} * {units} + 0.5) AS DECIMAL(65, 0)) AS CHAR)"
    if dialect == "duckdb":
        return f"CAST(CAST(floor({c} * {units} + 0.5) AS HUGEINT) AS VARCHAR)"
    return f"CAST(CAST(floor({c} * {units} + 0.5) AS DECIMAL(38, 0)) AS STRING)"


def _date_text(c: str, dialect: str) -> str:
    if dialect == "postgres":
        return f"to_char({c}, 'YYYY-MM-DD')"
    if dialect == "mysql":
        return f"DATE_FORMAT({c}, '%Y-%m-%d')"
    if dialect == "sqlite":
        return f"strftime('%Y-%m-%d', {c})"
    if dialect == "duckdb":
        return f"strftime(CAST({c} AS DATE), '%Y-%m-%d')"
    return f"date_format({c}, 'yyyy-MM-dd')"


def _timestamp_text(c: str, precision: Precision, zoned: bool, dialect: str) -> str:
    if dialect == "postgres":
        value = f"({c} AT TIME ZONE 'UTC')" if zoned else c
        fraction = {0: "", 3: ".MS", 6: ".US"}[precision]
        return f"to_char({value}, 'YYYY-MM-DD HH24:MI:SS{fraction}')"
    if dialect == "mysql":  # the session runs in UTC (sandbox), so TIMESTAMP values read in UTC
        whole = f"DATE_FORMAT({c}, '%Y-%m-%d %H:%i:%S')"
        if precision == 0:
            return whole
        return f"CONCAT({whole}, '.', SUBSTRING(DATE_FORMAT({c}, '%f'), 1, {precision}))"
    if dialect == "sqlite":  # text (or julian/unix numbers) read by SQLite's date functions: to the millisecond
        whole = f"strftime('%Y-%m-%d %H:%M:%S', {c})"
        if precision == 0:
            return whole
        return f"{whole} || '.' || substr(strftime('%f', {c}), 4, 3)"
    if dialect == "duckdb":  # the session's TimeZone is UTC: a TIMESTAMPTZ cast to TIMESTAMP is its UTC time
        value = f"CAST({c} AS TIMESTAMP)"
        fraction = {0: "", 3: ".%g", 6: ".%f"}[precision]
        return f"strftime({value}, '%Y-%m-%d %H:%M:%S{fraction}')"
    fraction = {0: "", 3: ".SSS", 6: ".SSSSSS"}[precision]
    return f"date_format({c}, 'yyyy-MM-dd HH:mm:ss{fraction}')"


def field(column: ColumnForm, dialect: str) -> str:
    """One value of a row's text: text as ``<length>:<text>`` (``-`` for NULL); any other kind as ``<text>,``
    (``~`` for NULL), since its canonical text never holds ``,`` or ``~``: the row's text reads back one way."""
    text = value_text(column, dialect)
    if column.kind == "text":
        length = as_text(char_length(text, dialect), dialect)
        return (f"CASE WHEN {text} IS NULL THEN '-' ELSE "
                f"{concat([length, literal(':', dialect), text], dialect)} END")
    ended = concat([text, literal(",", dialect)], dialect)
    if dialect == "duckdb":  # no COALESCE in its sandbox's list; DuckDB computes the repeated text once
        return f"CASE WHEN {text} IS NULL THEN '~' ELSE {ended} END"
    return f"COALESCE({ended}, '~')"


def row_text(columns: list[ColumnForm], dialect: str) -> str:
    """The canonical text of a row of ``columns`` (never NULL); ``''`` for no column."""
    if not columns:
        return literal("", dialect)
    return concat([field(c, dialect) for c in columns], dialect)


def row_hash(text: str, dialect: str) -> str:
    """The row's hash as one value to carry up a subquery (``wd_m``): hex digits 1-15 of the MD5 of ``text`` as a
    60-bit number (on SQLite one call of the sandbox's ``md5_int`` per row)."""
    if dialect == "sqlite":
        return f"md5_int({text}, 1, 15)"
    return _hex_int(f"{'MD5' if dialect == 'mysql' else 'md5'}({text})", 1, 15, dialect)


#: engines whose SUM of 64-bit integers is exact and cheap (DECIMAL, HUGEINT): a segment's checksum is one SUM
WIDE_SUMS = frozenset({"mysql", "duckdb"})


def checksum_sums(m: str, dialect: str) -> list[str]:
    """The SUMs a segment's checksum is read as: the sum of its row hashes ``m`` (60-bit, or signed 64-bit native
    ones), whole where the engine's SUM is exact and cheap, else as the sums of their high and low 32 bits
    (SQLite's and Spark's SUM of a 64-bit integer overflows; PostgreSQL's goes through NUMERIC, slower and large
    enough to spill a grouping to disk, while its SUM of 32-bit integers stays in one machine word).
    :func:`checksum_value` puts the parts together into the exact sum."""
    if dialect in WIDE_SUMS:
        return [f"SUM({m})"]
    if dialect == "postgres":
        return [f"SUM(CAST(({m}) >> 32 AS INT))",
                f"SUM(CAST((({m}) & 4294967295) - 2147483648 AS INT)) + 2147483648 * COUNT(*)"]
    return [f"SUM({int_div(m, 2**32, dialect)})", f"SUM(({m}) % 4294967296)"]


def checksum_value(parts: tuple[object, ...] | list[object]) -> int:
    """A segment's checksum from the values of :func:`checksum_sums` (NULL sums, of no rows, are 0)."""
    values = [int(v or 0) for v in parts]  # type: ignore[call-overload]
    return values[0] if len(values) == 1 else (values[0] << 32) + values[1]


def partition_hash(text: str, dialect: str) -> str:
    """A 32-bit number from the MD5 of ``text`` (hex digits 17-24): where a hashed key sits on the line."""
    if dialect == "sqlite":
        return f"md5_int({text}, 17, 8)"
    return _hex_int(f"{'MD5' if dialect == 'mysql' else 'md5'}({text})", 17, 8, dialect)


def _hex_int(hex_sql: str, start: int, digits: int, dialect: str) -> str:
    """Hex digits ``start .. start+digits-1`` (1-based) of an MD5 as an unsigned integer (at most 15 digits)."""
    part = f"substr({hex_sql}, {start}, {digits})" if dialect != "mysql" else f"SUBSTRING({hex_sql}, {start}, {digits})"
    if dialect == "postgres":
        return f"CAST(CAST('x' || {part} AS BIT({4 * digits})) AS BIGINT)"
    if dialect == "mysql":
        return f"CAST(CONV({part}, 16, 10) AS UNSIGNED)"
    if dialect == "duckdb":
        return f"CAST('0x' || {part} AS BIGINT)"
    return f"CAST(conv({part}, 16, 10) AS BIGINT)"


def int_div(numerator: str, denominator: int, dialect: str) -> str:
    """Whole-number division of a non-negative integer expression."""
    op = {"mysql": "DIV", "duckdb": "//", "spark": "div"}.get(dialect, "/")
    return f"({numerator}) {op} {denominator}"
