"""Start-up shortcuts keep the sandbox's guarantees: a SQLite worker started ahead of need is the
same worker (read-only, killed when late, memory-capped), and ``watchdog scan`` loads only its own
command module."""

from __future__ import annotations

import json
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.procs import gone
from watchdog.errors import QueryError, QueryRefused, QueryTimeout
from watchdog.sandbox import Sandbox, sqlite_session


@pytest.fixture
def db(tmp_path: Path) -> Path:
    path = tmp_path / "one.db"
    with sqlite3.connect(path) as conn:
        conn.execute("CREATE TABLE t (id INTEGER, email TEXT)")
        conn.execute("INSERT INTO t VALUES (1, 'a@b.io')")
    return path


def test_a_prestarted_worker_is_taken_by_the_next_session_and_keeps_every_limit(db):
    sqlite_session.prestart_for(f"sqlite:///{db}")
    assert len(sqlite_session._SPARE) == 1
    spare = sqlite_session._SPARE[0]
    with Sandbox(f"sqlite:///{db}", timeout_s=0.5) as box:
        assert box.query("SELECT count(*) FROM t").scalar() == 1
        assert sqlite_session._SPARE == []  # taken, not a second process
        assert box._session._worker is spare
        with pytest.raises(QueryRefused):  # still read-only inside the worker (the parser is bypassed here)
            box._session.run("DELETE FROM t", max_rows=10, max_bytes=1000, timeout_s=1)
        started = time.monotonic()
        with pytest.raises(QueryTimeout):  # one uninterruptible call: the worker is killed at the deadline
            box._session.run(f"SELECT '{'a' * 40}!' REGEXP '^(a+)+$'", max_rows=1, max_bytes=1000, timeout_s=0.3)
        assert time.monotonic() - started < 5
        assert not spare.alive()
        assert box.query("SELECT count(*) FROM t").scalar() == 1  # a fresh worker for the next statement


def test_a_prestarted_worker_has_its_memory_capped(db):
    sqlite_session.prestart_for(f"sqlite:///{db}")
    with Sandbox(f"sqlite:///{db}", timeout_s=20) as box:
        box.query("SELECT 1")
        assert sqlite_session._SPARE == []
        # 2 GB in one value: past the worker's address-space cap, which stops it (not watchdog)
        with pytest.raises(QueryError, match="out of memory"):
            box._session.run("SELECT length(printf('%!.*c', 2000000000, 'x'))", max_rows=1,
                             max_bytes=10_000_000_000, timeout_s=20)


def test_no_worker_is_prestarted_for_a_missing_file_or_another_database(tmp_path):
    sqlite_session.prestart_for(f"sqlite:///{tmp_path / 'missing.db'}")
    sqlite_session.prestart_for("postgresql://u@127.0.0.1/x")
    sqlite_session.prestart_for(f"sqlite:///{tmp_path / 'x.db'}?mode=ro")
    assert sqlite_session._SPARE == []


def test_a_spare_worker_never_taken_is_killed_when_the_process_exits(db):
    code = ("import sys; from watchdog.sandbox import sqlite_session as s; s.prestart_for(sys.argv[1]); "
            "print(s._SPARE[0]._proc.pid, flush=True)")
    run = subprocess.run([sys.executable, "-c", code, f"sqlite:///{db}"], capture_output=True, text=True,
                         timeout=60)
    assert run.returncode == 0, run.stderr
    pid = int(run.stdout.strip())
    assert gone([pid])


#: what ``watchdog scan`` must not load: other commands, the LLM stack, SQLAlchemy, rich, the configuration model
#: (a ``--db URL`` needs no config file), pydantic (check options, findings and the database are plain dataclasses),
#: Jinja2 and markupsafe (report.md is built in Python), the anomaly detector and the check types a suite does not use
SCAN_NEVER_LOADS = ("watchdog.cli.", "watchdog.profile", "watchdog.daemon", "watchdog.mcp", "watchdog.graph",
                    "sqlalchemy", "rich", "langchain", "watchdog.settings", "pydantic", "jinja2", "markupsafe",
                    "watchdog.anomaly_detector", "watchdog.scan.check_types.schema",
                    "watchdog.scan.check_types.custom_sql", "watchdog.scan.check_types.functional_dependency")
#: the scan path's own modules, each importing no pydantic on its own
NO_PYDANTIC = ("watchdog.findings", "watchdog.database", "watchdog.defaults", "watchdog.cli.scan", "watchdog.cli.app",
               "watchdog.cli.console", "watchdog.run.filing", "watchdog.run.safe_write", "watchdog.sandbox.sandbox")


def test_scan_imports_neither_other_commands_nor_the_llm_stack(db, tmp_path):
    suite = tmp_path / "one.yaml"
    suite.write_text("tables:\n  t:\n    - not_null: email\n    - unique: id\n", encoding="utf-8")
    code = ("import sys; from watchdog.cli.main import main\n"
            "try:\n    main(sys.argv[1:])\nexcept SystemExit:\n    pass\n"
            f"bad = sorted(m for m in sys.modules if m.startswith({SCAN_NEVER_LOADS!r}) "
            "and m not in ('watchdog.cli.main', 'watchdog.cli.app', 'watchdog.cli.console', 'watchdog.cli.scan'))\n"
            "print('LOADED', bad, file=sys.stderr)")
    run = subprocess.run([sys.executable, "-c", code, "scan", "--db", f"sqlite:///{db}", "--checks", str(suite),
                          "--out", str(tmp_path / "out"), "--json"], capture_output=True, text=True, timeout=120)
    assert "LOADED []" in run.stderr, run.stderr[-2000:]
    assert '"checks": 2' in run.stdout


def test_findings_and_the_database_config_import_no_pydantic():
    code = (f"import sys, importlib\nfor m in {NO_PYDANTIC!r}: importlib.import_module(m)\n"
            "print('LOADED', sorted(m for m in sys.modules if m.startswith(('pydantic', 'watchdog.settings'))))")
    run = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert "LOADED []" in run.stdout, run.stdout + run.stderr[-2000:]


PG_COLUMNS = {
    "b": "boolean", "i2": "smallint", "i4": "integer", "i8": "bigint", "f4": "real", "f8": "double precision",
    "n": "numeric", "n12_2": "numeric(12, 2)", "t": "text", "v": "varchar", "v20": "varchar(20)", "c3": "char(3)",
    "d": "date", "ts": "timestamp", "tstz": "timestamptz", "tm": "time", "tmtz": "timetz", "iv": "interval",
    "j": "json", "jb": "jsonb", "u": "uuid", "by": "bytea", "Mixed Case": "integer",
}


def test_postgres_column_types_read_directly_match_sqlalchemys_reading(make_database):
    """The catalogue read without SQLAlchemy (watchdog/sandbox/column_kinds.py) gives every kind and declared
    name SQLAlchemy's inspector gives; a type it does not know hands the table to the inspector."""
    from watchdog.sandbox import catalog, column_kinds

    db = make_database("postgresql")
    cols = ", ".join(f'"{name}" {kind}' for name, kind in PG_COLUMNS.items())
    db.run(f"CREATE TABLE wide ({cols})", "CREATE SCHEMA other", "CREATE TABLE other.\"Narrow\" (x integer)",
           "CREATE TYPE mood AS ENUM ('ok', 'sad')", "CREATE TABLE odd (m mood, a integer[], p inet)")
    with Sandbox(db.url) as box:
        session = box._session
        for table in (["wide"], ["public", "wide"], ["other", "Narrow"]):
            direct = column_kinds.postgres(session, table, timeout_s=10)
            assert direct is not None and direct == catalog.column_types(session, table), table
        assert len(column_kinds.postgres(session, ["wide"], timeout_s=10) or {}) == len(PG_COLUMNS)
        assert column_kinds.postgres(session, ["missing"], timeout_s=10) == {} == catalog.column_types(
            session, ["missing"])
        assert column_kinds.postgres(session, ["odd"], timeout_s=10) is None
        assert box.column_types(["odd"]) == catalog.column_types(session, ["odd"])  # through the inspector


SQLITE_TYPES = ["INTEGER", "int", "BIGINT", "SMALLINT", "NUMERIC", "NUMERIC(10,2)", "DECIMAL(8, 3)", "DECIMAL(5)",
                "FLOAT", "REAL", "DOUBLE", "BOOL", "BOOLEAN", "CHAR(3)", "VARCHAR(20)", "varchar", "NVARCHAR(9)",
                "NCHAR", "TEXT", "DATE", "DATETIME", "TIME", "TIMESTAMP", ""]
SQLITE_ODD = ["DOUBLE PRECISION", "VARCHAR (20)", "INTEGER(5)", "BLOB", "POINT", "STRING", "JSON", "TEXT(10)",
              "FLOAT(8)", "MEDIUMINT"]


@pytest.mark.parametrize("odd", [None, *SQLITE_ODD])
def test_sqlite_column_types_read_directly_match_sqlalchemys_reading(tmp_path, odd):
    from watchdog.sandbox import catalog, column_kinds

    path = tmp_path / "types.db"
    declared = SQLITE_TYPES + ([odd] if odd is not None else [])
    with sqlite3.connect(path) as conn:
        conn.execute("CREATE TABLE wide (" + ", ".join(f'"c{i}" {t}' for i, t in enumerate(declared)) + ")")
        conn.execute('CREATE TABLE "Mixed Case" (x INTEGER, y INTEGER GENERATED ALWAYS AS (x + 1))')
    with Sandbox(f"sqlite:///{path}") as box:
        session = box._session
        direct = column_kinds.sqlite(session, ["wide"], timeout_s=10)
        expected = catalog.column_types(session, ["wide"])
        if odd is None:
            assert direct == expected and len(direct) == len(SQLITE_TYPES)
            assert column_kinds.sqlite(session, ["main", "wide"], timeout_s=10) == expected
            assert column_kinds.sqlite(session, ["missing"], timeout_s=10) == {} == catalog.column_types(
                session, ["missing"])
            assert column_kinds.sqlite(session, ["Mixed Case"], timeout_s=10) is None  # generated: the inspector's
        else:  # read directly only when it reads as SQLAlchemy does
            assert direct is None or direct == expected
        assert box.column_types(["wide"]) == expected


def test_the_program_exits_quickly_but_completely(db, tmp_path):
    """``watchdog`` (watchdog.cli:run) skips the interpreter's module teardown, not what matters: the exit
    status, every byte of stdout through a pipe, the atexit handlers (a worker still running is killed)."""
    suite = tmp_path / "wide.yaml"  # a failing check per column name: a findings JSON well past a pipe's buffer
    suite.write_text("tables:\n  t:\n" + "".join(f"    - not_null: id\n      name: check_{i:03d}\n" for i in range(400))
                     + "    - not_null: email\n", encoding="utf-8")
    run = subprocess.run([sys.executable, "-m", "watchdog", "scan", "--db", f"sqlite:///{db}", "--checks", str(suite),
                          "--out", str(tmp_path / "out"), "--json"], capture_output=True, text=True, timeout=120)
    assert run.returncode == 0, run.stderr
    doc = json.loads(run.stdout)  # complete: the JSON parses
    assert len(run.stdout) > 65536 and doc["summary"]["checks"] == 401
    code = ("import sys; from watchdog.sandbox import sqlite_session as s; s.prestart_for(sys.argv[1]); "
            "print(s._SPARE[0]._proc.pid, flush=True); sys.argv[1:] = ['--version']; "
            "from watchdog.cli import run; run()")
    done = subprocess.run([sys.executable, "-c", code, f"sqlite:///{db}"], capture_output=True, text=True, timeout=60)
    assert done.returncode == 0 and done.stdout.splitlines()[1].startswith("watchdog, version")
    pid = int(done.stdout.splitlines()[0])
    assert gone([pid])
    bad = subprocess.run([sys.executable, "-m", "watchdog", "scan", "--db", f"sqlite:///{db}", "--checks",
                          str(tmp_path / "missing.yaml"), "--out", str(tmp_path / "o2")],
                         capture_output=True, text=True, timeout=60)
    assert bad.returncode == 3 and bad.stderr.startswith("error:")
