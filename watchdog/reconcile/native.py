"""A cheaper row hash for two PostgreSQL sides: the server's own hash of the row's values, not the MD5 of its text.

Two databases of different engines can only agree on the MD5 of a canonical text (:mod:`canonical`). Two
PostgreSQL servers can agree on more: ``hash_record_extended`` (the function hash partitioning routes rows
with) hashes each value with its type's hash function, about seven times cheaper than rendering the row as
text and taking its MD5. It is used only when it provably gives the same value for the same row on both sides:

* each column is first brought to a value whose equality is exactly its canonical text's equality: numbers
  as their canonical text (NUMERIC's own hash ignores the sign), timestamps truncated to the stated precision
  in UTC, integers and booleans as BIGINT, text as TEXT in the "C" collation (no collation can make two byte
  strings equal);
* both servers run the same major version with the same server encoding (text is hashed as stored bytes);
* the first statement of each side also hashes a fixed probe row of every type (negative numbers, a large
  decimal, multi-byte text, a leap day, microseconds) and the two results must be equal (a server built for
  another byte order or with other hash functions fails it).

Otherwise, or before PostgreSQL 14 (which added the function), both sides keep the canonical MD5.
"""

from __future__ import annotations

from watchdog.reconcile import canonical as c
from watchdog.reconcile.canonical import ColumnForm

#: engines whose two sides may hash rows natively when they agree on the probe
NATIVE_ENGINES = frozenset({"postgres"})

#: values of every kind, hashed on both sides before native hashes are trusted
PROBE = ("hash_record_extended(ROW(CAST(-9007199254740993 AS BIGINT), CAST(-1234567890123.456789 AS NUMERIC), "
         "CAST('é€😀 x ' AS TEXT) COLLATE \"C\", CAST('' AS TEXT) COLLATE \"C\", CAST(NULL AS TEXT), "
         "DATE '2024-02-29', TIMESTAMP '1999-12-31 23:59:59.123456', CAST(TRUE AS INT)), 0)")
#: what the first statement reads besides the probe's hash
PROBE_SETTINGS = ("current_setting('server_version_num')", "current_setting('server_encoding')")


def probe_columns(dialect: str) -> list[str]:
    """Expressions the first statement of a side adds so :func:`agree` can decide (none off PostgreSQL)."""
    return [*PROBE_SETTINGS, PROBE] if dialect in NATIVE_ENGINES else []


def agree(source: tuple[object, ...] | None, target: tuple[object, ...] | None) -> bool:
    """Whether two sides' probe results allow native hashes: same major version and encoding, same probe hash."""
    if not source or not target:
        return False
    (v_s, enc_s, h_s), (v_t, enc_t, h_t) = source, target
    try:
        major_s, major_t = int(str(v_s)) // 10000, int(str(v_t)) // 10000
    except ValueError:
        return False
    return major_s == major_t and enc_s == enc_t and h_s is not None and h_s == h_t


def native_value(column: ColumnForm, dialect: str) -> str:
    """A PostgreSQL value of ``column`` whose equality is its canonical text's equality."""
    col = c.ident(column.name, dialect)
    if column.kind in ("int", "bool"):
        inner = f"CAST({col} AS INT)" if column.kind == "bool" else col
        return f"CAST({inner} AS BIGINT)"
    if column.kind == "num":  # its canonical text: NUMERIC's own hash ignores the sign and maps NaN to Infinity
        return c.canonical_of(col, column, dialect)
    if column.kind == "text":
        return f'CAST({col} AS TEXT) COLLATE "C"'
    if column.kind == "date":
        return f"CAST({col} AS DATE)"
    value = f"({col} AT TIME ZONE 'UTC')" if column.kind == "timestamptz" else col
    unit = {0: "second", 3: "milliseconds"}.get(column.precision)
    return f"CAST(date_trunc('{unit}', {value}) AS TIMESTAMP)" if unit else f"CAST({value} AS TIMESTAMP)"


def row_hash(columns: list[ColumnForm], dialect: str) -> str:
    """The row's native hash, a signed 64-bit number (summed exactly as NUMERIC)."""
    values = ", ".join(native_value(col, dialect) for col in columns) or "0"
    return f"hash_record_extended(ROW({values}), 0)"


def partition_hash(columns: list[ColumnForm], dialect: str) -> str:
    """Where a hashed key sits on the line (0 .. 2^32-1), from the native hash of the key's values."""
    values = ", ".join(native_value(col, dialect) for col in columns)
    return f"(hash_record_extended(ROW({values}), 1) & 4294967295)"
