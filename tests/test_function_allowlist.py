"""The function allowlist against each server's own catalogue of functions.

Each database lists the functions it has: PostgreSQL ``pg_proc`` (with volatility and EXECUTE
grants), MariaDB ``information_schema.SQL_FUNCTIONS`` and its help tables (with categories),
SQLite ``pragma_function_list`` (with the deterministic and direct-only flags). For every name the
server lists and the allowlist does not hold, the parser must refuse every way of calling it; and no
volatile or admin function may be on the allowlist unless it was reviewed one by one
(``VOLATILE_ALLOWED``: random numbers, the clock, relation sizes, own-session information). A new
server version that adds an alias therefore fails here instead of opening a hole.
"""

from __future__ import annotations

import re
import sqlite3

import pytest
import sqlalchemy as sa
from sqlglot import exp

from tests.dbs import TestDatabase
from watchdog.errors import QueryRefused, SandboxError
from watchdog.sandbox import Sandbox
from watchdog.sandbox.functions import VOLATILE_ALLOWED, allowed_functions
from watchdog.sandbox.policy import ReadOnlyPolicy

#: the ways a statement can call a function, all of which must be refused for a name not allowed
CALL_FORMS = ("SELECT {n}()", "SELECT {n}(1)", "SELECT {n}('a', 1)", "SELECT * FROM {n}(1) AS f",
              "SELECT {N}(1)", "SELECT 1 WHERE {n}(1, 2) IS NULL")

#: MariaDB functions its manual documents as not deterministic, or as reading or changing server
#: or session state, that are not in SQL_FUNCTIONS (grammar-level) or help categories
MARIADB_DOCUMENTED_RISKY = frozenset({
    "sleep", "benchmark", "get_lock", "release_lock", "release_all_locks", "is_free_lock", "is_used_lock",
    "load_file", "last_insert_id", "row_count", "found_rows", "nextval", "setval", "lastval", "uuid",
    "uuid_short", "sys_guid", "rand", "random_bytes", "master_pos_wait", "master_gtid_wait", "source_pos_wait",
    "binlog_gtid_pos", "wsrep_last_written_gtid", "wsrep_last_seen_gtid", "wsrep_sync_wait_upto_gtid",
    "connection_id", "sysdate", "now", "password", "old_password", "encrypt", "des_encrypt", "des_decrypt",
})
MARIADB_RISKY_CATEGORIES = ("Information Functions", "Miscellaneous Functions", "Administration", "Plugins",
                            "Transactions", "Account Management")

SQLITE_DETERMINISTIC = 0x800
SQLITE_DIRECTONLY = 0x80000


def _refused_everywhere(policy: ReadOnlyPolicy, name: str) -> list[str]:
    """The call forms of ``name`` the policy lets through (should be none)."""
    passed = []
    for form in CALL_FORMS:
        sql = form.format(n=name, N=name.upper())
        try:
            policy.vet(sql)
        except QueryRefused:
            continue
        passed.append(sql)
    return passed


def _postgres_catalogue(db: TestDatabase) -> dict[str, tuple[bool, bool]]:
    """name -> (volatile, admin): admin = EXECUTE not granted to PUBLIC."""
    with db.engine.connect() as conn:
        rows = conn.execute(sa.text(
            "SELECT p.proname, bool_or(p.provolatile = 'v'), "
            "bool_or(p.proacl IS NOT NULL AND NOT EXISTS (SELECT 1 FROM aclexplode(p.proacl) a "
            "WHERE a.grantee = 0 AND a.privilege_type = 'EXECUTE')) "
            "FROM pg_proc p GROUP BY p.proname")).all()
    return {str(r[0]): (bool(r[1]), bool(r[2])) for r in rows}


def _mariadb_catalogue(db: TestDatabase) -> dict[str, bool]:
    """name -> risky (a documented volatile/state function, or listed in a state/admin help category)."""
    with db.engine.connect() as conn:
        listed = conn.execute(sa.text("SELECT FUNCTION FROM information_schema.SQL_FUNCTIONS"))
        names = {str(r[0]).lower() for r in listed}
        help_rows = conn.execute(sa.text(
            "SELECT t.name, c.name FROM mysql.help_topic t JOIN mysql.help_category c "
            "ON c.help_category_id = t.help_category_id")).all()
    risky = set(MARIADB_DOCUMENTED_RISKY)
    for topic, category in help_rows:
        name = str(topic).replace("\\_", "_").lower()
        if not re.fullmatch(r"[a-z_][a-z0-9_]*", name):
            continue  # operators and statement topics ("SHOW TABLES", "||")
        if "Functions" in str(category) or "functions" in str(category) or category in MARIADB_RISKY_CATEGORIES:
            names.add(name)
        if category in MARIADB_RISKY_CATEGORIES:
            risky.add(name)
    names |= MARIADB_DOCUMENTED_RISKY
    return {name: name in risky for name in names}


def _sqlite_catalogue() -> dict[str, bool]:
    """name -> risky (a scalar not deterministic, or direct-only) for the SQLite library watchdog uses."""
    conn = sqlite3.connect(":memory:")
    try:
        rows = conn.execute("SELECT name, type, flags FROM pragma_function_list").fetchall()
    finally:
        conn.close()
    out: dict[str, bool] = {}
    for name, kind, flags in rows:
        # aggregates and window functions never carry the deterministic flag; scalars must
        risky = (kind == "s" and not flags & SQLITE_DETERMINISTIC) or bool(flags & SQLITE_DIRECTONLY)
        out[str(name).lower()] = out.get(str(name).lower(), False) or risky
    return out


def _catalogue(db: TestDatabase) -> tuple[str, dict[str, bool]]:
    if db.kind == "postgresql":
        return "postgres", {n: v or a for n, (v, a) in _postgres_catalogue(db).items()}
    if db.kind == "mariadb":
        return "mysql", _mariadb_catalogue(db)
    return "strictsqlite", _sqlite_catalogue()


def test_every_catalogue_function_not_allowed_is_refused(database: TestDatabase) -> None:
    dialect, catalogue = _catalogue(database)
    assert len(catalogue) > 100, f"the {database.kind} catalogue lists only {len(catalogue)} functions"
    allowed = allowed_functions(dialect)
    policy = ReadOnlyPolicy(dialect)
    leaks = {name: passed for name in sorted(catalogue) if name not in allowed
             and re.fullmatch(r"[a-z_][a-z0-9_$]*", name) and (passed := _refused_everywhere(policy, name))}
    assert not leaks, f"{database.kind}: functions not on the allowlist got through: {leaks}"


def test_no_volatile_or_admin_function_is_allowed_unless_reviewed(database: TestDatabase) -> None:
    dialect, catalogue = _catalogue(database)
    risky = {name for name, is_risky in catalogue.items() if is_risky}
    assert risky, f"the {database.kind} catalogue marks no function volatile or admin"
    on_list = sorted((risky & allowed_functions(dialect)) - VOLATILE_ALLOWED[dialect])
    assert not on_list, f"{database.kind}: volatile/admin functions on the allowlist: {on_list}"


@pytest.mark.parametrize("kind", ["postgresql"])
def test_postgres_admin_functions_are_never_reviewed_exceptions(kind: str, make_database) -> None:
    admin = {n for n, (_v, a) in _postgres_catalogue(make_database(kind)).items() if a}
    assert {"pg_read_file", "pg_ls_dir", "pg_stat_file", "pg_show_all_file_settings"} <= admin
    assert not admin & allowed_functions("postgres")


def test_named_hazards_are_refused_with_the_allowlist_message() -> None:
    cases = {
        "postgres": ["pg_read_file_old", "pg_read_file", "pg_read_binary_file", "pg_ls_dir", "pg_ls_logdir",
                     "pg_stat_file", "lo_import", "lo_get", "pg_show_all_file_settings", "pg_hba_file_rules",
                     "pg_ident_file_mappings", "pg_current_logfile", "set_config", "setseed",
                     "pg_advisory_lock", "pg_try_advisory_xact_lock", "nextval", "setval", "currval",
                     "pg_notify", "pg_rotate_logfile_old", "pg_stat_reset_single_function_counters",
                     "pg_terminate_backend", "txid_current", "gen_random_uuid", "dblink"],
        "mysql": ["load_file", "sleep", "benchmark", "get_lock", "release_lock", "nextval", "setval", "lastval",
                  "last_insert_id", "master_pos_wait", "uuid", "row_count", "found_rows"],
        "strictsqlite": ["load_extension", "readfile", "writefile", "edit", "changes", "total_changes",
                         "last_insert_rowid", "sqlite_compileoption_get", "fts3_tokenizer"],
    }
    for dialect, names in cases.items():
        for name in names:
            with pytest.raises(QueryRefused, match=f"function '{name}' is not allowed"):
                ReadOnlyPolicy(dialect).vet(f"SELECT {name}(1, 2)")


class _ParserOff(ReadOnlyPolicy):
    """Lets every statement through, to test the database layer alone."""

    def vet(self, sql: str) -> exp.Expression:
        return exp.Literal.number(1)


def test_sqlite_authorizer_allows_only_listed_functions_with_the_parser_off(make_database) -> None:
    db = make_database("sqlite")
    db.create_table("t", {"id": "int"}, [(1,)])
    with Sandbox(db.url, policy=_ParserOff("strictsqlite"), timeout_s=5) as box:
        assert box.query("SELECT upper('a'), length('abc'), json_extract('{\"k\": 2}', '$.k'), "
                         "'{\"k\": 3}' ->> '$.k', 'ab' LIKE 'a%'").rows == [("A", 3, 2, 3, 1)]
        for name in ("load_extension('x')", "sqlite_compileoption_get(0)", "changes()", "last_insert_rowid()",
                     "fts3_tokenizer('simple')", "total_changes()"):
            with pytest.raises(SandboxError, match="not authorized"):
                box.query(f"SELECT {name}")
