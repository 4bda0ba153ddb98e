"""Chinook (shared/datasets/chinook) is a clean baseline: checks/chinook.yaml must pass whole on it.

The SQLite file is copied to tmp_path first (shared/ is never touched). The PostgreSQL script is loaded
with psql into a fresh database from ``make_database``, minus its own DROP/CREATE DATABASE and ``\\c``
lines. That script names everything in snake_case (``invoice_line.unit_price``) where the SQLite file
uses PascalCase (``InvoiceLine.UnitPrice``); since our identifiers are always quoted exactly as written,
the PostgreSQL run uses a variant of the suite with every identifier renamed.
"""

from __future__ import annotations

import os
import re
import shutil
import sqlite3
import subprocess
from contextlib import closing
from pathlib import Path
from typing import Any

import pytest
import yaml
from sqlalchemy.engine import make_url

from watchdog.findings import FindingsDoc
from watchdog.sandbox import Sandbox
from watchdog.scan.scanner import scan
from watchdog.scan.suites import load_suite

REPO = Path(__file__).resolve().parent.parent
CHINOOK = REPO.parent / "shared" / "datasets" / "chinook"
SUITE = REPO / "checks" / "chinook.yaml"
TABLES = ["Album", "Artist", "Customer", "Employee", "Genre", "Invoice", "InvoiceLine", "MediaType", "Playlist",
          "PlaylistTrack", "Track"]
#: the 11 foreign keys declared in the Chinook schema, as (table, column, referenced table.column)
FOREIGN_KEYS = {
    ("Album", "ArtistId", "Artist.ArtistId"),
    ("Customer", "SupportRepId", "Employee.EmployeeId"),
    ("Employee", "ReportsTo", "Employee.EmployeeId"),
    ("Invoice", "CustomerId", "Customer.CustomerId"),
    ("InvoiceLine", "InvoiceId", "Invoice.InvoiceId"),
    ("InvoiceLine", "TrackId", "Track.TrackId"),
    ("PlaylistTrack", "PlaylistId", "Playlist.PlaylistId"),
    ("PlaylistTrack", "TrackId", "Track.TrackId"),
    ("Track", "AlbumId", "Album.AlbumId"),
    ("Track", "GenreId", "Genre.GenreId"),
    ("Track", "MediaTypeId", "MediaType.MediaTypeId"),
}
PRIMARY_KEYS = {"Album": ["AlbumId"], "Artist": ["ArtistId"], "Customer": ["CustomerId"], "Employee": ["EmployeeId"],
                "Genre": ["GenreId"], "Invoice": ["InvoiceId"], "InvoiceLine": ["InvoiceLineId"],
                "MediaType": ["MediaTypeId"], "Playlist": ["PlaylistId"], "PlaylistTrack": ["PlaylistId", "TrackId"],
                "Track": ["TrackId"]}
#: the script's lines that would leave our fresh database (it drops/creates "chinook" and connects to it)
DATABASE_LEVEL = re.compile(r"^\s*(DROP DATABASE|CREATE DATABASE|\\c(onnect)?\s)", re.IGNORECASE)


def snake(name: str) -> str:
    """PascalCase SQLite identifier -> the PostgreSQL script's snake_case (InvoiceLineId -> invoice_line_id)."""
    return re.sub(r"(?<!^)(?=[A-Z])", "_", name).lower()


def snake_suite(data: dict[str, Any]) -> dict[str, Any]:
    """The suite with every table and column renamed for the PostgreSQL script."""
    renamed: dict[str, list[Any]] = {}
    for table, entries in data["tables"].items():
        out = []
        for entry in entries:
            entry = dict(entry)
            kind = next(k for k in entry if k not in ("name", "description", "severity"))
            value = entry[kind]
            if isinstance(value, str):
                value = snake(value)
            elif isinstance(value, list):
                value = [snake(v) for v in value]
            elif isinstance(value, dict):
                value = dict(value)
                if "column" in value:
                    col = value["column"]
                    value["column"] = [snake(c) for c in col] if isinstance(col, list) else snake(col)
                if "references" in value:
                    value["references"] = ".".join(snake(p) for p in value["references"].split("."))
            entry[kind] = value
            out.append(entry)
        renamed[snake(table)] = out
    return {"tables": renamed}


def postgres_script(target: Path) -> Path:
    """The published script without its database-level statements, written to ``target``."""
    text = (CHINOOK / "Chinook_PostgreSql.sql").read_text(encoding="utf-8")
    kept = [line for line in text.splitlines() if not DATABASE_LEVEL.match(line)]
    target.write_text("\n".join(kept) + "\n", encoding="utf-8")
    return target


def load_with_psql(url: str, script: Path) -> None:
    parsed = make_url(url)
    env = {**os.environ, "PGCLIENTENCODING": "UTF8"}
    if parsed.password:
        env["PGPASSWORD"] = str(parsed.password)
    done = subprocess.run(
        ["psql", "-X", "-q", "-v", "ON_ERROR_STOP=1", "-h", parsed.host or "127.0.0.1", "-p", str(parsed.port or 5432),
         "-U", parsed.username or "postgres", "-d", parsed.database or "", "-f", str(script)],
        capture_output=True, text=True, env=env, timeout=300,
    )
    assert done.returncode == 0, f"psql failed loading the Chinook script:\n{done.stderr[-2000:]}"


def run_suite(url: str, suite_path: Path) -> FindingsDoc:
    suite = load_suite(suite_path)
    with Sandbox(url) as box:
        return scan(box, suite.checks, suites=[str(suite_path)])


def assert_all_passed(doc: FindingsDoc, expected_checks: int) -> None:
    problems = [f"{f.name}: {f.status} failing={f.failing} observed={f.observed} error={f.error}"
                for f in doc.findings if f.status != "pass"]
    assert doc.error is None
    assert problems == []
    assert doc.summary.checks == expected_checks == len(doc.findings)
    assert doc.summary.passed == expected_checks
    assert (doc.summary.failed, doc.summary.warned, doc.summary.errors) == (0, 0, 0)
    row_level = [f for f in doc.findings if f.failing is not None]
    assert row_level and all(f.failing == 0 for f in row_level)


@pytest.fixture(scope="module")
def suite_entries() -> dict[str, Any]:
    return yaml.safe_load(SUITE.read_text(encoding="utf-8"))


def test_suite_covers_every_table_primary_key_and_foreign_key(suite_entries):
    checks = load_suite(SUITE).checks
    assert sorted(suite_entries["tables"]) == sorted(TABLES)
    fks = {(c.table, c.column, c.options.references) for c in checks if c.kind == "foreign_key"}
    assert fks == FOREIGN_KEYS
    for table, key in PRIMARY_KEYS.items():
        not_null = {c.column for c in checks if c.kind == "not_null" and c.table == table}
        assert set(key) <= not_null, f"{table}: primary key columns must be checked not_null"
        uniques = [list(c.key_columns) for c in checks if c.kind == "unique" and c.table == table]
        assert key in uniques, f"{table}: primary key {key} must be checked unique"
    assert {c.table for c in checks if c.kind == "row_count"} == set(TABLES)
    assert any(c.kind == "accepted_values" for c in checks) and any(c.kind == "range" for c in checks)


def test_suite_passes_whole_on_the_sqlite_baseline(tmp_path):
    copy = tmp_path / "chinook.sqlite"
    shutil.copyfile(CHINOOK / "Chinook_Sqlite.sqlite", copy)
    before = (CHINOOK / "Chinook_Sqlite.sqlite").stat().st_mtime_ns
    doc = run_suite(f"sqlite:///{copy}", SUITE)
    assert_all_passed(doc, len(load_suite(SUITE).checks))
    assert (CHINOOK / "Chinook_Sqlite.sqlite").stat().st_mtime_ns == before


def test_snake_case_names_match_the_postgres_script():
    script = (CHINOOK / "Chinook_PostgreSql.sql").read_text(encoding="utf-8")
    created = set(re.findall(r"^CREATE TABLE (\w+)", script, re.MULTILINE))
    assert created == {snake(t) for t in TABLES}
    assert snake("InvoiceLineId") == "invoice_line_id" and snake("SupportRepId") == "support_rep_id"


def test_suite_passes_whole_on_the_postgres_baseline(tmp_path, make_database, suite_entries):
    db = make_database("postgresql")
    load_with_psql(db.url, postgres_script(tmp_path / "chinook_pg.sql"))
    with closing(sqlite3.connect(f"file:{CHINOOK / 'Chinook_Sqlite.sqlite'}?mode=ro", uri=True)) as lite:
        for table in TABLES:  # the same data as the SQLite file, so the exact row_count bounds hold on both
            expected = lite.execute(f'SELECT count(*) FROM "{table}"').fetchone()[0]
            assert db.scalar(f"SELECT count(*) FROM {snake(table)}") == expected, table
    pg_suite = tmp_path / "chinook_postgresql.yaml"
    pg_suite.write_text(yaml.safe_dump(snake_suite(suite_entries), sort_keys=False, allow_unicode=True),
                        encoding="utf-8")
    doc = run_suite(db.url, pg_suite)
    assert_all_passed(doc, len(load_suite(SUITE).checks))
    assert {f.table for f in doc.findings} == {snake(t) for t in TABLES}


def test_a_planted_orphan_and_duplicate_are_caught_on_a_copy(tmp_path):
    """The suite is not vacuous: break the copy and the matching checks fail (and only those)."""
    copy = tmp_path / "chinook.sqlite"
    shutil.copyfile(CHINOOK / "Chinook_Sqlite.sqlite", copy)
    with closing(sqlite3.connect(copy)) as conn:
        conn.execute("PRAGMA foreign_keys = OFF")
        conn.execute('UPDATE "Track" SET "GenreId" = 999 WHERE "TrackId" = 1')
        conn.execute('UPDATE "Customer" SET "Email" = (SELECT "Email" FROM "Customer" WHERE "CustomerId" = 2) '
                     'WHERE "CustomerId" = 1')
        conn.commit()
    doc = run_suite(f"sqlite:///{copy}", SUITE)
    failed = {f.name: f.failing for f in doc.findings if f.status != "pass"}
    assert failed == {"Track.GenreId.foreign_key": 1, "Customer.Email.unique": 2}
