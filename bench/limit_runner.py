"""The limit: the minimal hand-written SQL that computes the benchmark suite's counts, on the bare driver.

One aggregate pass per table, the unique ``GROUP BY`` and the foreign-key anti-join: four statements,
no parser, no sandbox, no samples, no report. Run as its own process (``python bench/limit_runner.py
sqlite PATH``, ``... postgresql URL`` or ``... spark HOST:PORT/DB``); prints the counts as JSON keyed by
watchdog's check names.
On SQLite, which has no regex operator, ``REGEXP`` is a registered Python ``re.search`` (as any
SQLite client has to do). Imports only the standard library and the driver (psycopg on PostgreSQL).
"""

from __future__ import annotations

import json
import re
import sys

REGEX = r"^[^@ ]+@[^@ ]+\.[a-z]{2,}$"
STATUSES = "'active', 'inactive', 'pending'"


#: (customers pass, orders pass) per backend: one aggregate pass each
SQLITE_PASSES = (
    f"SELECT count(*), sum(email IS NULL), sum(country IS NULL), sum(NOT (email REGEXP '{REGEX}')), "
    f"sum(status NOT IN ({STATUSES})), sum(age < 18 OR age > 120) FROM customers",
    "SELECT count(*), sum(customer_id IS NULL), sum(amount < 0 OR amount > 10000) FROM orders",
)
POSTGRES_PASSES = (
    f"SELECT count(*), count(*) FILTER (WHERE email IS NULL), count(*) FILTER (WHERE country IS NULL), "
    f"count(*) FILTER (WHERE email !~ '{REGEX}'), count(*) FILTER (WHERE status NOT IN ({STATUSES})), "
    f"count(*) FILTER (WHERE age < 18 OR age > 120) FROM customers",
    "SELECT count(*), count(*) FILTER (WHERE customer_id IS NULL), "
    "count(*) FILTER (WHERE amount < 0 OR amount > 10000) FROM orders",
)
#: Spark SQL (Thrift server): the regex literal doubles its backslashes (Spark unescapes string literals)
SPARK_PASSES = (
    f"SELECT count(*), count_if(email IS NULL), count_if(country IS NULL), "
    f"count_if(NOT email RLIKE '{REGEX.replace(chr(92), chr(92) * 2)}'), count_if(status NOT IN ({STATUSES})), "
    f"count_if(age < 18 OR age > 120) FROM customers",
    "SELECT count(*), count_if(customer_id IS NULL), count_if(amount < 0 OR amount > 10000) FROM orders",
)
UNIQUE = ("SELECT count(*), sum(n) FROM (SELECT count(*) AS n FROM customers WHERE email IS NOT NULL "
          "GROUP BY email HAVING count(*) > 1) AS d")
ORPHANS = ("SELECT count(*) FROM orders AS o WHERE o.customer_id IS NOT NULL "
           "AND NOT EXISTS (SELECT 1 FROM customers AS c WHERE c.id = o.customer_id)")


def run(backend: str, target: str) -> dict:
    if backend == "sqlite":
        import sqlite3

        conn = sqlite3.connect(f"file:{target}?mode=ro", uri=True)
        compiled = re.compile(REGEX)
        conn.create_function("regexp", 2, lambda p, v: None if v is None else compiled.search(v) is not None,
                             deterministic=True)
        statements = [*SQLITE_PASSES, UNIQUE, ORPHANS]
        rows = [conn.execute(sql).fetchone() for sql in statements]
        conn.close()
    elif backend == "spark":  # target: host:port/database of a Spark Thrift server
        from pyhive import hive

        address, _, database = target.partition("/")
        host, _, port = address.partition(":")
        statements = [*SPARK_PASSES, UNIQUE, ORPHANS]
        conn = hive.connect(host=host, port=int(port or 10000), database=database or "default")
        cursor = conn.cursor()
        rows = []
        for sql in statements:
            cursor.execute(sql)
            rows.append(cursor.fetchone())
        conn.close()
    else:
        import psycopg

        statements = [*POSTGRES_PASSES, UNIQUE, ORPHANS]
        with psycopg.connect(target.replace("postgresql+psycopg://", "postgresql://")) as conn:
            rows = [conn.execute(sql).fetchone() for sql in statements]
    (c_rows, email_null, country_null, bad_email, bad_status, bad_age), (o_rows, cid_null, bad_amount), \
        (dup_values, dup_rows), (orphans,) = [tuple(int(v or 0) for v in row) for row in rows]
    counts = {
        "customers.email.not_null": {"failing": email_null},
        "customers.country.not_null": {"failing": country_null},
        "customers.email.unique": {"failing": dup_rows, "duplicate_values": dup_values,
                                   "excess_rows": dup_rows - dup_values},
        "customers.email.pattern": {"failing": bad_email},
        "customers.status.accepted_values": {"failing": bad_status},
        "customers.age.range": {"failing": bad_age},
        "customers.row_count": {"observed": c_rows},
        "orders.customer_id.not_null": {"failing": cid_null},
        "orders.customer_id.foreign_key": {"failing": orphans},
        "orders.amount.range": {"failing": bad_amount},
        "orders.row_count": {"observed": o_rows},
    }
    return {"counts": counts, "statements": len(statements)}


if __name__ == "__main__":
    print(json.dumps(run(sys.argv[1], sys.argv[2])))
