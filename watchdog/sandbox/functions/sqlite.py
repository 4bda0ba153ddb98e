"""The SQLite functions a read may call (core, math, date/time, JSON, and the read-only pragmas).

This module is pure data: the SQLite worker process imports it for its authorizer, which refuses any
other function at the database layer too.
"""

from __future__ import annotations

SQLITE_FUNCTIONS = frozenset({
    # aggregates
    "total", "group_concat", "string_agg", "json_group_array", "json_group_object", "jsonb_group_array",
    "jsonb_group_object", "median", "percentile", "percentile_cont", "percentile_disc",
    # core scalars
    "char", "format", "glob", "hex", "ifnull", "iif", "if", "instr", "like", "likelihood", "likely", "unlikely",
    "printf", "quote", "soundex", "typeof", "subtype", "unhex", "unicode", "zeroblob", "octet_length",
    "random", "randomblob", "regexp", "sqlite_version",
    # watchdog's own (the SQLite worker registers them): MD5 and hex digits as a number, for row hashes
    "md5", "md5_int",
    # math (SQLITE_ENABLE_MATH_FUNCTIONS)
    "acosh", "asinh", "atanh", "cosh", "sinh", "tanh", "log2", "trunc",
    # date and time
    "date", "time", "datetime", "julianday", "unixepoch", "strftime", "timediff",
    "current_date", "current_time", "current_timestamp",
    # JSON (json1 is built in)
    "json", "jsonb", "json_array", "jsonb_array", "json_array_length", "json_error_position", "json_extract",
    "jsonb_extract", "json_insert", "jsonb_insert", "json_object", "jsonb_object", "json_patch", "jsonb_patch",
    "json_pretty", "json_remove", "jsonb_remove", "json_replace", "jsonb_replace", "json_set", "jsonb_set",
    "json_type", "json_valid", "json_quote", "json_each", "json_tree", "jsonb_each", "jsonb_tree",
})

#: the functions the SQLite worker adds itself (the stock ``sqlite3`` shell has none of them): SQL that calls
#: one runs through ``watchdog query``
WATCHDOG_SQLITE_FUNCTIONS = frozenset({"regexp", "md5", "md5_int"})

#: read-only pragmas, callable as table-valued functions: SELECT * FROM pragma_table_info('t')
READ_PRAGMAS = frozenset({
    "table_info", "table_xinfo", "table_list", "index_list", "index_info", "index_xinfo", "foreign_key_list",
    "database_list", "collation_list", "function_list", "module_list", "pragma_list", "compile_options",
    "page_count", "freelist_count", "foreign_key_check", "integrity_check", "quick_check",
})

SQLITE_PRAGMA_FUNCTIONS = frozenset(f"pragma_{name}" for name in READ_PRAGMAS)

#: the functions SQLite marks as not deterministic that a read may still call: random numbers and
#: the clock ('now'). Everything else SQLite lists as non-deterministic or direct-only is refused.
SQLITE_VOLATILE_ALLOWED = frozenset({
    "random", "randomblob", "date", "time", "datetime", "julianday", "unixepoch", "strftime", "timediff",
    "current_date", "current_time", "current_timestamp", "sqlite_version",
})
