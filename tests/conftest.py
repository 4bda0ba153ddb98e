"""Shared fixtures: real databases of each kind, and the CLI runner.

Markers ``postgres``, ``mariadb``, ``smtp`` and ``spark`` are put on each test by what it uses (its parameters, its
own source and its fixtures' sources), so ``pytest -m "not postgres and not mariadb"`` runs the rest on a
machine without those servers.
"""

from __future__ import annotations

import inspect
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import hypothesis  # noqa: F401 - imported (and assertion-rewritten) at start, not by its plugin's summary hook:
import pytest  # CPython 3.11.7 can fail that late rewrite with "AST constructor recursion depth mismatch"

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


@pytest.fixture(scope="session")
def spark_admin_url(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """An admin ``hive://`` URL of a Spark Thrift server: ONE server per test session, started on first use
    from the pyspark package (tests/spark_server.py) and stopped at the end, or $WATCHDOG_TEST_SPARK_URL."""
    from tests.spark_server import SPARK_URL_ENV, ThriftServer

    if os.environ.get(SPARK_URL_ENV):
        yield os.environ[SPARK_URL_ENV]
        return
    with ThriftServer(tmp_path_factory.mktemp("spark_thrift")) as server:
        yield server.url


@pytest.fixture
def run_cli(tmp_path: Path):
    """Run the installed ``watchdog`` command in a subprocess; returns CompletedProcess (text)."""

    def run(*args: str, env: dict[str, str] | None = None, timeout: float = 120) -> subprocess.CompletedProcess:
        full_env = {**os.environ, **(env or {})}
        return subprocess.run([sys.executable, "-m", "watchdog", *args], capture_output=True, text=True,
                              timeout=timeout, env=full_env, cwd=tmp_path)

    return run


#: marker -> what in a test's parameters or source means it needs that server
_NEEDS = {
    "postgres": ("postgresql", "postgres", "POSTGRES"),
    "mariadb": ("mariadb", "MARIADB", "mysql+pymysql"),
    "smtp": ("SmtpSink", "smtp_sink"),
    "spark": ("spark_admin_url", "spark_db", "hive://"),
}


def _source(func) -> str:
    try:
        return inspect.getsource(func)
    except (OSError, TypeError):
        return ""


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    for item in items:
        params = getattr(getattr(item, "callspec", None), "params", {})
        texts = [str(v) for v in params.values()]
        texts.append(_source(getattr(item, "function", None)))
        info = getattr(item, "_fixtureinfo", None)
        for defs in (info.name2fixturedefs.values() if info else ()):
            texts.extend(_source(d.func) for d in defs if d.func.__module__.startswith("tests"))
        text = "\n".join(texts)
        for marker, words in _NEEDS.items():
            if any(word in text for word in words):
                item.add_marker(getattr(pytest.mark, marker))


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption("--update-golden", action="store_true", default=False,
                     help="rewrite the golden SQL files (tests/golden/) instead of comparing them")


@pytest.fixture
def generated_database(make_database, tmp_path: Path):
    """A factory: ``generated_database(seed, kind="sqlite", **generate_options)`` loads bench/dbgen.py's random
    database of that seed into a fresh database of ``kind`` and returns ``Generated`` (url, suite YAML path,
    truth dict, the GeneratedDatabase); ``declare=True`` writes the table-options form of the suite."""
    from tests.generated import load_generated

    def make(seed: int, kind: str = "sqlite", *, declare: bool = False, **options):
        return load_generated(make_database(kind), tmp_path / "generated", seed, declare=declare, **options)

    return make


@pytest.fixture(autouse=True)
def _secrets_registered_by_a_test_stay_in_it() -> Iterator[None]:
    """The process keeps every secret it has seen (and masks it from then on): a short token one test registers
    must not mask text in the next test's files (a webhook's ``token=abc`` inside a run id ``…-abc123``)."""
    from watchdog import redact

    before = set(redact._secrets)
    yield
    redact._secrets.intersection_update(before)
