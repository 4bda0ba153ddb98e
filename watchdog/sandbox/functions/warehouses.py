"""The functions a read may call on Trino, Snowflake, BigQuery and Databricks SQL (generated SQL only).

An allowlist per engine, kept to functions that only compute a value from their arguments: the ones
watchdog's own statements use (regex matching, COLLATE, date truncation for anomaly buckets) and the
string, date and conditional functions a ``where``, ``expression`` or ``custom_sql`` check commonly
needs. Refused because they are not listed: anything that reaches outside the query -- Snowflake's
``SYSTEM$...`` functions, ``RESULT_SCAN``, external functions; BigQuery's ``EXTERNAL_QUERY`` and ``ML.*``;
Trino's ``query`` table function and procedures; Databricks' ``reflect``, ``java_method``, ``read_files``,
``http_request``, ``ai_*`` and Python UDFs -- and any name a new server version adds.
"""

from __future__ import annotations

#: functions these four engines all have, with the same meaning
_SHARED = frozenset({
    "regexp_replace", "greatest", "least", "reverse", "lpad", "rpad", "split_part", "starts_with",
    "date_trunc", "current_date", "current_timestamp", "year", "month", "day", "hour", "minute", "second",
    "stddev", "stddev_pop", "stddev_samp", "variance", "var_pop", "var_samp", "approx_count_distinct",
    "any_value", "bool_and", "bool_or", "md5", "sha256", "to_hex", "left", "right", "if", "nvl",
})

TRINO_FUNCTIONS = _SHARED | frozenset({
    "regexp_like", "regexp_extract", "regexp_count", "regexp_position", "strpos", "codepoint", "chr",
    "date_add", "date_diff", "date_format", "date_parse", "from_unixtime", "to_unixtime", "from_iso8601_timestamp",
    "from_iso8601_date", "day_of_week", "dow", "day_of_year", "week", "quarter", "at_timezone", "with_timezone",
    "now", "localtimestamp", "try_cast", "try", "typeof", "count_if", "arbitrary", "element_at", "cardinality",
    "json_extract_scalar", "json_extract", "json_format", "json_parse", "format", "truncate", "is_nan", "nan",
    "infinity", "is_finite", "is_infinite", "approx_distinct", "min_by", "max_by", "listagg",
})

SNOWFLAKE_FUNCTIONS = _SHARED | frozenset({
    "regexp_like", "rlike", "regexp_instr", "regexp_substr", "regexp_count", "collate", "collation", "iff",
    "zeroifnull", "nullifzero", "nvl2", "ifnull", "decode", "equal_null", "charindex", "position",
    "contains", "endswith", "startswith", "editdistance", "initcap", "dateadd", "datediff", "timeadd",
    "timediff", "timestampadd", "timestampdiff", "date_part", "dayofweek", "dayofweekiso", "dayofyear", "week",
    "weekiso", "yearofweekiso", "quarter", "last_day", "to_date", "to_timestamp", "to_timestamp_ntz",
    "to_timestamp_ltz", "to_timestamp_tz", "try_to_date", "try_to_timestamp", "try_to_number", "try_cast",
    "to_char", "to_varchar", "to_number", "to_decimal", "to_double", "to_boolean", "convert_timezone",
    "sysdate", "count_if", "listagg", "median", "mode", "parse_json", "try_parse_json", "get",
    "get_path", "array_size", "typeof", "hash", "sha2", "div0", "div0null", "truncate", "trunc", "square",
})

BIGQUERY_FUNCTIONS = _SHARED | frozenset({
    "regexp_contains", "regexp_extract", "regexp_instr", "regexp_substr", "collate", "ifnull", "safe_cast",
    "safe_divide", "ieee_divide", "div", "instr", "strpos", "contains_substr", "ends_with", "format", "initcap",
    "normalize", "to_code_points", "code_points_to_string", "byte_length", "safe_convert_bytes_to_string",
    "date", "datetime", "time", "timestamp", "date_add", "date_sub", "date_diff", "datetime_add", "datetime_sub",
    "datetime_diff", "datetime_trunc", "timestamp_add", "timestamp_sub", "timestamp_diff", "timestamp_trunc",
    "timestamp_seconds", "timestamp_millis", "timestamp_micros", "unix_seconds", "unix_millis", "unix_micros",
    "unix_date", "parse_date", "parse_datetime", "parse_timestamp", "format_date", "format_datetime",
    "format_timestamp", "current_datetime", "last_day", "countif", "logical_and", "logical_or", "string_agg",
    "array_length", "json_value", "json_query", "json_extract_scalar", "is_nan", "is_inf", "trunc",
    "farm_fingerprint", "sha1", "sha512", "to_base64", "from_base64", "extract",
    "week",  # WEEK(MONDAY), a date part of DATETIME_TRUNC
})

DATABRICKS_FUNCTIONS = _SHARED | frozenset({
    "regexp_like", "rlike", "regexp", "regexp_extract", "regexp_count", "regexp_instr", "regexp_substr",
    "collate", "collation", "ifnull", "nvl2", "nanvl", "equal_null", "try_cast", "try_divide", "try_add",
    "try_subtract", "try_multiply", "instr", "locate", "charindex", "contains", "endswith", "startswith",
    "initcap", "levenshtein", "char", "chr", "ascii", "base64", "unbase64", "hex", "unhex", "sha1", "sha2",
    "crc32", "date_add", "date_sub", "datediff", "date_diff", "dateadd", "timestampadd", "timestampdiff",
    "add_months", "months_between", "date_format", "to_date", "to_timestamp", "try_to_timestamp",
    "unix_timestamp", "from_unixtime", "from_utc_timestamp", "to_utc_timestamp", "dayofweek", "dayofmonth",
    "dayofyear", "weekday", "weekofyear", "quarter", "last_day", "now", "date_part", "datepart", "count_if",
    "collect_list", "collect_set", "percentile", "percentile_approx", "median", "mode", "first", "last",
    "get_json_object", "from_json", "size", "element_at", "typeof", "isnan", "isnull", "isnotnull", "nullif",
    "bround", "format_number", "format_string", "printf", "decode", "string", "int", "bigint", "double",
})
