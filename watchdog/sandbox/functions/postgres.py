"""The PostgreSQL functions a read may call.

Aggregates, window, string, math, date/time, JSON, regex, array, text search and type functions,
and the catalogue helpers a data-quality query uses (sizes, privileges, definitions). Everything
else -- files, logs, settings, locks, sequences, notifications, replication, backends, large
objects, and any name added by a new server version or extension -- is refused.
"""

from __future__ import annotations

POSTGRES_FUNCTIONS = frozenset({
    # aggregates
    "array_agg", "string_agg", "json_agg", "jsonb_agg", "json_object_agg", "jsonb_object_agg", "bool_and",
    "bool_or", "every", "bit_and", "bit_or", "bit_xor", "stddev", "stddev_pop", "stddev_samp", "variance",
    "var_pop", "var_samp", "corr", "covar_pop", "covar_samp", "regr_avgx", "regr_avgy", "regr_count",
    "regr_intercept", "regr_r2", "regr_slope", "regr_sxx", "regr_sxy", "regr_syy", "percentile_cont",
    "percentile_disc", "mode", "range_agg", "range_intersect_agg", "xmlagg", "any_value",
    # strings
    "initcap", "left", "right", "lpad", "rpad", "btrim", "translate", "reverse", "repeat", "strpos", "position",
    "format", "split_part", "starts_with", "overlay", "ascii", "chr", "md5", "sha224", "sha256", "sha384",
    "sha512", "encode", "decode", "to_hex", "quote_ident", "quote_literal", "quote_nullable", "bit_length",
    "string_to_array", "string_to_table", "array_to_string", "unistr", "normalize", "convert_from",
    "convert_to", "get_byte", "get_bit", "text", "lower", "upper", "char_length", "hash_record_extended",
    # regular expressions
    "regexp_match", "regexp_matches", "regexp_replace", "regexp_split_to_array", "regexp_split_to_table",
    "regexp_count", "regexp_instr", "regexp_like", "regexp_substr",
    # math
    "cbrt", "trunc", "div", "width_bucket", "gcd", "lcm", "factorial", "scale", "min_scale", "trim_scale",
    "greatest", "least", "sinh", "cosh", "tanh", "asinh", "acosh", "atanh", "cot", "sind", "cosd", "tand",
    "asind", "acosd", "atand", "atan2d", "log", "isnan", "num_nulls", "num_nonnulls",
    # date and time
    "now", "current_date", "current_time", "current_timestamp", "localtime", "localtimestamp",
    "statement_timestamp", "transaction_timestamp", "date_trunc", "date_part", "date_bin", "age",
    "make_date", "make_time", "make_timestamp", "make_timestamptz", "make_interval", "to_char", "to_date",
    "to_timestamp", "to_number", "justify_days", "justify_hours", "justify_interval", "isfinite", "timezone",
    "date", "extract", "interval",
    # JSON
    "to_json", "to_jsonb", "row_to_json", "array_to_json", "json_build_object", "jsonb_build_object",
    "json_build_array", "jsonb_build_array", "json_object", "jsonb_object", "json_array_length",
    "jsonb_array_length", "json_extract_path", "json_extract_path_text", "jsonb_extract_path",
    "jsonb_extract_path_text", "json_typeof", "jsonb_typeof", "json_object_keys", "jsonb_object_keys",
    "json_array_elements", "jsonb_array_elements", "json_array_elements_text", "jsonb_array_elements_text",
    "json_each", "jsonb_each", "json_each_text", "jsonb_each_text", "json_strip_nulls", "jsonb_strip_nulls",
    "jsonb_pretty", "jsonb_path_exists", "jsonb_path_match", "jsonb_path_query", "jsonb_path_query_array",
    "jsonb_path_query_first", "jsonb_set", "jsonb_insert", "json_populate_record", "jsonb_populate_record",
    "json_to_record", "jsonb_to_record", "json_to_recordset", "jsonb_to_recordset",
    # arrays and sets
    "array_length", "cardinality", "array_position", "array_positions", "array_remove", "array_replace",
    "array_append", "array_prepend", "array_cat", "array_lower", "array_upper", "array_dims", "array_ndims",
    "unnest", "generate_series", "generate_subscripts",
    # full-text search
    "to_tsvector", "to_tsquery", "plainto_tsquery", "phraseto_tsquery", "websearch_to_tsquery", "ts_rank",
    "ts_rank_cd", "ts_headline", "length",
    # types, casts and the catalogue a data-quality query reads
    "pg_typeof", "format_type", "to_regclass", "to_regtype", "to_regnamespace", "current_database",
    "current_schema", "current_schemas", "current_user", "session_user", "current_role", "current_catalog",
    "version", "current_setting", "has_table_privilege", "has_column_privilege", "has_schema_privilege",
    "has_database_privilege", "has_any_column_privilege", "pg_table_is_visible", "pg_get_indexdef",
    "pg_get_viewdef", "pg_get_constraintdef", "pg_get_expr", "pg_get_userbyid", "pg_relation_size",
    "pg_total_relation_size", "pg_table_size", "pg_indexes_size", "pg_size_pretty", "pg_column_size",
    "obj_description", "col_description", "shobj_description", "pg_encoding_to_char", "pg_backend_pid",
    "pg_listening_channels", "random",
})

#: functions PostgreSQL marks volatile that a read may still call: random numbers, the clock, and
#: relation sizes (volatile because files grow; they read only the size of a table the role sees)
POSTGRES_VOLATILE_ALLOWED = frozenset({
    "random", "clock_timestamp", "pg_relation_size", "pg_total_relation_size", "pg_table_size",
    "pg_indexes_size",
})

#: views and tables that expose server files, configuration or password hashes
POSTGRES_DENIED_RELATIONS = frozenset({
    "pg_hba_file_rules", "pg_ident_file_mappings", "pg_file_settings", "pg_config", "pg_authid", "pg_shadow",
    "pg_user_mapping", "pg_user_mappings", "pg_largeobject", "pg_stat_file",
})
