"""Suites over CSV files through DuckDB give the same numbers as the same suite on SQLite.

The raha datasets in ``../shared/datasets`` (hospital, flights, beers; dirty and clean, real typos,
blanks and unit suffixes) are scanned twice: as files (``watchdog scan --file``, DuckDB in memory) and
as SQLite tables loaded from the same CSVs with Python's ``csv`` module (an empty field is NULL; each
column declared with the type DuckDB's reader gives it, so both databases hold the same values).
Every finding must agree, and a few numbers are also counted here from the CSV text itself.
"""

from __future__ import annotations

import csv
import json
import re
import shutil
import sqlite3
from pathlib import Path

import duckdb
import pytest

from tests.conftest import SHARED
from watchdog.findings import FindingsDoc
from watchdog.sandbox import Sandbox
from watchdog.scan.scanner import scan
from watchdog.scan.suites import load_suites

DATASETS = SHARED / "datasets"

SUITES = {
    "hospital": r"""
tables:
  hospital:
    - row_count: {min: 1}
    - unique: index
    - unique: [provider_number, measure_code]
    - not_null: address_1
    - not_null: score
    - pattern: {column: zip, regex: '^[0-9]{5}$'}
    - pattern: {column: phone, regex: '^[0-9]{10}$'}
    - pattern: {column: city, regex: '^[a-z .-]+$'}
    - pattern: {column: state, regex: '^[a-z]{2}$'}
    - pattern: {column: measure_code, regex: '(?i)^[a-z]+(-[a-z]+)?-[0-9]+[a-z]?$'}
    - accepted_values: {column: state, values: [al, ak]}
    - accepted_values: {column: condition, values: [heart attack, heart failure, pneumonia,
                                                    surgical infection prevention, children's asthma care]}
    - unique: [zip, city]
custom_sql:
  - name: names_with_x
    sql: SELECT count(*) FROM hospital WHERE instr(name, 'x') > 0
""",
    "flights": r"""
tables:
  flights:
    - row_count: {min: 1}
    - unique: tuple_id
    - unique: [src, flight]
    - not_null: act_dep_time
    - not_null: act_arr_time
    - pattern: {column: sched_dep_time, regex: '^[0-9]{1,2}:[0-9]{2} [ap]\.m\.$'}
    - pattern: {column: act_dep_time, regex: '^[0-9]{1,2}:[0-9]{2} [ap]\.m\.$'}
    - pattern: {column: act_arr_time, regex: '^[0-9]{1,2}:[0-9]{2} [ap]\.m\.( \(-?[0-9]+\))?$'}
    - pattern: {column: flight, regex: '^[A-Z0-9]{2}-[0-9]+-[A-Z]{3}-[A-Z]{3}$'}
    - range: {column: tuple_id, min: 1, max: 2000}
custom_sql:
  - name: departed_late
    sql: SELECT count(*) FROM flights WHERE sched_dep_time <> act_dep_time
""",
    "beers": r"""
tables:
  beers:
    - row_count: {min: 1}
    - unique: id
    - unique: [beer_name, brewery_id]
    - not_null: ibu
    - not_null: style
    - pattern: {column: ounces, regex: '^[0-9]+(\.[0-9]+)?$'}
    - pattern: {column: abv, regex: '^0?\.[0-9]+$'}
    - pattern: {column: state, regex: '^[A-Z]{2}$'}
    - pattern: {column: city, regex: '\s'}
    - range: {column: brewery_id, min: 0, max: 500}
    - range: {column: id, min: 1, max: 2000}
custom_sql:
  - name: no_city
    sql: SELECT count(*) FROM beers WHERE city IS NULL OR state IS NULL
""",
}

_SQLITE_TYPES = {"BIGINT": "INTEGER", "INTEGER": "INTEGER", "DOUBLE": "REAL"}


def _copy_with_dirty_header(name: str, kind: str, folder: Path) -> Path:
    """The CSV, copied; the clean files' header is replaced by the dirty one (same columns, other spellings)."""
    source = DATASETS / f"raha_{name}" / f"{kind}.csv"
    target = folder / f"{name}_{kind}.csv"
    if kind == "dirty":
        shutil.copyfile(source, target)
        return target
    header = (DATASETS / f"raha_{name}" / "dirty.csv").read_text(encoding="utf-8").splitlines()[0]
    first, body = source.read_bytes().split(b"\n", 1)
    ending = b"\r\n" if first.endswith(b"\r") else b"\n"  # flights: CRLF, kept as it is
    target.write_bytes(header.encode() + ending + body)
    return target


def _load_sqlite(csv_path: Path, table: str, db_path: Path) -> None:
    types = {row[0]: row[1] for row in duckdb.sql(f"DESCRIBE SELECT * FROM read_csv('{csv_path}')").fetchall()}
    with csv_path.open(newline="", encoding="utf-8") as handle:
        reader = csv.reader(handle)
        header = next(reader)
        rows = [[None if value == "" else value for value in row] for row in reader]
    columns = ", ".join(f'"{c}" {_SQLITE_TYPES.get(types[c], "TEXT")}' for c in header)
    with sqlite3.connect(db_path) as conn:
        conn.execute(f'CREATE TABLE "{table}" ({columns})')
        conn.executemany(f'INSERT INTO "{table}" VALUES ({", ".join("?" * len(header))})', rows)
    conn.close()


def _scan(url: str, suite: Path, files: dict[str, str] | None = None) -> FindingsDoc:
    checks = [check for s in load_suites([suite]) for check in s.checks]
    with Sandbox(url, files=files, timeout_s=60) as box:
        return scan(box, checks, sample=0)


def _numbers(doc: FindingsDoc) -> dict[str, tuple]:
    return {f.name: (f.status, f.failing, f.total, f.observed, f.error) for f in doc.findings}


@pytest.fixture(scope="module")
def scanned(tmp_path_factory) -> dict[tuple[str, str], tuple[dict, dict, Path]]:
    """(dataset, dirty|clean) -> (DuckDB numbers, SQLite numbers, the CSV copy)."""
    folder = tmp_path_factory.mktemp("raha")
    out = {}
    for name, text in SUITES.items():
        suite = folder / f"{name}.yaml"
        suite.write_text(text, encoding="utf-8")
        for kind in ("dirty", "clean"):
            csv_path = _copy_with_dirty_header(name, kind, folder)
            db_path = folder / f"{name}_{kind}.db"
            _load_sqlite(csv_path, name, db_path)
            on_files = _numbers(_scan("duckdb:///:memory:", suite, {name: str(csv_path)}))
            on_sqlite = _numbers(_scan(f"sqlite:///{db_path}", suite))
            out[(name, kind)] = (on_files, on_sqlite, csv_path)
    return out


@pytest.mark.parametrize("name", sorted(SUITES))
@pytest.mark.parametrize("kind", ["dirty", "clean"])
def test_files_through_duckdb_count_as_sqlite_does(scanned, name, kind):
    on_files, on_sqlite, _ = scanned[(name, kind)]
    assert on_files == on_sqlite
    assert not [n for n, v in on_files.items() if v[0] == "error"], on_files


def _csv_column(path: Path, column: str) -> list[str]:
    with path.open(newline="", encoding="utf-8") as handle:
        return [row[column] for row in csv.DictReader(handle)]


def test_the_numbers_match_the_csv_text(scanned):
    dirty, _, path = scanned[("hospital", "dirty")]
    zips = _csv_column(path, "zip")
    assert dirty["hospital.row_count"][3] == len(zips) == 1000
    assert dirty["hospital.zip.pattern"][1] == sum(1 for z in zips if z and not re.fullmatch(r"[0-9]{5}", z)) > 0
    flights, _, path = scanned[("flights", "dirty")]
    times = _csv_column(path, "act_dep_time")
    assert flights["flights.act_dep_time.not_null"][1] == times.count("") > 0
    beers, _, path = scanned[("beers", "dirty")]
    ounces = _csv_column(path, "ounces")
    assert beers["beers.ounces.pattern"][1] == sum(1 for o in ounces if o and not re.fullmatch(r"[0-9]+(\.[0-9]+)?", o))
    assert beers["beers.ounces.pattern"][1] > 0
    # the dirty files break more checks than the clean ones
    for name in SUITES:
        failing = {kind: sum(v[1] or 0 for v in scanned[(name, kind)][0].values()) for kind in ("dirty", "clean")}
        assert failing["dirty"] > failing["clean"], (name, failing)


def test_scan_file_on_the_command_line_gives_the_same_findings(scanned, run_cli, tmp_path):
    on_files, _, csv_path = scanned[("beers", "dirty")]
    suite = tmp_path / "beers.yaml"
    suite.write_text(SUITES["beers"], encoding="utf-8")
    result = run_cli("scan", "--file", f"beers={csv_path}", "--checks", str(suite), "--sample", "0", "--json",
                     "--out", str(tmp_path / "out"))
    assert result.returncode == 1, result.stderr  # dirty data: checks fail
    doc = FindingsDoc.validate(json.loads(result.stdout))
    assert _numbers(doc) == on_files
