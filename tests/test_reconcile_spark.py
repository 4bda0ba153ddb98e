"""Spark SQL against PostgreSQL: the same planted differences found as between any other pair, and the canonical
form of the edge-value corpus equal to the Python oracle's."""

from __future__ import annotations

from datetime import datetime

from tests.spark_server import create_spark_database
from tests.test_reconcile_canonical import corpus, engine_rows, forms, oracle_hash, oracle_text
from tests.test_reconcile_diff import CHANGED, N, base_rows, load, planted
from watchdog.reconcile import DiffSpec, diff_tables
from watchdog.sandbox import Sandbox

SPARK_COLUMNS = {"id": "INT", "line": "INT", "amount": "DECIMAL(12,2)", "score": "DOUBLE", "status": "STRING",
                 "note": "STRING", "created": "TIMESTAMP"}
EDGE = {"id": "INT", "i": "BIGINT", "dec": "DECIMAL(14,2)", "f": "DOUBLE", "t": "STRING", "d": "DATE",
        "ts": "TIMESTAMP", "b": "BOOLEAN"}


def test_spark_and_postgresql_agree_on_every_difference(spark_admin_url: str, make_database) -> None:
    spark = create_spark_database(spark_admin_url, prefix="wd_reconcile")
    try:
        rows = base_rows()
        spark.create_table("orders", SPARK_COLUMNS,
                           [[*r[:6], datetime.fromisoformat(r[6])] for r in planted(rows)])
        spark.create_table("edge", EDGE, corpus())
        pg = make_database("postgresql")
        load(pg, rows)
        with Sandbox(pg.url) as a, Sandbox(spark.url) as b:
            result = diff_tables(a, b, DiffSpec(table="orders", key=["id"], leaf_rows=64, timestamp_precision=3))
        assert (result.source_rows, result.target_rows) == (N, N - 1)
        assert (result.missing_in_target, result.missing_in_source, result.changed) == (2, 1, len(CHANGED))
        got = engine_rows(spark, 3)
        for g, row in zip(got, corpus(), strict=True):
            texts = [oracle_text(col, value) for col, value in zip(forms(3), row, strict=True)]
            assert [None if v is None else str(v) for v in g[4:]] == texts, f"row {row[0]}"
            assert int(g[1]) == oracle_hash(texts, [col.kind for col in forms(3)])
    finally:
        spark.close()

