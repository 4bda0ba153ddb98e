"""Shared fixtures: real databases of each kind, and the CLI runner."""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.dbs import KINDS, TestDatabase, create_database

REPO = Path(__file__).resolve().parent.parent
SHARED = REPO.parent / "shared"


@pytest.fixture
def make_database(tmp_path: Path) -> Iterator:
    """A factory: ``make_database("postgresql")`` returns a fresh, empty TestDatabase (dropped afterwards)."""
    made: list[TestDatabase] = []

    def make(kind: str) -> TestDatabase:
        db = create_database(kind, tmp_path)
        made.append(db)
        return db

    yield make
    for db in made:
        db.close()


@pytest.fixture(params=KINDS)
def database(request: pytest.FixtureRequest, make_database) -> TestDatabase:
    """A fresh empty database, once for each of SQLite, PostgreSQL and MariaDB."""
    return make_database(request.param)


@pytest.fixture
def run_cli(tmp_path: Path):
    """Run the installed ``watchdog`` command in a subprocess; returns CompletedProcess (text)."""

    def run(*args: str, env: dict[str, str] | None = None, timeout: float = 120) -> subprocess.CompletedProcess:
        full_env = {**os.environ, **(env or {})}
        return subprocess.run([sys.executable, "-m", "watchdog", *args], capture_output=True, text=True,
                              timeout=timeout, env=full_env, cwd=tmp_path)

    return run
