"""What any diagnosis must cost beside the scan: the floor of a second pass, and the price of folding one into the scan.

The diagnosis is asked to cost at most half of the scan. This measures, on the tables of ``bench.diagnose_cost``
(same sizes, engines and 1 / 5 / 20 failing checks), through the same sandbox and interleaved over ``--repeat``
rounds:

* ``scan_s``: the scan, as ``diagnose_cost`` times it;
* ``diagnosis_s``: watchdog's diagnosis of its findings;
* ``find_s``: the cheapest statement that merely *finds* the failing rows, ``SELECT COUNT(*) FROM t [joins] WHERE
  c1 OR … OR ck`` over the failing checks' own conditions. It groups nothing and returns one number; every
  diagnosis that reads the table after the scan (segments, onset, values and overlap all need the failing rows)
  costs at least this;
* ``count_s`` and ``grouped_s``: the scan's own counting statement as the scan sends it, and the same statement
  grouped by the table's segment columns (the columns the diagnosis's probe keeps). Their difference is the least a
  diagnosis folded into the scan's pass would add, for the segments alone (the offending values and the overlap
  would still need the failing rows).

    nice -n 10 .venv/bin/python -m bench.diagnose_floor --sizes 100000 1000000 --engines sqlite postgresql
"""

from __future__ import annotations

import argparse
import json
import sqlite3
import statistics
import tempfile
import time
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from bench.common import machine
from bench.diagnose_cost import CHECKS, RANGE_COLUMNS, build_postgres, build_sqlite, timed_scan

#: checks that pass on the generated table, to make a suite of 20 checks of which only some fail
PASSING = [
    "- not_null: source", "- not_null: plan", "- not_null: status", "- not_null: amount",
    "- accepted_values: {column: source, values: [csv, api, app, web, partner, batch, mobile, import]}",
    "- pattern: {column: plan, regex: '^p'}", "- range: {column: score, min: 0, max: 200}",
    *[f"- range: {{column: {c}, min: 0, max: 5000}}" for c in RANGE_COLUMNS],
]


def suite(path: Path, failing: int, size: int) -> Path:
    """The first ``failing`` checks of ``bench.diagnose_cost``, then passing ones up to ``size`` checks in all."""
    chosen = CHECKS[:failing] + PASSING[:max(0, size - failing)]
    path.write_text("tables:\n  events:\n" + "".join(f"    {c}\n" for c in chosen), encoding="utf-8")
    return path


def _find_sql(box: Any, checks: list[Any]) -> str:
    """``SELECT COUNT(*)`` of the rows failing any of ``checks``, with the joins their conditions need."""
    from sqlglot import exp

    from watchdog.diagnose.statements import _from

    flags = [c.row_flag(box.dialect, str(i)) for i, c in enumerate(checks)]
    flags = [f for f in flags if f is not None]
    any_fails = exp.or_(*[exp.Paren(this=f.condition.copy()) for f in flags], copy=False)
    query = _from(checks[0].table, flags).select(exp.Count(this=exp.Star()), copy=False).where(any_fails, copy=False)
    return query.sql(dialect=box.dialect, copy=False)


def _segments(box: Any, checks: list[Any], findings: list[Any]) -> list[str]:
    """The segment columns the diagnosis's probe keeps for the table."""
    from watchdog.diagnose.table import Budget, Item, _probe, detect_timestamp
    from watchdog.scan.sqlbuild import split_name

    table = checks[0].table
    kinds = box.column_types(split_name(table))
    items = [Item(c, f, c.row_flag(box.dialect, str(i)), {}) for i, (c, f) in enumerate(zip(checks, findings,
                                                                                          strict=True))]
    items = [i for i in items if i.flag is not None]
    columns, _ = _probe(box, table, items, kinds, None, detect_timestamp(kinds), Budget(5, 600))
    return [c.name for c in columns]


def _grouped_sql(count_sql: str, segments: list[str], dialect: str) -> str:
    """The scan's counting statement grouped by ``segments`` (its aggregates unchanged, the columns in front)."""
    import sqlglot
    from sqlglot import exp

    from watchdog.scan import sqlbuild

    query = sqlglot.parse_one(count_sql, read=dialect)
    assert isinstance(query, exp.Select)
    columns = [sqlbuild.column(s) for s in segments]
    source = query.args["from_"].this
    if isinstance(source, exp.Subquery):  # SQLite's keyed pass counts over a subquery of the rows' keys
        inner = source.this
        inner.set("expressions", [*inner.expressions, *[c.copy() for c in columns]])
    query.set("expressions", [*[c.copy() for c in columns], *query.expressions])
    return query.group_by(*columns, copy=False).sql(dialect=dialect)


def _timed(box: Any, sql: str, max_rows: int = 100_000) -> float:
    start = time.perf_counter()
    box.query(sql, max_rows=max_rows, timeout_s=600, parallel=True, jit=False)
    return time.perf_counter() - start


def measure(url: str, suite_path: Path, repeat: int) -> dict[str, Any]:
    from watchdog.diagnose import diagnose
    from watchdog.diagnose.stage import wanted
    from watchdog.sandbox import Sandbox
    from watchdog.scan.scanner import with_column_types
    from watchdog.scan.suites import load_suite

    runs: dict[str, list[float]] = {k: [] for k in ("scan_s", "diagnosis_s", "find_s", "count_s", "grouped_s")}
    segments: list[str] = []
    statements, catalogue, errors = 0, 0, []
    for _ in range(repeat):
        checks = load_suite(suite_path).checks
        with Sandbox(url, timeout_s=600) as box:
            doc, seconds, sent = timed_scan(box, checks)
            runs["scan_s"].append(seconds)
            count_sql = next(s for s in sent if s.upper().startswith("SELECT COUNT(*) AS M0"))
            sent.clear()
            start = time.perf_counter()
            found = diagnose(box, checks, doc.findings, timeout_s=600)
            runs["diagnosis_s"].append(time.perf_counter() - start)
            # the diagnosis's statements over the table (its own count), and the catalogue's it read besides
            statements = max((d.get("statements", 0) for d in found.values()), default=0)
            catalogue = len(sent) - statements
            errors = [d["error"] for d in found.values() if "error" in d]
            # the checks the diagnosis looks at: the failing ones
            status = {f.name: f for f in doc.findings}
            typed = [c for c in with_column_types(box, list(checks)) if wanted(status[c.name])]
            runs["find_s"].append(_timed(box, _find_sql(box, typed)))
            segments = segments or _segments(box, typed, [status[c.name] for c in typed])
            runs["count_s"].append(_timed(box, count_sql))
            runs["grouped_s"].append(_timed(box, _grouped_sql(count_sql, segments, box.dialect)))
    med = {k: statistics.median(v) for k, v in runs.items()}
    scan_s = med["scan_s"]
    return {"scan_s": round(scan_s, 3), "diagnosis_s": round(med["diagnosis_s"], 3),
            "find_s": round(med["find_s"], 3), "count_s": round(med["count_s"], 3),
            "grouped_s": round(med["grouped_s"], 3), "segments": segments, "diagnosis_statements": statements,
            "catalogue_statements": catalogue, "diagnosis_errors": errors,
            "diagnosis_ratio": round(med["diagnosis_s"] / scan_s, 3),
            "find_ratio": round(med["find_s"] / scan_s, 3),
            "grouped_extra_ratio": round((med["grouped_s"] - med["count_s"]) / scan_s, 3),
            "runs": {k: [round(x, 3) for x in v] for k, v in runs.items()}}


def _index_timestamp(url: str) -> None:
    """CREATE INDEX on events(created_at), on the SQLite file or the PostgreSQL database ``url`` names."""
    ddl = "CREATE INDEX events_created_at ON events (created_at)"
    if url.startswith("sqlite:///"):
        with sqlite3.connect(url.removeprefix("sqlite:///")) as conn:
            conn.execute(ddl)
        return
    import psycopg

    with psycopg.connect(url, autocommit=True) as conn:
        conn.execute(ddl)
        conn.execute("ANALYZE events")


def _cases(failing: list[int], suites: list[str]) -> list[tuple[int, int]]:
    """(failing checks, checks in the suite) pairs: a suite of only the failing checks, or padded with passing ones."""
    cases = []
    for k in failing:
        for kind in suites:
            size = k if kind == "failing" else int(kind)
            if kind == "failing" or size > k:
                cases.append((k, size))
    return cases


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[100_000, 1_000_000])
    parser.add_argument("--engines", nargs="+", default=["sqlite", "postgresql"])
    parser.add_argument("--failing", type=int, nargs="+", default=[1, 5, 20])
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--suites", nargs="+", default=["failing", "20"],
                        help="'failing': the suite holds only the failing checks; a number: the suite holds that many "
                             "checks, the rest passing")
    parser.add_argument("--timestamp-index", action="store_true",
                        help="index the table's timestamp column (created_at) after building it")
    parser.add_argument("--out", type=Path, default=Path("bench/results/diagnose-floor.json"))
    args = parser.parse_args()
    results: list[dict[str, Any]] = []
    started = datetime.now(UTC).isoformat(timespec="seconds")
    with tempfile.TemporaryDirectory(prefix="wd-diag-floor-") as tmp:
        for rows in args.sizes:
            for engine in args.engines:
                database = Path(tmp) / f"events_{rows}.db"
                if engine == "sqlite":
                    build_sqlite(database, rows)
                    url = f"sqlite:///{database}"
                else:
                    url = build_postgres(rows)
                if args.timestamp_index:
                    _index_timestamp(url)
                for failing, size in _cases(args.failing, args.suites):
                    found = measure(url, suite(Path(tmp) / f"suite_{failing}_{size}.yaml", failing, size), args.repeat)
                    row = {"engine": engine, "rows": rows, "failing_checks": failing, "suite_checks": size,
                           "timestamp_index": args.timestamp_index, **found,
                           "loadavg": machine()["loadavg"]}
                    print(json.dumps({k: v for k, v in row.items() if k != "runs"}), flush=True)
                    results.append(row)
                database.unlink(missing_ok=True)
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps({"benchmark": "diagnose_floor", "started_at": started, "machine": machine(),
                                    "finished_at": datetime.now(UTC).isoformat(timespec="seconds"),
                                    "results": results}, indent=2) + "\n", encoding="utf-8")


if __name__ == "__main__":
    main()
