"""The read-only sandbox under attack, on real SQLite, PostgreSQL and MariaDB databases.

Every hostile statement of the corpus in ``tests/attacks/*.yaml`` runs through a ``Sandbox``
(``timeout_s=1``) against one loaded database per kind. For each case the test asserts that

* the parser refuses it (``expect: refused``, the default), or the parser lets it through and it
  fails or returns harmlessly (``expect: harmless``), always within ``timeout_s + 1`` seconds and
  with nothing but a :class:`SandboxError` subclass;
* afterwards nothing changed: SQLite's file bytes (and no -wal/-journal/-shm or other new file);
  on PostgreSQL and MariaDB a checksum of every table and sequence, the catalog (objects,
  routines, triggers, views, roles/users, grants, plugins, large objects), server, database and
  per-role settings (PostgreSQL: as a fresh admin connection sees them; MariaDB: every global
  variable), locks, open transactions and running statements of other sessions, prepared and XA
  transactions, replication slots, files under ``/tmp`` and in MariaDB's schema directory;
* the sandbox's own pooled session carries no state over (advisory/named locks, LISTEN,
  prepared statements, user variables, attached databases, temporary objects), and it still
  answers a plain read.

The legitimate-read corpus (``legit.yaml``) must pass with its exact rows.

The helpers here (``Target``, ``build_target``, ``load_cases``) are also used by the fuzz test.
"""

from __future__ import annotations

import glob
import hashlib
import os
import time
import uuid
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
import sqlalchemy as sa
import yaml
from sqlalchemy.pool import NullPool

from tests.dbs import KINDS, TestDatabase, create_database
from watchdog.errors import QueryRefused, SandboxError
from watchdog.sandbox import Sandbox

CORPUS = Path(__file__).parent / "attacks"
ATTACK_FILES = ("writes.yaml", "tricks.yaml", "sqlite.yaml", "postgres.yaml", "mysql.yaml", "exhaustion.yaml")
LEGIT_FILE = "legit.yaml"

TIMEOUT_S = 1.0          # every attack runs with this time limit ...
GRACE_S = 1.0            # ... and must be over (refused, failed, cancelled or returned) within TIMEOUT_S + GRACE_S
MAX_ROWS = 200
MAX_BYTES = 1_000_000
#: how long the server may take to finish cancelling a statement the sandbox gave up on
SETTLE_S = 5.0
TMP_PLACEHOLDER = "__TMP__"
#: every lock name the corpus uses on MariaDB (GET_LOCK), checked from the outside
MYSQL_LOCK_NAMES = ("wd_attack",)

WORDS = ["apple", "avocado", "banana", "cherry", "date", "elderberry", "fig", "grape", "kiwi", "lemon"]
ODD_TABLE = "Order Lines; DELETE"
ODD_COLUMNS = {"select": "int", "drop; delete": "text", "ünï": "text"}
ODD_ROWS = [(1, "a;b", "x"), (2, "--", "y")]


# ---------------------------------------------------------------- the corpus


@dataclass(frozen=True)
class Case:
    id: str
    sql: str
    dialects: tuple[str, ...]
    why: str = ""
    expect: str = "refused"
    rows: list[list[Any]] | None = None
    source: str = ""


def load_cases(*names: str) -> list[Case]:
    cases: list[Case] = []
    for name in names:
        entries = yaml.safe_load((CORPUS / name).read_text(encoding="utf-8"))
        for entry in entries:
            unknown = set(entry) - {"id", "sql", "dialects", "why", "expect", "rows"}
            assert not unknown, f"{name}: {entry.get('id')}: unknown keys {unknown}"
            cases.append(Case(id=entry["id"], sql=entry["sql"], dialects=tuple(entry["dialects"]),
                              why=entry.get("why", ""), expect=entry.get("expect", "refused"),
                              rows=entry.get("rows"), source=name))
    return cases


ATTACKS = load_cases(*ATTACK_FILES)
LEGIT = load_cases(LEGIT_FILE)


def test_the_corpus_is_well_formed():
    ids = [case.id for case in ATTACKS + LEGIT]
    assert len(ids) == len(set(ids)), sorted({i for i in ids if ids.count(i) > 1})
    for case in ATTACKS + LEGIT:
        assert case.sql.strip() and case.dialects, case.id
        assert set(case.dialects) <= set(KINDS), case.id
        assert case.expect in ("refused", "harmless"), case.id
    for case in ATTACKS:
        assert case.why, f"{case.id}: say why it is dangerous"
    assert len(ATTACKS) >= 100
    per_kind = {kind: sum(kind in case.dialects for case in ATTACKS) for kind in KINDS}
    assert min(per_kind.values()) >= 60, per_kind


# ---------------------------------------------------------------- one loaded database per kind


@dataclass
class Target:
    """A loaded database, a sandbox on it, and the state nothing may change."""

    kind: str
    db: TestDatabase
    sandbox: Sandbox
    tmp_prefix: str
    directory: Path
    baseline: dict[str, Any] = field(default_factory=dict)
    session_baseline: Any = None
    _fresh: sa.Engine | None = None

    def sql(self, text: str) -> str:
        return text.replace(TMP_PLACEHOLDER, self.tmp_prefix)

    # ---- what must never change

    def state(self) -> dict[str, Any]:
        state: dict[str, Any] = {"tmp files": sorted(glob.glob(self.tmp_prefix + "*"))}
        if self.kind == "sqlite":
            state.update(self._sqlite_state())
        else:
            # PostgreSQL: a fresh admin connection each time sees server, database and role settings
            # as a new session would
            with self.fresh.connect() as conn:
                state.update(self._postgres_state(conn) if self.kind == "postgresql" else self._mysql_state(conn))
        return state

    @property
    def fresh(self) -> sa.Engine:
        """PostgreSQL: a new connection each time. MariaDB: pooled (what it reads is global anyway, and
        connecting costs 50 ms there)."""
        if self._fresh is None:
            self._fresh = (sa.create_engine(self.db.url, poolclass=NullPool) if self.kind == "postgresql"
                           else sa.create_engine(self.db.url, pool_size=1))
        return self._fresh

    def _sqlite_state(self) -> dict[str, Any]:
        files = {}
        for path in sorted(self.directory.iterdir()):
            files[path.name] = hashlib.sha256(path.read_bytes()).hexdigest() if path.is_file() else "dir"
        return {"files": files}

    def _postgres_state(self, conn: sa.Connection) -> dict[str, Any]:
        q = lambda sql: [tuple(r) for r in conn.exec_driver_sql(sql.replace("%", "%%")).fetchall()]  # noqa: E731
        relations = q("SELECT c.oid::regclass::text, c.relkind, coalesce(c.relacl::text, '') FROM pg_class c "
                      "JOIN pg_namespace n ON n.oid = c.relnamespace WHERE n.nspname NOT IN "
                      "('pg_catalog', 'information_schema', 'pg_toast') AND n.nspname NOT LIKE 'pg_%temp%' "
                      "ORDER BY 1")
        data = {}
        for name, relkind, _acl in relations:
            if relkind in ("r", "p", "m"):
                data[name] = q("SELECT count(*), md5(coalesce(string_agg(x::text, ',' ORDER BY x::text), '')) "
                               f"FROM {name} x")
            elif relkind == "S":
                data[name] = q(f"SELECT last_value, is_called FROM {name}")
        return {
            "relations": relations,
            "data": data,
            "catalog counts": q(
                "SELECT (SELECT count(*) FROM pg_class), (SELECT count(*) FROM pg_proc), "
                "(SELECT count(*) FROM pg_namespace), "
                "(SELECT count(*) FROM pg_type), (SELECT count(*) FROM pg_trigger), (SELECT count(*) FROM pg_rewrite), "
                "(SELECT count(*) FROM pg_attribute), (SELECT count(*) FROM pg_index), "
                "(SELECT count(*) FROM pg_description), "
                "(SELECT count(*) FROM pg_extension), (SELECT count(*) FROM pg_event_trigger), "
                "(SELECT count(*) FROM pg_publication), (SELECT count(*) FROM pg_largeobject_metadata), "
                "(SELECT count(*) FROM pg_largeobject)"),
            "roles": q("SELECT rolname, rolsuper, rolcanlogin, rolcreaterole, rolcreatedb, rolreplication, "
                       "rolbypassrls FROM pg_roles ORDER BY 1"),
            "role settings": q("SELECT setdatabase, setrole, setconfig::text FROM pg_db_role_setting ORDER BY 1, 2"),
            "settings": q("SELECT name, setting FROM pg_settings WHERE source <> 'default' ORDER BY name"),
            "config files": q("SELECT sourcefile, name, setting FROM pg_file_settings ORDER BY 1, 2"),
            "database": q("SELECT datallowconn, datconnlimit, coalesce(datacl::text, '') FROM pg_database "
                          "WHERE datname = current_database()"),
            "replication slots": q("SELECT slot_name FROM pg_replication_slots ORDER BY 1"),
            "prepared transactions": q("SELECT gid FROM pg_prepared_xacts ORDER BY 1"),
            "locks": q("SELECT l.locktype, l.mode, l.granted, coalesce(l.objid::text, ''), "
                       "coalesce(l.relation::text, '') "
                       "FROM pg_locks l WHERE l.pid <> pg_backend_pid() AND (l.database = (SELECT oid FROM pg_database "
                       "WHERE datname = current_database()) OR l.pid IN (SELECT pid FROM pg_stat_activity "
                       "WHERE datname = current_database())) ORDER BY 1, 2, 3, 4, 5"),
            "busy sessions": q("SELECT state, left(query, 100) FROM pg_stat_activity "
                               "WHERE datname = current_database() "
                               "AND pid <> pg_backend_pid() AND state IS DISTINCT FROM 'idle' ORDER BY 1, 2"),
        }

    def _mysql_state(self, conn: sa.Connection) -> dict[str, Any]:
        q = lambda sql: [tuple(r) for r in conn.exec_driver_sql(sql.replace("%", "%%")).fetchall()]  # noqa: E731
        schema = conn.exec_driver_sql("SELECT DATABASE()").scalar()
        tables = q("SELECT TABLE_NAME, TABLE_TYPE, ENGINE FROM information_schema.TABLES "
                   "WHERE TABLE_SCHEMA = DATABASE() ORDER BY 1")
        data = {}
        for name, table_type, _engine in tables:
            quoted = "`" + name.replace("`", "``") + "`"
            if table_type == "SEQUENCE":
                data[name] = q(f"SELECT * FROM {quoted}")
            elif table_type == "BASE TABLE":
                data[name] = q(f"CHECKSUM TABLE {quoted} EXTENDED")
        datadir = conn.exec_driver_sql("SELECT @@datadir").scalar()
        schema_dir = Path(datadir) / schema
        variables = dict(q("SHOW GLOBAL VARIABLES"))
        for volatile in [name for name in variables if name.startswith("gtid_")]:
            variables.pop(volatile)
        return {
            "tables": tables,
            "data": data,
            "schema files": sorted(os.listdir(schema_dir)) if os.access(schema_dir, os.R_OK) else None,
            "objects": q("SELECT (SELECT count(*) FROM information_schema.ROUTINES "
                         "WHERE ROUTINE_SCHEMA IN (DATABASE(), 'mysql')), "
                         "(SELECT count(*) FROM information_schema.TRIGGERS WHERE TRIGGER_SCHEMA = DATABASE()), "
                         "(SELECT count(*) FROM information_schema.VIEWS WHERE TABLE_SCHEMA = DATABASE()), "
                         "(SELECT count(*) FROM information_schema.EVENTS "
                         "WHERE EVENT_SCHEMA IN (DATABASE(), 'mysql')), "
                         "(SELECT count(*) FROM mysql.proc), "
                         "(SELECT count(*) FROM information_schema.STATISTICS WHERE TABLE_SCHEMA = DATABASE()), "
                         "(SELECT count(*) FROM information_schema.COLUMNS WHERE TABLE_SCHEMA = DATABASE()), "
                         "(SELECT count(*) FROM information_schema.PLUGINS WHERE PLUGIN_STATUS = 'ACTIVE'), "
                         "(SELECT count(*) FROM mysql.func)"),
            "schemata": q("SELECT SCHEMA_NAME FROM information_schema.SCHEMATA WHERE SCHEMA_NAME LIKE 'wd\\_attack%'"),
            "users": q("SELECT User, Host, Priv FROM mysql.global_priv ORDER BY 1, 2"),
            "grants": q("SELECT GRANTEE, PRIVILEGE_TYPE FROM information_schema.SCHEMA_PRIVILEGES ORDER BY 1, 2"),
            "global variables": variables,
            "named locks": q("SELECT " + ", ".join(f"IS_USED_LOCK('{n}')" for n in MYSQL_LOCK_NAMES)),
            "table locks": q(f"SHOW OPEN TABLES FROM `{schema}` WHERE In_use > 0"),
            "busy sessions": q("SELECT COMMAND, STATE, INFO FROM information_schema.PROCESSLIST WHERE DB = DATABASE() "
                               "AND ID <> CONNECTION_ID() AND COMMAND <> 'Sleep' ORDER BY 1, 2, 3"),
            "open transactions": q("SELECT trx_state, trx_query FROM information_schema.INNODB_TRX "
                                   "WHERE trx_mysql_thread_id <> CONNECTION_ID() AND trx_mysql_thread_id IN "
                                   "(SELECT ID FROM information_schema.PROCESSLIST WHERE DB = DATABASE())"),
            "xa transactions": q("XA RECOVER"),
        }

    # ---- what the sandbox's own (pooled) session carries from one query to the next

    SESSION_PROBES = {
        "sqlite": "SELECT (SELECT count(*) FROM pragma_database_list), (SELECT count(*) FROM temp.sqlite_master), "
                  "(SELECT count(*) FROM t)",
        "postgresql": "SELECT (SELECT count(*) FROM pg_listening_channels()), "
                      "(SELECT count(*) FROM pg_prepared_statements WHERE name NOT LIKE '\\_pg3\\_%'), "
                      "(SELECT count(*) FROM pg_cursors WHERE name NOT LIKE 'watchdog\\_%'), "
                      "(SELECT count(*) FROM pg_locks WHERE pid = pg_backend_pid() AND locktype = 'advisory'), "
                      "current_user, session_user, current_setting('search_path'), "
                      "current_setting('transaction_read_only'), (SELECT count(*) FROM t)",
        "mariadb": "SELECT (SELECT count(*) FROM information_schema.USER_VARIABLES), IS_USED_LOCK('wd_attack'), "
                   "CONNECTION_ID() = IS_USED_LOCK('wd_attack'), @@session.sql_mode, @@session.character_set_client, "
                   "@@tx_read_only, (SELECT count(*) FROM t)",
    }

    def session_state(self) -> Any:
        return self.sandbox.query(self.SESSION_PROBES[self.kind], timeout_s=10).rows

    def changes(self) -> dict[str, Any]:
        after = self.state()
        return {key: (self.baseline[key], after.get(key)) for key in self.baseline
                if after.get(key) != self.baseline[key]}

    def assert_unchanged(self) -> None:
        # a statement the client gave up on at deadline + grace may still be stuck on the server in
        # work it cannot cancel (one huge allocation): give the server SETTLE_S to finish cancelling it
        settle_until = time.monotonic() + SETTLE_S
        changed = self.changes()
        while changed and time.monotonic() < settle_until:
            time.sleep(0.1)
            changed = self.changes()
        assert not changed, f"the database changed: {changed}"
        assert self.session_state() == self.session_baseline, "the sandbox's session kept state"

    def close(self) -> None:
        self.sandbox.close()
        if self._fresh is not None:
            self._fresh.dispose()
        self.db.close()
        for leftover in glob.glob(self.tmp_prefix + "*"):
            os.remove(leftover)


def load_fixture(db: TestDatabase) -> None:
    """t (10 words), u (3 rows, unique index), a table and columns with odd names; a sequence and more per kind."""
    db.create_table("t", {"id": "int", "s": "text"}, list(enumerate(WORDS, start=1)))
    db.create_table("u", {"id": "int", "v": "text"}, [(1, "apple"), (2, "banana"), (3, "cherry")])
    db.run("CREATE UNIQUE INDEX u_v_uniq ON u (v)")
    db.create_table(ODD_TABLE, ODD_COLUMNS, ODD_ROWS)
    if db.kind == "postgresql":
        db.run("CREATE SEQUENCE t_seq", "CREATE TABLE w (id int DEFAULT nextval('t_seq'), s text)",
               "INSERT INTO w (id, s) VALUES (0, 'zero')", "SELECT lo_from_bytea(0, 'a large object')")
    if db.kind == "mariadb":
        db.run("CREATE SEQUENCE s_seq")


def build_target(kind: str, directory: Path, *, timeout_s: float = TIMEOUT_S, max_rows: int = MAX_ROWS,
                 max_bytes: int = MAX_BYTES) -> Target:
    db = create_database(kind, directory)
    try:
        load_fixture(db)
        db.engine.dispose()  # the admin pool holds no connection while the attacks run
        sandbox = Sandbox(db.url, timeout_s=timeout_s, max_rows=max_rows, max_bytes=max_bytes)
    except BaseException:
        db.close()
        raise
    target = Target(kind, db, sandbox, f"/tmp/wd_attack_{uuid.uuid4().hex[:10]}_", directory)
    try:
        target.baseline = target.state()
        target.session_baseline = target.session_state()
    except BaseException:
        target.close()
        raise
    return target


@pytest.fixture(scope="module")
def targets(tmp_path_factory) -> Iterator:
    """``targets(kind)``: this module's one loaded database and sandbox of that kind (built on first use)."""
    built: dict[str, Target] = {}

    def get(kind: str) -> Target:
        if kind not in built:
            built[kind] = build_target(kind, tmp_path_factory.mktemp(f"attack_{kind}"))
        return built[kind]

    yield get
    for target in built.values():
        target.close()


# ---------------------------------------------------------------- running one case


@dataclass
class Outcome:
    error: SandboxError | None
    rows: int
    truncated: bool
    elapsed: float

    @property
    def label(self) -> str:
        if self.error is None:
            return f"returned {self.rows} rows" + (" (truncated)" if self.truncated else "")
        return f"{type(self.error).__name__}: {self.error}"


def attempt(target: Target, sql: str, timeout_s: float = TIMEOUT_S) -> Outcome:
    """Run ``sql`` through the sandbox; any exception other than a SandboxError fails the test."""
    started = time.monotonic()
    try:
        result = target.sandbox.query(sql, timeout_s=timeout_s)
    except SandboxError as exc:
        return Outcome(exc, 0, False, time.monotonic() - started)
    return Outcome(None, len(result.rows), result.truncated, time.monotonic() - started)


def params(cases: list[Case]) -> list:
    return [pytest.param(kind, case, id=f"{case.id}[{kind}]")
            for kind in KINDS for case in cases if kind in case.dialects]


@pytest.mark.parametrize(("kind", "case"), params(ATTACKS))
def test_attack(targets, kind: str, case: Case):
    target = targets(kind)
    sql = target.sql(case.sql)
    if case.expect == "refused":
        with pytest.raises(QueryRefused):
            target.sandbox.vet(sql)
    else:
        target.sandbox.vet(sql)  # 'harmless' cases get past the parser: the database and the limits stop them

    outcome = attempt(target, sql)

    assert outcome.elapsed < TIMEOUT_S + GRACE_S, f"took {outcome.elapsed:.2f}s: {outcome.label}"
    if case.expect == "refused":
        assert isinstance(outcome.error, QueryRefused), outcome.label
    assert outcome.rows <= MAX_ROWS
    target.assert_unchanged()


@pytest.mark.parametrize(("kind", "case"), params(LEGIT))
def test_legitimate_read(targets, kind: str, case: Case):
    target = targets(kind)
    result = target.sandbox.query(case.sql)
    if case.rows is not None:
        assert [list(row) for row in result.rows] == case.rows
    target.assert_unchanged()
