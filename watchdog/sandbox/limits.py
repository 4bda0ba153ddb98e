"""Time limits shared by the sandbox's sessions."""

CONNECT_TIMEOUT_S = 10
#: how long past its deadline a statement may keep watchdog waiting: then the SQLite worker is killed,
#: or the server connection's socket is shut down (the server may be stuck where it cannot be cancelled)
DEADLINE_GRACE_S = 0.5
#: PostgreSQL: the most temporary-file space (kB) one statement may use for sorts and hashes that
#: spill to disk, set as ``temp_file_limit`` when the role may set it (superuser, or granted SET)
TEMP_FILE_LIMIT_KB = 1024 * 1024
#: DuckDB: the most memory one session may use (sorts and hashes beyond it fail the statement)
DUCKDB_MEMORY_LIMIT = "1GB"
