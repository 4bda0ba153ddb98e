"""reladiff (data-diff's maintained fork) compares one table on two databases; prints counts and seconds as JSON.

Run with bench/.venv-reladiff's python, one fresh process per measurement::

    bench/.venv-reladiff/bin/python bench/peers/reladiff_runner.py URL_A URL_B TABLE KEY COLUMN [COLUMN...]

reladiff reads PostgreSQL, MySQL/MariaDB and DuckDB (not SQLite). Its hashdiff algorithm runs with the default
bisection factor and threshold, one thread per side, as its command line does by default.
"""

from __future__ import annotations

import json
import sys
import time

import reladiff


def main() -> None:
    url_a, url_b, table, key, *columns = sys.argv[1:]
    clock = time.monotonic()
    a = reladiff.connect_to_table(url_a, table, key)
    b = reladiff.connect_to_table(url_b, table, key)
    removed: set = set()
    added: set = set()
    for sign, row in reladiff.diff_tables(a, b, extra_columns=tuple(columns), algorithm=reladiff.Algorithm.HASHDIFF):
        (removed if sign == "-" else added).add(row[0])
    changed = removed & added
    print(json.dumps({"missing_in_target": len(removed - changed), "missing_in_source": len(added - changed),
                      "changed": len(changed), "seconds": round(time.monotonic() - clock, 3)}))


if __name__ == "__main__":
    main()
