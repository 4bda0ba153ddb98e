"""The MySQL / MariaDB functions a read may call.

Aggregates, window, string, math, date/time, JSON, regex and conversion functions, and a few
read-only information functions. Everything else -- files (LOAD_FILE), sleeps and benchmarks, named
locks, sequences (NEXTVAL, SETVAL, LASTVAL), replication waits, session counters, and any name a new
server version adds -- is refused. ``@@global.*`` is refused by the policy itself.
"""

from __future__ import annotations

MYSQL_FUNCTIONS = frozenset({
    # aggregates and window functions
    "group_concat", "bit_and", "bit_or", "bit_xor", "std", "stddev", "stddev_pop", "stddev_samp", "variance",
    "var_pop", "var_samp", "json_arrayagg", "json_objectagg", "median", "percentile_cont", "percentile_disc",
    # strings
    "lcase", "ucase", "substring_index", "mid", "left", "right", "lpad", "rpad", "reverse", "repeat", "locate",
    "instr", "position", "field", "find_in_set", "elt", "ascii", "ord", "char", "hex", "unhex", "md5", "sha",
    "sha1", "sha2", "crc32", "to_base64", "from_base64", "quote", "soundex", "space", "strcmp", "bin", "oct",
    "conv", "bit_length", "bit_count", "format", "export_set", "make_set", "natural_sort_key", "char_length",
    "lower", "upper",
    # regular expressions
    "regexp_replace", "regexp_substr", "regexp_instr", "regexp_like",
    # math
    "truncate", "log2", "cot", "greatest", "least", "rand",
    # date and time
    "now", "current_timestamp", "current_date", "current_time", "curdate", "curtime", "localtime",
    "localtimestamp", "sysdate", "date", "time", "timestamp", "year", "month", "day", "dayofmonth",
    "dayofweek", "dayofyear", "weekday", "week", "weekofyear", "yearweek", "hour", "minute", "second",
    "microsecond", "quarter", "monthname", "dayname", "last_day", "date_add", "date_sub", "adddate",
    "subdate", "addtime", "subtime", "datediff", "timediff", "timestampdiff", "timestampadd", "date_format",
    "time_format", "str_to_date", "from_unixtime", "unix_timestamp", "to_days", "from_days", "to_seconds",
    "makedate", "maketime", "period_add", "period_diff", "extract", "convert_tz", "sec_to_time",
    "time_to_sec", "utc_date", "utc_time", "utc_timestamp", "get_format",
    # JSON
    "json_extract", "json_unquote", "json_value", "json_query", "json_contains", "json_contains_path",
    "json_keys", "json_length", "json_type", "json_valid", "json_array", "json_object", "json_quote",
    "json_search", "json_depth", "json_exists", "json_compact", "json_detailed", "json_pretty", "json_loose",
    "json_merge", "json_merge_patch", "json_merge_preserve", "json_set", "json_insert", "json_replace",
    "json_remove", "json_array_append", "json_array_insert", "json_overlaps", "json_normalize",
    "json_equals", "json_table", "json_schema_valid", "json_array_intersect", "json_object_filter_keys",
    "json_object_to_array", "json_key_value",
    # conditionals and conversion
    "if", "ifnull", "isnull", "interval", "convert", "binary", "coercibility", "collation", "charset",
    # read-only information
    "database", "schema", "current_user", "session_user", "system_user", "user", "version",
    "connection_id", "is_used_lock", "is_free_lock",
})

#: functions MariaDB documents as not deterministic, or files under information functions, that a
#: read may still call: random numbers, the clock, read-only looks at the own session and named-lock
#: state, character-set metadata, and LAST_VALUE (also a window function)
MYSQL_VOLATILE_ALLOWED = frozenset({
    "rand", "now", "sysdate", "current_timestamp", "localtime", "localtimestamp", "curdate", "curtime",
    "current_date", "current_time", "utc_date", "utc_time", "utc_timestamp", "unix_timestamp",
    "connection_id", "is_used_lock", "is_free_lock", "user", "current_user", "session_user", "system_user",
    "database", "schema", "version", "charset", "coercibility", "collation", "last_value",
})
