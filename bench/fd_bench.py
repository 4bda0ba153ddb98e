"""functional_dependency on the raha "hospital" benchmark: recall and precision per column pair.

The dirty table (1,000 rows, typos injected into ~2.5 % of cells) is loaded into a database; each
``functional_dependency`` check runs through watchdog's scanner (one GROUP BY statement each), then
its recorded SQL lists the failing rows. A flagged cell is (row, dependent column) of a failing row;
it is a *true* flag when that cell differs from the clean file. Per pair:

* precision = true flags / flags;
* recall = true flags / wrong cells in the dependent column.

The union over all pairs is compared with every wrong cell of the table (509). The same figures on
every database are part of the result (the checks must agree exactly across databases).

    .venv/bin/python -m bench.fd_bench                       # SQLite
    .venv/bin/python -m bench.fd_bench --backends sqlite,postgresql,mariadb
"""

from __future__ import annotations

import argparse
import csv
import json
import sqlite3
import sys
import tempfile
import time
import uuid
from pathlib import Path

import sqlalchemy as sa

from watchdog.sandbox import Sandbox
from watchdog.scan.scanner import scan
from watchdog.scan.suites import load_suite


def _data_dir() -> Path:
    """``shared/datasets/raha_hospital`` beside the repository (or beside a folder above it)."""
    for parent in Path(__file__).resolve().parents:
        candidate = parent / "shared" / "datasets" / "raha_hospital"
        if candidate.is_dir():
            return candidate
    raise SystemExit("the raha hospital dataset (shared/datasets/raha_hospital) was not found")


DATA = _data_dir()
PAIRS: list[tuple[list[str], str]] = [
    (["zip"], "city"), (["zip"], "state"), (["zip"], "county"),
    (["phone"], "zip"), (["phone"], "city"), (["phone"], "name"),
    (["provider_number"], "name"), (["provider_number"], "address_1"), (["provider_number"], "phone"),
    (["provider_number"], "type"), (["provider_number"], "owner"), (["provider_number"], "emergency_service"),
    (["measure_code"], "measure_name"), (["measure_code"], "condition"),
    (["state", "measure_code"], "state_average"),
]
ADMIN = {"postgresql": "postgresql+psycopg://postgres@127.0.0.1:5432/postgres",
         "mariadb": "mysql+pymysql://root@127.0.0.1:3306/"}


def read(name: str) -> tuple[list[str], list[list[str]]]:
    with open(DATA / name, newline="", encoding="utf-8") as fh:
        rows = list(csv.reader(fh))
    return rows[0], rows[1:]


def wrong_cells() -> tuple[list[str], list[list[str]], set[tuple[int, str]]]:
    header, dirty = read("dirty.csv")
    _, clean = read("clean.csv")
    wrong = {(int(d[0]), header[j]) for d, c in zip(dirty, clean, strict=True)
             for j in range(1, len(header)) if d[j] != c[j]}
    return header, dirty, wrong


def load(backend: str, header: list[str], rows: list[list[str]], workdir: Path) -> tuple[str, object]:
    """Create the ``hospital`` table (index INTEGER, other columns text); returns (url, cleanup)."""
    name = f"wd_fd_{uuid.uuid4().hex[:8]}"
    cols = [sa.Column("index", sa.Integer)] + [sa.Column(h, sa.String(400)) for h in header[1:]]
    if backend == "sqlite":
        path = workdir / "hospital.db"
        sqlite3.connect(path).close()
        url = f"sqlite:///{path}"
        cleanup = lambda: None  # noqa: E731
    else:
        admin = sa.create_engine(ADMIN[backend], isolation_level="AUTOCOMMIT")
        with admin.connect() as conn:
            conn.exec_driver_sql(f"CREATE DATABASE {name}")
        url = ADMIN[backend].rsplit("/", 1)[0] + f"/{name}"

        def cleanup() -> None:
            with admin.connect() as conn:
                conn.exec_driver_sql(f"DROP DATABASE {name}")
            admin.dispose()
    engine = sa.create_engine(url)
    table = sa.Table("hospital", sa.MetaData(), *cols)
    table.metadata.create_all(engine)
    with engine.begin() as conn:
        conn.execute(table.insert(), [dict(zip(header, [int(r[0]), *r[1:]], strict=True)) for r in rows])
    engine.dispose()
    return url, cleanup


def measure(url: str, workdir: Path, wrong: set[tuple[int, str]]) -> dict[str, object]:
    suite = workdir / "fd.yaml"
    suite.write_text("tables:\n  hospital:\n" + "".join(
        f"    - functional_dependency: {{determinant: [{', '.join(d)}], dependent: {dep}}}\n" for d, dep in PAIRS))
    per_pair: dict[str, dict[str, object]] = {}
    flagged_all: set[tuple[int, str]] = set()
    statements: list[str] = []
    with Sandbox(url, max_rows=100_000) as box:
        box.on_execute(statements.append)
        started = time.perf_counter()
        doc = scan(box, load_suite(suite).checks, sample=0)
        scan_s = time.perf_counter() - started
        statements_in_scan = len(statements)
        for (det, dep), finding in zip(PAIRS, doc.findings, strict=True):
            assert finding.status != "error", finding.error
            rows = box.query(finding.sql or "", max_rows=100_000).as_dicts() if finding.failing else []
            flagged = {(int(r["index"]), dep) for r in rows}
            assert len(flagged) == finding.failing
            truth = {cell for cell in wrong if cell[1] == dep}
            hits = flagged & truth
            flagged_all |= flagged
            per_pair[f"{'+'.join(det)}->{dep}"] = {
                "flagged": len(flagged), "true": len(hits), "wrong_in_column": len(truth),
                "precision": round(len(hits) / len(flagged), 3) if flagged else None,
                "recall": round(len(hits) / len(truth), 3) if truth else None,
                "groups_in_conflict": finding.details["groups_in_conflict"]}
    hits = flagged_all & wrong
    return {"pairs": per_pair, "scan_s": round(scan_s, 3), "scan_statements": statements_in_scan,
            "union": {"flagged": len(flagged_all), "true": len(hits), "wrong_cells": len(wrong),
                      "precision": round(len(hits) / len(flagged_all), 3), "recall": round(len(hits) / len(wrong), 3)}}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--backends", default="sqlite")
    args = parser.parse_args(argv)
    header, dirty, wrong = wrong_cells()
    results: dict[str, object] = {}
    for backend in args.backends.split(","):
        with tempfile.TemporaryDirectory() as tmp:
            url, cleanup = load(backend, header, dirty, Path(tmp))
            try:
                results[backend] = measure(url, Path(tmp), wrong)
            finally:
                cleanup()  # type: ignore[operator]
    first = next(iter(results.values()))
    assert isinstance(first, dict)
    print(f"raha hospital: {len(dirty)} rows, {len(wrong)} wrong cells; backends: {', '.join(results)}")
    print(f"{'pair':<36} {'flagged':>7} {'true':>5} {'wrong':>6} {'precision':>9} {'recall':>7}")
    for pair, r in first["pairs"].items():
        prec = "-" if r["precision"] is None else f"{r['precision']:.3f}"
        rec = "-" if r["recall"] is None else f"{r['recall']:.3f}"
        print(f"{pair:<36} {r['flagged']:>7} {r['true']:>5} {r['wrong_in_column']:>6} {prec:>9} {rec:>7}")
    u = first["union"]
    print(f"{'all pairs (union of cells)':<36} {u['flagged']:>7} {u['true']:>5} {u['wrong_cells']:>6} "
          f"{u['precision']:>9.3f} {u['recall']:>7.3f}")
    same = all(r["pairs"] == first["pairs"] for r in results.values() if isinstance(r, dict))
    print("identical on every backend: " + ("yes" if same else "NO"))
    for backend, r in results.items():
        assert isinstance(r, dict)
        print(f"{backend}: scan of {len(PAIRS)} checks: {r['scan_statements']} statements, {r['scan_s']} s")
    out = Path(__file__).resolve().parent / "results" / "fd_raha_hospital.json"
    out.write_text(json.dumps({"wrong_cells": len(wrong), "identical": same, "results": results}, indent=2) + "\n")
    print(f"written: {out}")
    return 0 if same else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
