"""Recall of wrong cells by suites ``suggest`` writes from clean data, on the raha datasets (beers, flights,
hospital in ``shared/datasets``, and rayyan and movies when they are there), loaded as CSV text the way people
load them (every column TEXT, empty strings kept, as ``sqlite3 .import`` does).

For each dataset: the clean CSV and the dirty CSV become the same SQLite table (a row number ``wd_row`` added
as its key); ``suggest_suite`` proposes checks from the clean table; the suite is scanned against the dirty
table with every failing row exported (``--export-failures``). A flagged cell is (row, column) of an exported
row of a failing check on that column; a wrong cell is one where dirty != clean. Recall = wrong cells flagged /
wrong cells; precision = wrong cells flagged / cells flagged.

Each dataset is measured twice, interleaved in one run: ``before``, the suite as ``suggest`` wrote it before it
proposed ``null_values``, ``numeric_text`` ranges and metrics (``suggest_suite(…, text_values=False)`` without
``metric``), and ``after``, the suite it writes now (table ``null_values`` where blanks or markers call for them,
``range … numeric_text: true`` on numbers stored as text, metrics)::

    .venv/bin/python -m bench.raha_recall --name raha-recall-after
"""

from __future__ import annotations

import argparse
import csv
import json
import os
import re
import sqlite3
import tempfile
from pathlib import Path
from typing import Any

from bench.common import machine
from watchdog.profile.rules import KINDS
from watchdog.profile.suggest import profile_database, suggest_suite
from watchdog.run.export_failures import ExportRequest
from watchdog.run.scan_run import run_scan
from watchdog.sandbox import Sandbox

RESULTS = Path(__file__).parent / "results"
#: the kinds suggest proposed before ``metric``
OLD_KINDS = [k for k in KINDS if k != "metric"]
DATASETS = ("raha_beers", "raha_flights", "raha_hospital", "raha_rayyan", "raha_movies")


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


def measure(name: str, work: Path, text_values: bool) -> dict[str, Any]:
    folder = _data_dir() / name
    header, dirty = _read(folder / "dirty.csv")
    _, clean = _read(folder / "clean.csv")
    columns = _names(header)
    wrong = {(i, columns[j]) for i, (d, c) in enumerate(zip(dirty, clean, strict=True), 1)
             for j in range(len(columns)) if d[j] != c[j]}
    work = work / ("after" if text_values else "before")
    work.mkdir(exist_ok=True)
    _load(work / f"{name}-clean.db", columns, clean)
    _load(work / f"{name}-dirty.db", columns, dirty)
    with Sandbox(f"sqlite:///{work / f'{name}-clean.db'}", timeout_s=600) as box:
        suggestion = suggest_suite(box, profile_database(box, ["t"]), text_values=text_values,
                                   kinds=None if text_values else OLD_KINDS)
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
    by_kind: dict[str, int] = {}
    for finding in outcome.doc.findings:
        if finding.status == "fail":
            by_kind[finding.check] = by_kind.get(finding.check, 0) + 1
    setting = suggestion.settings.get("t")
    return {"rows": len(dirty), "wrong_cells": len(wrong), "checks": outcome.doc.summary.checks,
            "failed_checks": outcome.doc.summary.failed, "failed_by_kind": by_kind,
            "table_options": setting.options if setting else {},
            "numeric_text_ranges": sum(1 for c in suggestion.active
                                       if c.kind == "range" and c.options.get("numeric_text")),
            "cells_flagged": len(flagged), "wrong_flagged": len(hits),
            "recall": round(len(hits) / len(wrong), 4) if wrong else None,
            "precision": round(len(hits) / len(flagged), 4) if flagged else None,
            "wrong_cells_by_column": _by_column(wrong), "wrong_flagged_by_column": _by_column(hits)}


def _by_column(cells: set[tuple[int, str]]) -> dict[str, int]:
    out: dict[str, int] = {}
    for _, column in cells:
        out[column] = out.get(column, 0) + 1
    return dict(sorted(out.items()))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--name", default="raha-recall-after")
    args = parser.parse_args(argv)
    present = [name for name in DATASETS if (_data_dir() / name / "dirty.csv").is_file()]
    started = machine()
    before: dict[str, Any] = {}
    after: dict[str, Any] = {}
    with tempfile.TemporaryDirectory(prefix="wd-raha-") as tmp:
        for name in present:  # interleaved: before and after of one dataset, then the next
            before[name] = measure(name, Path(tmp), text_values=False)
            after[name] = measure(name, Path(tmp), text_values=True)
    result = {"what": __doc__.split("\n\n")[0], "machine": started, "loadavg_end": [round(x, 2) for x in
                                                                                       os.getloadavg()],
              "datasets": present, "missing": [n for n in DATASETS if n not in present],
              "before": before, "after": after,
              "summary": {name: {"before_recall": before[name]["recall"], "after_recall": after[name]["recall"],
                                 "before_precision": before[name]["precision"],
                                 "after_precision": after[name]["precision"]} for name in present}}
    RESULTS.mkdir(exist_ok=True)
    (RESULTS / f"{args.name}.json").write_text(json.dumps(result, indent=2) + "\n", encoding="utf-8")
    print(json.dumps(result, indent=2))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
