"""The DuckDB functions a read may call, and those it may not (names as ``duckdb_functions()`` lists them).

Every name DuckDB 2.0 lists is on exactly one side (a test checks it against the installed engine's own
catalogue, so a name a new version adds is refused until it is reviewed). Allowed: aggregates, window,
string, math, date/time, list/struct/map, JSON, regex and collation functions, which compute a value
from their arguments. Refused: every table function that reads files or the engine's state (read_csv*,
read_parquet, parquet_scan, read_json*, read_text, read_blob, glob, sniff_csv, query, query_table...),
pragmas, settings and variables (current_setting, getvariable), sequences, sleeps, logs, SQL
(de)serialisation and internal helpers. The files a configuration names are read through views made
before the session is locked (see ``watchdog/sandbox/duckdb_session.py``), never by user SQL.
"""

from __future__ import annotations

#: aggregates and window functions
_AGGREGATES = """
    any_value approx_count_distinct approx_quantile approx_top_k arbitrary arg_max arg_max_null
    arg_max_nulls_last arg_min arg_min_null arg_min_nulls_last argmax argmin array_agg avg bit_and bit_or
    bit_xor bitstring_agg bool_and bool_or corr count count_if count_star countif covar_pop covar_samp cume_dist
    decimal_average dense_rank entropy favg fill first first_value fsum group_concat histogram histogram_exact
    kahan_sum kurtosis kurtosis_pop lag last last_value lead list listagg lttb mad max max_by mean median min
    min_by mode nth_value ntile percent_rank product quantile quantile_cont quantile_disc rank rank_dense
    regr_avgx regr_avgy regr_count regr_intercept regr_r2 regr_slope regr_sxx regr_sxy regr_syy
    reservoir_quantile row_number sem skewness stddev stddev_pop stddev_samp string_agg sum sum_no_overflow
    sumkahan var_pop var_samp variance variant_group_object
"""

#: scalar functions and macros
_SCALARS = """
    abs acos acosh add age aggregate ago apply array_aggr array_aggregate array_append array_apply array_cat
    array_concat array_contains array_cosine_distance array_cosine_similarity array_cross_product array_distance
    array_distinct array_dot_product array_extract array_filter array_grade_up array_has array_has_all
    array_has_any array_indexof array_inner_product array_intersect array_length array_negative_dot_product
    array_negative_inner_product array_pop_back array_pop_front array_position array_prepend array_push_back
    array_push_front array_reduce array_resize array_reverse array_reverse_sort array_select array_slice
    array_sort array_to_json array_to_string array_to_string_comma_default array_transform array_unique
    array_value array_where array_zip ascii asin asinh assert_true atan atan2 atanh bar base64 bin binom
    bit_count bit_length bit_position bitstring bitstring_byte_comparable can_cast_implicitly cardinality
    cast_to_type cbrt ceil ceiling century char_length character_length chr col_description combine concat
    concat_ws constant_or_null contains cos cosh cot create_sort_key current_catalog current_database
    current_date current_localtime current_localtimestamp current_role current_schema current_schemas
    current_user damerau_levenshtein date_add date_diff date_part date_sub date_trunc datediff datepart datesub
    datetrunc day dayname dayofmonth dayofweek dayofyear days_in_month decade decimal_division decode degrees
    divide editdist3 element_at encode ends_with enum_code enum_first enum_last enum_range enum_range_boundary
    epoch epoch_ms epoch_ns epoch_us equi_width_bins era error even exp factorial fdiv filter flatten floor fmod
    format format_bytes format_pg_type format_type formatreadabledecimalsize formatreadablesize from_base64
    from_binary from_hex from_json from_json_strict gamma gcd gen_random_uuid generate_series
    generate_subscripts geomean geometric_mean get_bit get_current_time get_current_timestamp get_type grade_up
    greatest greatest_common_divisor hamming has_any_column_privilege has_column_privilege
    has_database_privilege has_foreign_data_wrapper_privilege has_function_privilege has_language_privilege
    has_schema_privilege has_sequence_privilege has_server_privilege has_table_privilege
    has_tablespace_privilege hash hex hive_partition_component hour icu_sort_key if ilike_escape index_key instr
    invoke is_histogram_other_bin isfinite isinf isnan isodow isoyear jaccard jaro_similarity
    jaro_winkler_similarity json json_array json_array_length json_contains json_copy_strftime_if_date
    json_copy_strftime_if_timestamp json_deep_merge json_each json_exists json_extract json_extract_path
    json_extract_path_text json_extract_string json_group_array json_group_object json_group_structure
    json_insert json_keys json_merge_patch json_merge_patch_diff json_normalize json_object json_pretty
    json_quote json_remove json_replace json_set json_strip_nulls json_structure json_transform
    json_transform_strict json_tree json_type json_valid json_value julian last_day lcase lcm least
    least_common_multiple left left_grapheme len length length_grapheme levenshtein lgamma like_escape list_aggr
    list_aggregate list_any_value list_append list_apply list_approx_count_distinct list_avg list_bit_and
    list_bit_or list_bit_xor list_bool_and list_bool_or list_cat list_concat list_contains list_cosine_distance
    list_cosine_similarity list_count list_distance list_distinct list_dot_product list_element list_entropy
    list_extract list_filter list_first list_grade_up list_has list_has_all list_has_any list_histogram
    list_indexof list_inner_product list_intersect list_kurtosis list_kurtosis_pop list_last list_mad list_max
    list_median list_min list_mode list_negative_dot_product list_negative_inner_product list_pack list_position
    list_prepend list_product list_reduce list_resize list_reverse list_reverse_sort list_select list_sem
    list_skewness list_slice list_sort list_stddev_pop list_stddev_samp list_string_agg list_sum list_transform
    list_unique list_value list_var_pop list_var_samp list_where list_zip ln log log10 log2 lower lpad ltrim
    make_date make_time make_timestamp make_timestamp_ms make_timestamp_ns make_timestamptz make_type map
    map_concat map_contains map_contains_entry map_contains_value map_entries map_extract map_extract_value
    map_from_entries map_keys map_to_pg_oid map_type_id_to_pg_oid map_values md5 md5_number md5_number_lower
    md5_number_upper microsecond millennium millisecond minute mismatches mod month monthname multiply
    nanosecond nextafter nfc_normalize normalized_interval not_ilike_escape not_like_escape now nullif
    obj_description octet_length ord overlay parse_dirname parse_dirpath parse_filename parse_formatted_bytes
    parse_path path_join pg_collation_is_visible pg_conversion_is_visible pg_function_is_visible
    pg_get_constraintdef pg_get_expr pg_get_viewdef pg_has_role pg_is_other_temp_schema pg_my_temp_schema
    pg_opclass_is_visible pg_operator_is_visible pg_opfamily_is_visible pg_size_pretty pg_table_is_visible
    pg_ts_config_is_visible pg_ts_dict_is_visible pg_ts_parser_is_visible pg_ts_template_is_visible
    pg_type_is_visible pg_typeof pi position pow power prefix printf quarter radians random range reduce
    regexp_escape regexp_extract regexp_extract_all regexp_full_match regexp_matches regexp_replace
    regexp_split_to_array regexp_split_to_table remap_struct repeat replace replace_type reverse right
    right_grapheme round round_even roundbankers row row_to_json rpad rtrim second session_user set_bit sha1
    sha256 shobj_description sign signbit sin sinh split split_part sqrt st_asbinary st_asgeojson st_astext
    st_aswkb st_aswkt st_crs st_geomfromgeojson st_geomfromwkb st_intersects_extent st_setcrs starts_with
    str_split str_split_regex strftime string_split string_split_regex string_to_array strip_accents strlen
    strpos strptime struct_concat struct_contains struct_extract struct_extract_at struct_has struct_indexof
    struct_insert struct_keys struct_pack struct_position struct_update struct_values substr substring
    substring_grapheme subtract suffix switch tan tanh time_bucket timetz_byte_comparable timezone timezone_hour
    timezone_minute to_aggregate_state to_base to_base64 to_binary to_centuries to_days to_decades to_hex
    to_hours to_json to_microseconds to_millennia to_milliseconds to_minutes to_months to_quarters to_seconds
    to_timestamp to_weeks to_years today transaction_timestamp translate trim trunc try_strptime typeof ucase
    unbin unhex unicode union_extract union_tag union_value unnest unpivot_list upper url_decode url_encode user
    uuid uuid_extract_timestamp uuid_extract_version uuidv4 uuidv7 variant_array_length variant_bytes_to_variant
    variant_comparator variant_contains variant_exists variant_extract variant_extract_string
    variant_group_array variant_keys variant_normalize variant_to_parquet_variant variant_type variant_typeof
    version vertex_extract wavg week weekday weekofyear weighted_avg xor year yearweek
"""

#: the locales of collate_<x> and icu_collate_<x>
_LOCALES = """
    aa af am ar ar_sa as az bal be bg blo bn bo br bs ca ceb chr cs cu cy da de de_at dsb dz ee el en en_us eo
    es et fa fa_af ff fi fil fo fr fr_ca fy ga gl gu ha haw he he_il hi hr hsb hu hy id id_id ig is it ja ka kk
    kl km kn ko kok ku ky lb lij lkt ln lo lt lv mk ml mn mr ms mt my nb nb_no ne nl nn no noaccent nso om or pa
    pa_in pl ps pt ro ru sa se sgs si sk sl smn sq sr sr_ba sr_me sr_rs ssy st sv sw ta te th tk tn to tr ug uk
    ur uz vi vo wae wo xh yi yo zh zh_cn zh_hk zh_mo zh_sg zh_tw zu
"""

#: table functions other than range/generate_series/unnest/repeat/json_each/json_tree: files, metadata, state
_TABLE_FUNCTIONS = """
    add_grammar_extension add_parquet_key arrow_scan arrow_scan_dumb checkpoint collations copy_database
    create_external_resource database_list database_size deregister_external_resource destroy_external_resource
    disable_checkpoint_on_shutdown disable_logging disable_object_cache disable_optimizer
    disable_print_progress_bar disable_profile disable_profiling disable_progress_bar disable_verification
    disable_verify_parallelism duckdb_approx_database_count duckdb_available_metrics
    duckdb_connection_count duckdb_coordinate_systems duckdb_databases duckdb_dependencies
    duckdb_dialects duckdb_eviction_queues duckdb_extension_repositories duckdb_extensions
    duckdb_external_file_cache duckdb_external_resource_types duckdb_external_resources duckdb_functions
    duckdb_grammar_extensions duckdb_keywords duckdb_live_query_metrics duckdb_log_contexts
    duckdb_logs duckdb_logs_parsed duckdb_memory duckdb_optimizers duckdb_prepared_statements
    duckdb_profiling_settings duckdb_schemas duckdb_secret_type_parameters duckdb_secret_types duckdb_secrets
    duckdb_sequences duckdb_settings duckdb_table_sample duckdb_temporary_files duckdb_triggers
    duckdb_types duckdb_variables duckdb_views enable_checkpoint_on_shutdown enable_logging enable_object_cache
    enable_optimizer enable_print_progress_bar enable_profile enable_profiling enable_progress_bar
    enable_verification extension_versions force_checkpoint functions glob histogram_values icu_calendar_names
    import_database metadata_info pandas_scan parquet_bloom_probe parquet_file_metadata parquet_full_metadata
    parquet_kv_metadata parquet_metadata parquet_page_index parquet_scan parquet_schema pg_timezone_names
    platform pragma_collations pragma_database_size pragma_metadata_info pragma_platform pragma_show
    pragma_storage_info pragma_table_info pragma_user_agent pragma_version python_arrow_scan python_map_function
    query query_table read_blob read_csv read_csv_auto read_duckdb read_json read_json_auto read_json_objects
    read_json_objects_auto read_ndjson read_ndjson_auto read_ndjson_objects read_parquet read_single_csv_file
    read_single_json_file read_single_parquet_file read_text register_external_resource
    register_external_resource_type remove_grammar_extension repeat_row seq_scan show show_databases show_tables
    show_tables_expanded sniff_csv storage_info summary table_info test_all_types test_vector_types
    truncate_duckdb_logs user_agent verify_parallelism which_secret
"""

#: scalars reviewed and refused: settings, variables, sequences, sleeps, logs, SQL (de)serialisation, internals
_REFUSED_SCALARS = """
    alias combine_aggr current_connection_id current_query current_query_id current_setting
    current_transaction_id currval finalize get_block_size getvariable in_search_path inet_client_addr
    inet_client_port inet_server_addr inet_server_port json_deserialize_sql json_execute_serialized_sql
    json_serialize_plan json_serialize_sql nextval parse_duckdb_log_message pg_conf_load_time
    pg_postmaster_start_time pg_sleep setseed setval sleep_ms stats txid_current vector_type write_log
"""

#: catalogue table functions a read may call: tables (name, estimated rows, column count) and their columns (name,
#: type) -- what table monitors read (watchdog/monitor/); no file path, setting or SQL text beyond a table's own DDL
DUCKDB_CATALOGUE_FUNCTIONS = frozenset({"duckdb_tables", "duckdb_columns",
                                        # their keys and indexes (check-config, incremental unique)
                                        "duckdb_constraints", "duckdb_indexes"})

DUCKDB_FUNCTIONS = frozenset(_AGGREGATES.split()) | frozenset(_SCALARS.split()) | frozenset(
    name for locale in _LOCALES.split() for name in (f"collate_{locale}", f"icu_collate_{locale}")
) | DUCKDB_CATALOGUE_FUNCTIONS

#: refused names (besides any name starting with ``__``, DuckDB's internal functions)
DUCKDB_REFUSED = frozenset(_TABLE_FUNCTIONS.split()) | frozenset(_REFUSED_SCALARS.split())

#: volatile functions a read may still call: random numbers, UUIDs, the clock, and error() (it only raises)
DUCKDB_VOLATILE_ALLOWED = frozenset({
    "error",
    "random", "uuid", "uuidv4", "uuidv7", "gen_random_uuid", "now", "today", "get_current_time",
    "get_current_timestamp", "current_date", "current_localtime", "current_localtimestamp", "transaction_timestamp",
})

#: DuckDB's built-in views over its settings, databases (file paths) and logs, and the file tables' definitions
DUCKDB_DENIED_RELATIONS = frozenset({
    "pg_settings", "duckdb_databases", "pragma_database_list", "pg_database", "duckdb_logs", "duckdb_views",
    "sqlite_temp_master", "sqlite_temp_schema",
})
