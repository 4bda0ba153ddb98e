"""The parser half of the sandbox: accept exactly one read statement, refuse anything else.

Each statement is parsed with sqlglot in the database's dialect. It must be a
single SELECT / set operation (UNION, INTERSECT, EXCEPT) / VALUES, and nothing
anywhere in its tree may write or change state: DML or DDL (also inside a CTE or a
sub-query), SELECT INTO, locking reads, commands sqlglot can only keep as raw text,
session-variable assignment, or a call to a function with side effects.
The database's own read-only mode (see ``sessions.py``) backs this up.

Where the parser and the server could read the same text differently, the text is refused:
MySQL executable comments (``/*! ... */``, ``/*M! ... */``) and PostgreSQL unicode-escaped
identifiers (``U&"pg\\005fsleep"`` is ``pg_sleep`` to the server, an unknown name to the parser).
Statements longer than :data:`MAX_STATEMENT_CHARS` or nested too deeply to parse are refused too.
"""

from __future__ import annotations

import logging
import re
from dataclasses import dataclass

import sqlglot
from sqlglot import exp
from sqlglot.errors import ParseError, TokenError
from sqlglot.tokens import TokenType

from watchdog.errors import QueryRefused
from watchdog.sandbox import dialects  # noqa: F401  (registers strictsqlite)

logging.getLogger("sqlglot").setLevel(logging.ERROR)

#: statement roots that are reads
READ_ROOTS: tuple[type[exp.Expr], ...] = (exp.Select, exp.SetOperation, exp.Values, exp.Subquery)

#: node types that write, lock or change session state, wherever they appear in the tree
FORBIDDEN_NODES: dict[type[exp.Expr], str] = {
    exp.Insert: "INSERT",
    exp.Update: "UPDATE",
    exp.Delete: "DELETE",
    exp.Merge: "MERGE",
    exp.Create: "CREATE",
    exp.Drop: "DROP",
    exp.Alter: "ALTER",
    exp.TruncateTable: "TRUNCATE",
    exp.Command: "a raw command",
    exp.Set: "SET",
    exp.Pragma: "PRAGMA",
    exp.Copy: "COPY",
    exp.Into: "SELECT INTO",
    exp.Lock: "a locking read (FOR UPDATE / FOR SHARE)",
    exp.Transaction: "a transaction statement",
    exp.Commit: "COMMIT",
    exp.Rollback: "ROLLBACK",
    exp.Use: "USE",
    exp.Attach: "ATTACH",
    exp.Detach: "DETACH",
    exp.LoadData: "LOAD DATA",
    exp.Grant: "GRANT",
    exp.Revoke: "REVOKE",
    exp.Analyze: "ANALYZE",
    exp.Kill: "KILL",
    exp.Cache: "CACHE",
    exp.Uncache: "UNCACHE",
    exp.Refresh: "REFRESH",
}

#: functions with side effects (or that run SQL of their own, sleep, lock, read files...)
DENIED_FUNCTIONS: frozenset[str] = frozenset(
    {
        # SQLite
        "load_extension", "writefile", "readfile", "edit", "fts3_tokenizer", "sqlite_dbpage",
        # PostgreSQL
        "pg_sleep", "pg_sleep_for", "pg_sleep_until", "set_config", "pg_read_file", "pg_read_binary_file",
        "pg_ls_dir", "pg_ls_logdir", "pg_ls_waldir", "pg_ls_tmpdir", "pg_ls_archive_statusdir", "pg_stat_file",
        "pg_file_write", "pg_file_rename", "pg_file_unlink", "pg_logdir_ls",
        "lo_import", "lo_export", "lo_create", "lo_creat", "lo_unlink", "lo_open", "lo_write", "lo_put",
        "lo_from_bytea", "lo_truncate", "lo_truncate64", "lowrite", "loread", "lo_close",
        "dblink", "dblink_exec", "dblink_connect", "dblink_connect_u", "dblink_send_query", "dblink_open",
        "dblink_fetch", "dblink_get_result",
        "pg_terminate_backend", "pg_cancel_backend", "pg_reload_conf", "pg_rotate_logfile",
        "pg_advisory_lock", "pg_advisory_lock_shared", "pg_advisory_xact_lock", "pg_advisory_xact_lock_shared",
        "pg_try_advisory_lock", "pg_try_advisory_lock_shared", "pg_try_advisory_xact_lock",
        "pg_try_advisory_xact_lock_shared", "pg_advisory_unlock", "pg_advisory_unlock_all",
        "pg_advisory_unlock_shared", "nextval", "setval", "pg_notify", "txid_current", "pg_current_xact_id",
        "pg_switch_wal", "pg_create_restore_point", "pg_start_backup", "pg_stop_backup", "pg_backup_start",
        "pg_backup_stop", "pg_promote", "pg_wal_replay_pause", "pg_wal_replay_resume",
        "pg_create_physical_replication_slot", "pg_create_logical_replication_slot", "pg_drop_replication_slot",
        "pg_logical_emit_message", "pg_replication_origin_create", "pg_import_system_collations",
        "query_to_xml", "query_to_xml_and_xmlschema", "query_to_xmlschema", "cursor_to_xml",
        "cursor_to_xmlschema", "pg_stat_reset", "pg_stat_reset_shared", "pg_stat_reset_single_table_counters",
        "pg_stat_statements_reset", "pg_log_backend_memory_contexts", "pg_event_trigger_ddl_commands",
        # ... functions that run SQL given as a string (ts_stat, ts_rewrite) or change server state
        "ts_stat", "ts_rewrite", "dblink_disconnect", "dblink_cancel_query", "dblink_close", "dblink_is_busy",
        "dblink_get_connections", "dblink_error_message", "dblink_get_notify", "pg_replication_origin_drop",
        "pg_replication_origin_session_setup", "pg_replication_origin_session_reset",
        "pg_replication_origin_advance", "pg_replication_origin_xact_setup", "pg_replication_origin_xact_reset",
        "pg_copy_physical_replication_slot", "pg_copy_logical_replication_slot", "pg_replication_slot_advance",
        "pg_logical_slot_get_changes", "pg_logical_slot_get_binary_changes", "pg_log_standby_snapshot",
        "pg_stat_reset_slru", "pg_stat_reset_replication_slot", "pg_stat_reset_subscription_stats",
        "pg_file_sync", "pg_ls_logicalsnapdir", "pg_ls_logicalmapdir", "pg_ls_replslotdir", "pg_nextoid",
        "brin_summarize_new_values", "brin_summarize_range", "brin_desummarize_range", "gin_clean_pending_list",
        "pg_prewarm", "pg_truncate_visibility_map", "pg_switch_xlog", "pg_xlog_replay_pause", "pg_xlog_replay_resume",
        # MySQL / MariaDB
        "sleep", "benchmark", "get_lock", "release_lock", "release_all_locks", "load_file",
        "master_pos_wait", "source_pos_wait", "master_gtid_wait", "sys_exec", "sys_eval",
        "wait_for_executed_gtid_set", "wait_until_sql_thread_after_gtids", "last_insert_id",
    }
)

#: MySQL executes the body of /*! ... */ and MariaDB of /*M! ... */ comments: never accept them
_EXECUTABLE_COMMENT = re.compile(r"/\*[!M]")
#: a PostgreSQL unicode-escaped identifier, U&"...": the server decodes it, the parser does not
_UNICODE_IDENTIFIER = re.compile(r'[uU]&"')

#: longer statements are refused: parsing them would take seconds (the planner stays under 60 000)
MAX_STATEMENT_CHARS = 200_000

_DIALECTS = {"postgresql": "postgres", "mariadb": "mysql", "mssql": "tsql", "sqlite": "strictsqlite", "mysql": "mysql"}


def sqlglot_dialect(sqlalchemy_dialect: str) -> str:
    """The sqlglot dialect name for a SQLAlchemy dialect name (``postgresql`` -> ``postgres``)."""
    return _DIALECTS.get(sqlalchemy_dialect, sqlalchemy_dialect)


@dataclass(frozen=True)
class ReadOnlyPolicy:
    """Accepts one read statement in ``dialect`` and raises :class:`QueryRefused` for anything else."""

    dialect: str

    def vet(self, sql: str) -> exp.Expr:
        """Return the parsed statement, or raise QueryRefused saying why it was refused."""
        if len(sql) > MAX_STATEMENT_CHARS:
            raise QueryRefused(f"the statement is too long ({len(sql)} characters, at most {MAX_STATEMENT_CHARS})")
        if _EXECUTABLE_COMMENT.search(sql):
            raise QueryRefused("executable comments (/*! ... */) are not allowed")
        try:
            if self.dialect == "postgres" and _UNICODE_IDENTIFIER.search(sql) and _has_unicode_identifier(sql):
                raise QueryRefused('unicode-escaped identifiers (U&"...") are not allowed')
            statements = [s for s in sqlglot.parse(sql, read=self.dialect) if s is not None]
        except (ParseError, TokenError) as exc:
            raise QueryRefused(f"could not parse the statement: {_first_line(exc)}") from None
        except RecursionError:
            raise QueryRefused("the statement is nested too deeply to check") from None
        statements = [s for s in statements if not isinstance(s, exp.Semicolon)]
        if not statements:
            raise QueryRefused("empty statement")
        if len(statements) > 1:
            raise QueryRefused(f"exactly one statement is allowed, got {len(statements)}")
        tree = statements[0]
        if not isinstance(tree, READ_ROOTS):
            raise QueryRefused("only a read (SELECT, UNION, WITH ... SELECT, VALUES) is allowed, "
                               f"got {_describe(tree)}")
        try:
            for node in tree.walk():
                self._vet_node(node)
        except RecursionError:
            raise QueryRefused("the statement is nested too deeply to check") from None
        return tree

    def _vet_node(self, node: exp.Expr) -> None:
        for kind, label in FORBIDDEN_NODES.items():
            if isinstance(node, kind):
                raise QueryRefused(f"{label} is not allowed")
        if isinstance(node, exp.PropertyEQ) and isinstance(node.this, (exp.Parameter, exp.SessionParameter)):
            raise QueryRefused("assigning to a variable is not allowed")
        if isinstance(node, (exp.Parameter, exp.SessionParameter)) and isinstance(node.parent, exp.EQ) and (
            isinstance(node.parent.parent, exp.Set)
        ):
            raise QueryRefused("assigning to a variable is not allowed")
        if isinstance(node, exp.Func):
            name = _function_name(node)
            if name in DENIED_FUNCTIONS:
                raise QueryRefused(f"function {name}() has side effects and is not allowed")


def _has_unicode_identifier(sql: str) -> bool:
    """True when the PostgreSQL tokens hold ``U&"..."``: U, & and a quoted name with nothing in between."""
    tokens = sqlglot.tokenize(sql, read="postgres")
    for u, amp, name in zip(tokens, tokens[1:], tokens[2:], strict=False):
        if (u.token_type == TokenType.VAR and u.text in ("u", "U") and amp.token_type == TokenType.AMP
                and name.token_type == TokenType.IDENTIFIER and amp.start == u.end + 1 and name.start == amp.end + 1):
            return True
    return False


def _function_name(node: exp.Func) -> str:
    if isinstance(node, exp.Anonymous):
        return str(node.name).lower()
    return node.sql_name().lower()


def _describe(tree: exp.Expr) -> str:
    if isinstance(tree, exp.Command):
        return str(tree.this).upper()
    return tree.key.upper()


def _first_line(exc: Exception) -> str:
    return str(exc).strip().splitlines()[0][:200] if str(exc).strip() else type(exc).__name__
