"""Generated benchmark data: ``customers`` and ``orders`` with defects planted at known rates.

Both tables get ``rows`` rows (a multiple of 1,000). Every defect is chosen by the row number's
remainder modulo 1,000, so the expected count of each check is exact and known in advance
(:func:`expected_counts`), whatever the size. ``orders.customer_id`` references ``customers.id``
(declared as a foreign key; on PostgreSQL ``NOT VALID``, so the planted orphans can exist).

Per 1,000 customers: 20 NULL emails, 10 malformed emails (no ``@``), 10 pairs of duplicate emails
(20 rows), 15 NULL countries, 10 statuses outside the list (``deleted``, ``Active``), 5 ages out of
[18, 120] and 5 NULL ages (not failing). Per 1,000 orders: 10 NULL customer ids, 8 orphans (ids past
the last customer), 4 negative amounts.

SQLite is generated with ``INSERT ... SELECT`` over a recursive CTE, PostgreSQL with ``generate_series``.
"""

from __future__ import annotations

import json
import os
import re
import sqlite3
import time
from pathlib import Path

GENERATOR_VERSION = 3
#: the database the benchmark creates and drops (WATCHDOG_BENCH_PG_DATABASE: another name, so that two
#: benchmark runs on one server do not drop each other's tables)
PG_DATABASE = os.environ.get("WATCHDOG_BENCH_PG_DATABASE", "wd_bench")
if not re.fullmatch(r"[a-z_][a-z0-9_]{0,62}", PG_DATABASE):
    raise SystemExit(f"WATCHDOG_BENCH_PG_DATABASE must be a plain lower-case name, got {PG_DATABASE!r}")

#: (check name, first remainder, last remainder) of each planted defect, per 1,000 rows
PLANTED = {
    "customers.email.not_null": (0, 19),
    "customers.email.pattern": (20, 29),
    "customers.email.unique": (30, 49),        # r 30..39 copy the email of r+10: 10 pairs
    "customers.country.not_null": (100, 114),
    "customers.status.accepted_values": (200, 209),
    "customers.age.range": (300, 304),          # 300..302 -> 150, 303..304 -> 7; 305..309 NULL (pass)
    "orders.customer_id.not_null": (0, 9),
    "orders.customer_id.foreign_key": (10, 17),
    "orders.amount.range": (500, 503),
}


def expected_counts(rows: int) -> dict[str, dict[str, int]]:
    """The true figures of every check of the benchmark suite at ``rows`` rows per table."""
    if rows % 1000:
        raise ValueError("rows must be a multiple of 1000")
    k = rows // 1000
    out: dict[str, dict[str, int]] = {}
    for name, (first, last) in PLANTED.items():
        out[name] = {"failing": (last - first + 1) * k}
    out["customers.email.unique"].update(duplicate_values=10 * k, excess_rows=10 * k)
    out["customers.row_count"] = {"observed": rows}
    out["orders.row_count"] = {"observed": rows}
    return out


def _customers_select(i: str, concat_int) -> str:
    r = f"({i} % 1000)"
    user = lambda x: concat_int("'user'", x)  # noqa: E731
    return f"""
      {i},
      {concat_int("'Customer '", i)},
      CASE WHEN {r} < 20 THEN NULL
           WHEN {r} < 30 THEN {user(i)} || '.example.com'
           WHEN {r} < 40 THEN {user(f'({i} + 10)')} || '@example.com'
           ELSE {user(i)} || '@example.com' END,
      CASE WHEN {r} BETWEEN 100 AND 114 THEN NULL
           ELSE CASE {i} % 4 WHEN 0 THEN 'DE' WHEN 1 THEN 'FR' WHEN 2 THEN 'US' ELSE 'JP' END END,
      CASE WHEN {r} BETWEEN 200 AND 204 THEN 'deleted' WHEN {r} BETWEEN 205 AND 209 THEN 'Active'
           ELSE CASE {i} % 3 WHEN 0 THEN 'active' WHEN 1 THEN 'inactive' ELSE 'pending' END END,
      CASE WHEN {r} BETWEEN 300 AND 302 THEN 150 WHEN {r} BETWEEN 303 AND 304 THEN 7
           WHEN {r} BETWEEN 305 AND 309 THEN NULL ELSE 18 + ({i} * 7) % 80 END"""


def _orders_select(n: int, j: str) -> str:
    s = f"({j} % 1000)"
    return f"""
      {j},
      CASE WHEN {s} < 10 THEN NULL WHEN {s} < 18 THEN {n} + {j} ELSE (({j} * 7919) % {n}) + 1 END,
      CASE WHEN {s} BETWEEN 500 AND 503 THEN -5.00 ELSE (({j} * 37) % 100000) / 100.0 END,
      CASE {j} % 5 WHEN 0 THEN 'shipped' WHEN 1 THEN 'paid' WHEN 2 THEN 'new' WHEN 3 THEN 'shipped' ELSE 'paid' END"""


# --------------------------------------------------------------------------- SQLite

def sqlite_path(data_dir: Path, rows: int) -> Path:
    return data_dir / f"bench_{rows}.sqlite"


def build_sqlite(data_dir: Path, rows: int, *, force: bool = False) -> tuple[Path, float | None]:
    """Create (or reuse, when the generator and size match) the SQLite file; returns (path, seconds or None)."""
    path = sqlite_path(data_dir, rows)
    marker = path.with_suffix(".json")
    want = {"version": GENERATOR_VERSION, "rows": rows}
    if not force and path.is_file() and marker.is_file() and json.loads(marker.read_text()) == want:
        return path, None
    data_dir.mkdir(parents=True, exist_ok=True)
    for stale in (path, marker):
        stale.unlink(missing_ok=True)
    start = time.perf_counter()
    conn = sqlite3.connect(path, isolation_level=None)
    conn.executescript("""
        PRAGMA journal_mode = OFF; PRAGMA synchronous = OFF; PRAGMA page_size = 4096;
        CREATE TABLE customers (id INTEGER PRIMARY KEY, name TEXT NOT NULL, email TEXT, country TEXT,
                                status TEXT, age INTEGER);
        CREATE TABLE orders (id INTEGER PRIMARY KEY, customer_id INTEGER REFERENCES customers (id),
                             amount NUMERIC, status TEXT);
    """)
    concat = lambda a, b: f"{a} || {b}"  # noqa: E731
    seq = f"WITH RECURSIVE s(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM s WHERE i < {rows})"
    conn.execute("BEGIN")
    conn.execute(f"{seq} INSERT INTO customers SELECT {_customers_select('i', concat)} FROM s")
    conn.execute(f"{seq} INSERT INTO orders SELECT {_orders_select(rows, 'i')} FROM s")
    conn.execute("COMMIT")
    conn.execute("ANALYZE")
    conn.close()
    marker.write_text(json.dumps(want))
    return path, time.perf_counter() - start


# --------------------------------------------------------------------------- PostgreSQL

def pg_url(admin_url: str, database: str = PG_DATABASE) -> str:
    """``admin_url`` (any database) pointed at ``database``."""
    base, _, _ = admin_url.rpartition("/")
    return f"{base}/{database}"


def _psycopg_dsn(url: str) -> str:
    return url.replace("postgresql+psycopg://", "postgresql://").replace("postgresql+psycopg2://", "postgresql://")


def create_pg_database(admin_url: str) -> None:
    import psycopg

    with psycopg.connect(_psycopg_dsn(admin_url), autocommit=True) as conn:
        conn.execute(f"DROP DATABASE IF EXISTS {PG_DATABASE} WITH (FORCE)")
        conn.execute(f"CREATE DATABASE {PG_DATABASE}")


def drop_pg_database(admin_url: str) -> None:
    import psycopg

    with psycopg.connect(_psycopg_dsn(admin_url), autocommit=True) as conn:
        conn.execute(f"DROP DATABASE IF EXISTS {PG_DATABASE} WITH (FORCE)")


def build_postgres(admin_url: str, rows: int) -> float:
    """(Re)create both tables in the benchmark database; returns the seconds taken."""
    import psycopg

    start = time.perf_counter()
    concat = lambda a, b: f"{a} || {b}::text"  # noqa: E731
    with psycopg.connect(_psycopg_dsn(pg_url(admin_url)), autocommit=True) as conn:
        conn.execute("DROP TABLE IF EXISTS orders, customers")
        conn.execute("CREATE TABLE customers (id integer NOT NULL, name text NOT NULL, email text, country text, "
                     "status text, age integer)")
        conn.execute("CREATE TABLE orders (id integer NOT NULL, customer_id integer, amount numeric(12, 2), "
                     "status text)")
        conn.execute(f"INSERT INTO customers SELECT {_customers_select('i', concat)} "
                     f"FROM generate_series(1::bigint, {rows}::bigint) AS i")
        conn.execute(f"INSERT INTO orders SELECT {_orders_select(rows, 'i')} "
                     f"FROM generate_series(1::bigint, {rows}::bigint) AS i")
        conn.execute("ALTER TABLE customers ADD PRIMARY KEY (id)")
        conn.execute("ALTER TABLE orders ADD PRIMARY KEY (id)")
        conn.execute("ALTER TABLE orders ADD CONSTRAINT orders_customer_fk FOREIGN KEY (customer_id) "
                     "REFERENCES customers (id) NOT VALID")
        conn.execute("VACUUM (ANALYZE, FREEZE) customers")
        conn.execute("VACUUM (ANALYZE, FREEZE) orders")
    return time.perf_counter() - start
