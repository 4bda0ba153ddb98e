"""The Spark SQL functions a read may call (Spark 4.0's own catalogue, ``SHOW FUNCTIONS``).

Every name the server lists is classified here: allowed (:data:`SPARK_FUNCTIONS`), refused with a
reason (:data:`SPARK_REFUSED`), or an operator (:data:`SPARK_OPERATORS`); tests/test_spark.py checks
the live catalogue against that, so a server version that adds a function fails the test instead of
opening a hole. Refused: JVM calls (``reflect``, ``java_method``, ``try_reflect``), anything that reads
files or names them (``input_file_name``, protobuf/avro descriptors and schema files), XML parsers,
functions that build a value as large as an argument says (one call can fill the memory of the
driver, which in local mode is the Thrift server itself), the ``range`` table function, and functions
that only raise errors. User functions (``CREATE FUNCTION``) are never on the list.
"""

from __future__ import annotations

SPARK_FUNCTIONS = frozenset({
    "abs", "acos", "acosh", "add_months", "aes_decrypt", "aes_encrypt", "aggregate", "and", "any", "any_value",
    "approx_count_distinct", "approx_percentile", "array", "array_agg", "array_append", "array_compact",
    "array_contains", "array_distinct", "array_except", "array_insert", "array_intersect", "array_join",
    "array_max", "array_min", "array_position", "array_prepend", "array_remove", "array_size", "array_sort",
    "array_union", "arrays_overlap", "arrays_zip", "ascii", "asin", "asinh", "atan", "atan2", "atanh", "avg",
    "base64", "between", "bigint", "bin", "binary", "bit_and", "bit_count", "bit_get", "bit_length", "bit_or",
    "bit_xor", "bitmap_bit_position", "bitmap_bucket_number", "bitmap_construct_agg", "bitmap_count",
    "bitmap_or_agg", "bool_and", "bool_or", "boolean", "bround", "btrim", "cardinality", "case", "cast", "cbrt",
    "ceil", "ceiling", "char", "char_length", "character_length", "chr", "coalesce", "collate", "collation",
    "collations", "collect_list", "collect_set", "concat", "concat_ws", "contains", "conv", "convert_timezone",
    "corr", "cos", "cosh", "cot", "count", "count_if", "covar_pop", "covar_samp", "crc32", "csc", "cume_dist",
    "curdate", "current_catalog", "current_database", "current_date", "current_schema", "current_timestamp",
    "current_timezone", "current_user", "date", "date_add", "date_diff", "date_format", "date_from_unix_date",
    "date_part", "date_sub", "date_trunc", "dateadd", "datediff", "datepart", "day", "dayname", "dayofmonth",
    "dayofweek", "dayofyear", "decimal", "decode", "degrees", "dense_rank", "div", "double", "e", "element_at",
    "elt", "encode", "endswith", "equal_null", "every", "exists", "exp", "explode", "explode_outer", "expm1",
    "extract", "factorial", "filter", "find_in_set", "first", "first_value", "flatten", "float", "floor",
    "forall", "format_number", "from_csv", "from_json", "from_unixtime", "from_utc_timestamp", "get",
    "get_json_object", "getbit", "greatest", "grouping", "grouping_id", "hash", "hex", "histogram_numeric",
    "hll_sketch_agg", "hll_sketch_estimate", "hll_union", "hll_union_agg", "hour", "hypot", "if", "ifnull",
    "ilike", "in", "initcap", "inline", "inline_outer", "instr", "int", "is_valid_utf8", "is_variant_null",
    "isnan", "isnotnull", "isnull", "json_array_length", "json_object_keys", "json_tuple", "kurtosis", "lag",
    "last", "last_day", "last_value", "lcase", "lead", "least", "left", "len", "length", "levenshtein", "like",
    "listagg", "ln", "localtimestamp", "locate", "log", "log10", "log1p", "log2", "lower", "ltrim", "luhn_check",
    "make_date", "make_dt_interval", "make_interval", "make_timestamp", "make_timestamp_ltz",
    "make_timestamp_ntz", "make_valid_utf8", "make_ym_interval", "map", "map_concat", "map_contains_key",
    "map_entries", "map_filter", "map_from_arrays", "map_from_entries", "map_keys", "map_values", "map_zip_with",
    "mask", "max", "max_by", "md5", "mean", "median", "min", "min_by", "minute", "mod", "mode",
    "monotonically_increasing_id", "month", "monthname", "months_between", "named_struct", "nanvl", "negative",
    "next_day", "not", "now", "nth_value", "ntile", "nullif", "nullifzero", "nvl", "nvl2", "octet_length", "or",
    "overlay", "parse_json", "parse_url", "percent_rank", "percentile", "percentile_approx", "percentile_cont",
    "percentile_disc", "pi", "pmod", "posexplode", "posexplode_outer", "position", "positive", "pow", "power",
    "quarter", "radians", "rand", "randn", "random", "rank", "reduce", "regexp", "regexp_count", "regexp_extract",
    "regexp_extract_all", "regexp_instr", "regexp_like", "regexp_replace", "regexp_substr", "regr_avgx",
    "regr_avgy", "regr_count", "regr_intercept", "regr_r2", "regr_slope", "regr_sxx", "regr_sxy", "regr_syy",
    "replace", "reverse", "right", "rint", "rlike", "round", "row_number", "rtrim", "schema_of_csv",
    "schema_of_json", "schema_of_variant", "schema_of_variant_agg", "sec", "second", "sentences", "session_user",
    "session_window", "sha", "sha1", "sha2", "shiftleft", "shiftright", "shiftrightunsigned", "shuffle", "sign",
    "signum", "sin", "sinh", "size", "skewness", "slice", "smallint", "some", "sort_array", "soundex",
    "spark_partition_id", "split", "split_part", "sql_keywords", "sqrt", "stack", "startswith", "std", "stddev",
    "stddev_pop", "stddev_samp", "str_to_map", "string", "string_agg", "struct", "substr", "substring",
    "substring_index", "sum", "tan", "tanh", "timestamp", "timestamp_micros", "timestamp_millis",
    "timestamp_seconds", "tinyint", "to_binary", "to_char", "to_csv", "to_date", "to_json", "to_number",
    "to_timestamp", "to_timestamp_ltz", "to_timestamp_ntz", "to_unix_timestamp", "to_utc_timestamp", "to_varchar",
    "to_variant_object", "transform", "transform_keys", "transform_values", "translate", "trim", "trunc",
    "try_add", "try_aes_decrypt", "try_avg", "try_divide", "try_element_at", "try_make_interval",
    "try_make_timestamp", "try_make_timestamp_ltz", "try_make_timestamp_ntz", "try_mod", "try_multiply",
    "try_parse_json", "try_parse_url", "try_subtract", "try_sum", "try_to_binary", "try_to_number",
    "try_to_timestamp", "try_url_decode", "try_validate_utf8", "try_variant_get", "typeof", "ucase", "unbase64",
    "unhex", "uniform", "unix_date", "unix_micros", "unix_millis", "unix_seconds", "unix_timestamp", "upper",
    "url_decode", "url_encode", "user", "uuid", "validate_utf8", "var_pop", "var_samp", "variance",
    "variant_explode", "variant_explode_outer", "variant_get", "version", "weekday", "weekofyear", "when",
    "width_bucket", "window", "window_time", "xxhash64", "year", "zeroifnull", "zip_with",
})

#: refused names, grouped by why
SPARK_REFUSED: dict[str, frozenset[str]] = {
    "calls a JVM method": frozenset({"reflect", "java_method", "try_reflect"}),
    "reads files or names them": frozenset({
    "from_avro", "from_protobuf", "input_file_block_length", "input_file_block_start", "input_file_name",
    "schema_of_avro", "to_avro", "to_protobuf",
    }),
    "parses XML (entities, DTDs)": frozenset({
    "from_xml", "schema_of_xml", "to_xml", "xpath", "xpath_boolean", "xpath_double", "xpath_float", "xpath_int",
    "xpath_long", "xpath_number", "xpath_short", "xpath_string",
    }),
    "builds a value as large as an argument says": frozenset({
    "array_repeat", "count_min_sketch", "format_string", "lpad", "printf", "randstr", "range", "repeat", "rpad",
    "sequence", "space",
    }),
    "only raises an error": frozenset({"raise_error", "assert_true"}),
}

#: operators the catalogue lists as functions (never a called name)
SPARK_OPERATORS = frozenset({
    "!", "!=", "%", "&", "*", "+", "-", "/", "<", "<<", "<=", "<=>", "<>", "=", "==", ">", ">=", ">>", ">>>", "^",
    "|", "||", "~",
})

#: non-deterministic functions a read may still call, reviewed one by one: random values, the clock,
#: row ids, and read-only looks at the own session (user, catalog, database, time zone, version)
SPARK_VOLATILE_ALLOWED = frozenset({
    "curdate", "current_catalog", "current_database", "current_date", "current_schema", "current_timestamp",
    "current_timezone", "current_user", "localtimestamp", "monotonically_increasing_id", "now", "rand", "randn",
    "random", "session_user", "shuffle", "spark_partition_id", "uniform", "user", "uuid", "version",
})
