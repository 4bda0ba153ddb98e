"""Great Expectations 1.x runs the benchmark suite's equivalent expectations; prints the counts as JSON.

Run with bench/.venv-gx's python, one fresh process per measurement::

    bench/.venv-gx/bin/python bench/peers/gx_runner.py sqlite /path/bench.sqlite
    bench/.venv-gx/bin/python bench/peers/gx_runner.py postgresql postgresql+psycopg2://postgres@127.0.0.1/wd_bench

An ephemeral context (nothing written to disk), analytics off (``GX_ANALYTICS_ENABLED=false`` and the
context's own flag). One suite per table, validated with ``result_format=BASIC`` (counts plus a short
list of unexpected values, GX's default kind of output). GX has no foreign-key expectation: the orphans
are an ``UnexpectedRowsExpectation`` whose query is the anti-join. GX's ``unique`` rule counts every row
of a duplicated group, as watchdog's ``failing`` does. GX's SQLite dialect has no regex operator; this
runner registers the same ``REGEXP`` function watchdog's sandbox registers (Python's ``re.search``).
"""

from __future__ import annotations

import json
import os
import re
import sys

os.environ.setdefault("GX_ANALYTICS_ENABLED", "false")

import great_expectations as gx  # noqa: E402
import great_expectations.expectations as gxe  # noqa: E402
from great_expectations.data_context.types.base import ProgressBarsConfig  # noqa: E402

REGEX = r"^[^@ ]+@[^@ ]+\.[a-z]{2,}$"
#: GX substitutes ``{batch}`` with ``(SELECT ...) AS subselect``, so the batch takes no alias of its own;
#: ``customer_id`` in the subquery is the outer row's (customers has no such column)
ORPHANS = ("SELECT * FROM {batch} WHERE customer_id IS NOT NULL "
           "AND NOT EXISTS (SELECT 1 FROM customers AS c WHERE c.id = customer_id)")

EXPECTATIONS = {
    "customers": [
        ("customers.email.not_null", gxe.ExpectColumnValuesToNotBeNull(column="email")),
        ("customers.country.not_null", gxe.ExpectColumnValuesToNotBeNull(column="country")),
        ("customers.email.unique", gxe.ExpectColumnValuesToBeUnique(column="email")),
        ("customers.email.pattern", gxe.ExpectColumnValuesToMatchRegex(column="email", regex=REGEX)),
        ("customers.status.accepted_values",
         gxe.ExpectColumnValuesToBeInSet(column="status", value_set=["active", "inactive", "pending"])),
        ("customers.age.range", gxe.ExpectColumnValuesToBeBetween(column="age", min_value=18, max_value=120)),
        ("customers.row_count", gxe.ExpectTableRowCountToBeBetween(min_value=1)),
    ],
    "orders": [
        ("orders.customer_id.not_null", gxe.ExpectColumnValuesToNotBeNull(column="customer_id")),
        ("orders.customer_id.foreign_key", gxe.UnexpectedRowsExpectation(unexpected_rows_query=ORPHANS)),
        ("orders.amount.range", gxe.ExpectColumnValuesToBeBetween(column="amount", min_value=0, max_value=10000)),
        ("orders.row_count", gxe.ExpectTableRowCountToBeBetween(min_value=1)),
    ],
}


def _sqlite_regexp(engine) -> None:
    from sqlalchemy import event

    compiled = re.compile(REGEX)

    @event.listens_for(engine, "connect")
    def _register(dbapi_conn, _record):  # noqa: ANN001
        dbapi_conn.create_function("regexp", 2, lambda p, v: None if v is None else int(bool(
            re.compile(p).search(v) if p != REGEX else compiled.search(v))), deterministic=True)


def _key(config) -> tuple:  # noqa: ANN001
    return config.type, config.kwargs.get("column")


def _count(name: str, res) -> dict:  # noqa: ANN001
    if res.exception_info and res.exception_info.get("raised_exception"):
        return {"error": str(res.exception_info.get("exception_message"))[:300]}
    for info in (res.exception_info or {}).values():
        if isinstance(info, dict) and info.get("raised_exception"):
            return {"error": str(info.get("exception_message"))[:300]}
    if name.endswith("row_count"):
        return {"observed": int(res.result["observed_value"])}
    if name.endswith("foreign_key"):
        return {"failing": int(res.result["observed_value"])}
    return {"failing": int(res.result["unexpected_count"])}


def run(backend: str, target: str) -> dict:
    context = gx.get_context(mode="ephemeral")
    context.config.analytics_enabled = False
    context.variables.progress_bars = ProgressBarsConfig(globally=False, metric_calculations=False)
    if backend == "sqlite":
        source = context.data_sources.add_sqlite("bench", connection_string=f"sqlite:///{target}")
        _sqlite_regexp(source.get_engine())
    else:
        source = context.data_sources.add_postgres("bench", connection_string=target)
    counts: dict[str, dict] = {}
    for table, expectations in EXPECTATIONS.items():
        asset = source.add_table_asset(name=table, table_name=table)
        batch = asset.add_batch_definition_whole_table("whole").get_batch()
        suite = gx.ExpectationSuite(name=f"{table}_suite", expectations=[e for _, e in expectations])
        result = batch.validate(suite, result_format="BASIC")
        by_key = {_key(res.expectation_config): res for res in result.results}  # results come in any order
        for name, expectation in expectations:
            counts[name] = _count(name, by_key[_key(expectation.configuration)])
    return {"counts": counts, "version": gx.__version__}


if __name__ == "__main__":
    print(json.dumps(run(sys.argv[1], sys.argv[2])))
