"""Soda Core 4 verifies the benchmark suite's equivalent contracts on PostgreSQL; prints the counts as JSON.

Run with bench/.venv-soda's python, one fresh process per measurement::

    bench/.venv-soda/bin/python bench/peers/soda_runner.py postgresql postgresql://postgres@127.0.0.1:5432/wd_bench

Telemetry off (``SODA_CORE_TELEMETRY_ENABLED=false``, read by soda_core.common.env_config_helper). Soda 4
verifies one contract per call (``verify_contract_locally``), so the two tables are two calls in the
same process. The foreign key is an ``invalid`` check with ``valid_reference_data``. Soda 4's
``duplicate`` check counts the rows beyond the first of each group (valid rows minus distinct values):
watchdog's ``details.excess_rows``, not its ``failing``.
"""

from __future__ import annotations

import json
import os
import sys
import tempfile
from pathlib import Path
from urllib.parse import urlparse

os.environ["SODA_CORE_TELEMETRY_ENABLED"] = "false"

from soda_core.contracts.api.verify_api import verify_contract_locally  # noqa: E402

DS = "bench_pg"
REGEX = r"^[^@ ]+@[^@ ]+\.[a-z]{2,}$"


def _contracts(database: str) -> dict[str, str]:
    prefix = f"{DS}/{database}/public"
    return {
        "customers": f"""\
dataset: {prefix}/customers
columns:
  - name: id
  - name: name
  - name: email
    checks:
      - missing:
      - duplicate:
      - invalid:
          valid_format:
            name: email address
            regex: '{REGEX}'
  - name: country
    checks:
      - missing:
  - name: status
    checks:
      - invalid:
          valid_values: [active, inactive, pending]
  - name: age
    checks:
      - invalid:
          valid_min: 18
          valid_max: 120
checks:
  - row_count:
""",
        "orders": f"""\
dataset: {prefix}/orders
columns:
  - name: id
  - name: customer_id
    checks:
      - missing:
      - invalid:
          valid_reference_data:
            dataset: {prefix}/customers
            column: id
  - name: amount
    checks:
      - invalid:
          valid_min: 0
          valid_max: 10000
  - name: status
checks:
  - row_count:
""",
    }


#: (table, column or None, soda check type) -> watchdog check name, and which figure Soda's value is
NAMES = {
    ("customers", "email", "missing"): ("customers.email.not_null", "failing"),
    ("customers", "email", "duplicate"): ("customers.email.unique", "excess_rows"),
    ("customers", "email", "invalid"): ("customers.email.pattern", "failing"),
    ("customers", "country", "missing"): ("customers.country.not_null", "failing"),
    ("customers", "status", "invalid"): ("customers.status.accepted_values", "failing"),
    ("customers", "age", "invalid"): ("customers.age.range", "failing"),
    ("customers", None, "row_count"): ("customers.row_count", "observed"),
    ("orders", "customer_id", "missing"): ("orders.customer_id.not_null", "failing"),
    ("orders", "customer_id", "invalid"): ("orders.customer_id.foreign_key", "failing"),
    ("orders", "amount", "invalid"): ("orders.amount.range", "failing"),
    ("orders", None, "row_count"): ("orders.row_count", "observed"),
}


def run(url: str) -> dict:
    from soda_core.__version__ import SODA_CORE_VERSION

    parsed = urlparse(url.replace("postgresql+psycopg://", "postgresql://"))
    database = parsed.path.lstrip("/")
    counts: dict[str, dict] = {}
    with tempfile.TemporaryDirectory(prefix="soda-bench-") as tmp:
        ds_file = Path(tmp) / "ds.yml"
        ds_file.write_text(f"""\
type: postgres
name: {DS}
connection:
  host: {parsed.hostname or '127.0.0.1'}
  port: {parsed.port or 5432}
  user: {parsed.username or 'postgres'}
  password: '{parsed.password or 'unused'}'
  database: {database}
""")
        for table, text in _contracts(database).items():
            contract = Path(tmp) / f"{table}.yml"
            contract.write_text(text)
            session = verify_contract_locally(data_source_file_path=str(ds_file), contract_file_path=str(contract))
            for result in session.contract_verification_results:
                for check_result in result.check_results:
                    check = check_result.check
                    key = (table, check.column_name, check.type)
                    if key not in NAMES:
                        continue
                    name, figure = NAMES[key]
                    value = check_result.threshold_value
                    counts[name] = ({figure: int(value)} if value is not None
                                    else {"error": f"not evaluated: {check_result.outcome.name}"})
            if session.has_errors:
                counts.setdefault("_errors", {})[table] = session.get_errors_str()[:500]
    return {"counts": counts, "version": SODA_CORE_VERSION}


if __name__ == "__main__":
    print(json.dumps(run(sys.argv[2] if len(sys.argv) > 2 else sys.argv[1])))
