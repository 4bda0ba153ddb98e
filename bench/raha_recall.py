"""Recall of wrong cells by suites ``suggest`` writes from clean data, on the raha datasets (beers, flights,
hospital in ``shared/datasets``), loaded as CSV text the way people load them (every column TEXT, empty
strings kept, as ``sqlite3 .import`` does).

For each dataset: the clean CSV and the dirty CSV become the same SQLite table (a row number ``wd_row`` added
as its key); ``suggest_suite`` proposes checks from the clean table; the suite is scanned against the dirty
table with every failing row exported (``--export-failures``). A flagged cell is (row, column) of an exported
row of a failing check on that column; a wrong cell is one where dirty != clean. Recall = wrong cells flagged /
wrong cells; precision = wrong cells flagged / cells flagged::

    .venv/bin/python -m bench.raha_recall --name raha-recall
"""

from __future__ import annotations

import argparse
import csv
import json
import re
import sqlite3
import tempfile
from pathlib import Path
from typing import Any

from bench.common import machine
from watchdog.profile.suggest import profile_database, suggest_suite
from watchdog.run.export_failures import ExportRequest
from watchdog.run.scan_run import run_scan
from watchdog.sandbox import Sandbox

RESULTS = Path(__file__).parent / "results"
DATASETS = ("raha_beers", "raha_flights", "raha_hospital")


def _data_dir() -> Path:
    for parent in Path(__file__).resolve().parents:
        if (parent / "shared" / "datasets").is_dir():
            return parent / "shared" / "datasets"
    raise SystemExit("shared/datasets was not found")


def _read(path: Path) -> tuple[list[str], list[list[str]]]:
    with path.open(newline="", encoding="utf-8") as handle:
        rows = list(csv.reader(handle))
    return rows[0], rows[1:]


def _names(header: list[str]) -> list[str]:
    return [re.sub(r"[^a-z0-9_]", "_", h.strip().lower()) or f"c{i}" for i, h in enumerate(header)]


def _load(path: Path, columns: list[str], rows: list[list[str]]) -> None:
    conn = sqlite3.connect(path)
    conn.execute("CREATE TABLE t (wd_row INTEGER PRIMARY KEY, " + ", ".join(f'"{c}" TEXT' for c in columns) + ")")
    marks = ", ".join("?" for _ in range(len(columns) + 1))
    conn.executemany(f"INSERT INTO t VALUES ({marks})", [(i, *r) for i, r in enumerate(rows, 1)])
    conn.commit()
    conn.close()


def measure(name: str, work: Path) -> dict[str, Any]:
    folder = _data_dir() / name
    header, dirty = _read(folder / "dirty.csv")
    _, clean = _read(folder / "clean.csv")
    columns = _names(header)
    wrong = {(i, columns[j]) for i, (d, c) in enumerate(zip(dirty, clean, strict=True), 1)
             for j in range(len(columns)) if d[j] != c[j]}
    _load(work / f"{name}-clean.db", columns, clean)
    _load(work / f"{name}-dirty.db", columns, dirty)
    with Sandbox(f"sqlite:///{work / f'{name}-clean.db'}", timeout_s=600) as box:
        suggestion = suggest_suite(box, profile_database(box, ["t"]))
    suite = work / f"{name}.yaml"
    suite.write_text(suggestion.text, encoding="utf-8")
    exported = work / f"{name}-failed"
    outcome = run_scan(f"sqlite:///{work / f'{name}-dirty.db'}", [suite], out_dir=work / f"{name}-run",
                       diagnose=False, export=ExportRequest(exported, limit=10**7))
    flagged: set[tuple[int, str]] = set()
    for finding in outcome.doc.findings:
        export = finding.details.get("export") or {}
        targets = [finding.column] if finding.column else list(finding.columns or [])[-1:]
        if not export.get("file") or not targets:
            continue
        with (exported / export["file"]).open(newline="", encoding="utf-8") as handle:
            for row in csv.DictReader(handle):
                if row.get("wd_row"):
                    flagged.update((int(row["wd_row"]), t) for t in targets if t in columns)
    hits = flagged & wrong
    return {"rows": len(dirty), "wrong_cells": len(wrong), "checks": outcome.doc.summary.checks,
            "failed_checks": outcome.doc.summary.failed, "cells_flagged": len(flagged), "wrong_flagged": len(hits),
            "recall": round(len(hits) / len(wrong), 4) if wrong else None,
            "precision": round(len(hits) / len(flagged), 4) if flagged else None}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--name", default="raha-recall")
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory(prefix="wd-raha-") as tmp:
        before = {name: measure(name, Path(tmp)) for name in DATASETS}
    result = {"what": __doc__.split("\n\n")[0], "machine": machine(), "before": before,
              "after": None, "after_note": "not measured: suggest does not yet propose null_values or numeric_text"}
    RESULTS.mkdir(exist_ok=True)
    (RESULTS / f"{args.name}.json").write_text(json.dumps(result, indent=2) + "\n", encoding="utf-8")
    print(json.dumps(result, indent=2))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
