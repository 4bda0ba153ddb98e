"""Warehouse dialects (issue 16 part 3): Trino, Snowflake, BigQuery and Databricks SQL.

watchdog writes their SQL but no such server runs here: **generated SQL only, not tested against a live
server**. What is tested instead:

* golden files (``tests/golden/warehouses/<dialect>.sql``): every statement a scan of ``suite.yaml`` sends
  (aggregate passes, own statements with and without samples, the sample passes, the findings' SQL,
  anomaly buckets), exact text. Regenerate with ``.venv/bin/pytest tests/test_warehouse_dialects.py
  --update-golden`` and read the diff: the reasons each form is right are the asserts below;
* every statement parses in its dialect and prints back to the same text (sqlglot round trip), and the
  sandbox's parser policy for that dialect accepts it;
* the semantics that differ between engines, asserted on the parsed statements: exact text comparison,
  regexes (run on the engines' real regex libraries: java.util.regex, RE2, glibc's POSIX ERE), NULL
  handling, quoting, LIMIT, dates, rates and ages computed by watchdog rather than the engine.
"""

from __future__ import annotations

import re
import warnings

import pytest
import sqlglot
from sqlglot import exp

from tests import regex_engines, warehouse_sql
from tests.test_regex_corpus import CORPUS, VALUES, _by_hand_alpha
from watchdog.errors import DatabaseUnavailable, QueryRefused
from watchdog.sandbox import Sandbox
from watchdog.sandbox.dialects import WAREHOUSES
from watchdog.sandbox.policy import ReadOnlyPolicy
from watchdog.scan import regex, regex_warehouse, sqlbuild
from watchdog.scan.planner import plan

DIALECTS = warehouse_sql.DIALECTS


@pytest.fixture(scope="module")
def rendered() -> dict[str, list[tuple[str, str]]]:
    return {d: warehouse_sql.statements(d) for d in DIALECTS}


# ------------------------------------------------------------------------------------------ golden text


@pytest.mark.parametrize("dialect", DIALECTS)
def test_golden_files_hold_the_exact_sql(dialect, request):
    path = warehouse_sql.GOLDEN / f"{dialect}.sql"
    text = warehouse_sql.render(dialect)
    if request.config.getoption("--update-golden"):
        path.write_text(text, encoding="utf-8")
    assert path.read_text(encoding="utf-8") == text, (
        f"the SQL for {dialect} changed; if that is intended, run {warehouse_sql.UPDATE_COMMAND} and review the diff")


@pytest.mark.parametrize("dialect", DIALECTS)
def test_every_statement_parses_round_trips_and_passes_the_sandbox(dialect, rendered):
    policy = ReadOnlyPolicy(dialect)
    assert len(rendered[dialect]) >= 40  # every check type, with and without samples, plus the samples passes
    for label, sql in rendered[dialect]:
        tree = sqlglot.parse_one(sql, read=dialect)
        assert tree.sql(dialect=dialect) == sql, label
        policy.vet(sql)  # raises QueryRefused when the dialect's parser policy would refuse it


# ------------------------------------------------------------------------------------- exact text


def _aggregate_pass(rendered, dialect: str) -> exp.Expr:
    [sql] = [sql for label, sql in rendered[dialect] if label == "aggregate pass over sales.orders"]
    return sqlglot.parse_one(sql, read=dialect)


def test_text_is_compared_exactly_on_every_warehouse(rendered):
    """accepted_values on a text column and a text foreign key compare code points: case- and trailing-space-
    sensitive. Trino has no collations (varchar compares by code point); the other three do, per column, so
    a column known to be text is given the binary collation explicitly."""
    expected = {"trino": None, "snowflake": "COLLATE(\"status\", 'utf8')", "bigquery": "COLLATE(`status`, 'binary')",
                "databricks": "`status` COLLATE UTF8_BINARY"}
    for dialect, collated in expected.items():
        tree = _aggregate_pass(rendered, dialect)
        [status_in] = [n for n in tree.find_all(exp.In) if "status" in n.this.sql()]
        if collated is None:
            assert isinstance(status_in.this, exp.Column)
        else:
            assert status_in.this.sql(dialect=dialect) == collated
        # the values themselves are untouched literals: no UPPER/LOWER/TRIM anywhere, spaces kept
        assert [v.this for v in status_in.expressions] == ["open", "shipped", "on hold", "draft"]
        for _, sql in rendered[dialect]:
            assert not re.search(r"\b(UPPER|LOWER|TRIM|RTRIM|ILIKE)\(", sql), sql
    # unique and functional_dependency group by the collated keys (the scanner reads their column types there)
    key_label = "own statement (no samples wanted): sales.orders.first_name+last_name.unique"
    [groups] = [s for label, s in rendered["snowflake"] if label == key_label]
    assert "GROUP BY COLLATE(\"first_name\", 'utf8'), COLLATE(\"last_name\", 'utf8')" in groups
    fd_label = "own statement: sales.orders.zip->city.functional_dependency"
    [groups] = [s for label, s in rendered["databricks"] if label == fd_label]
    assert "GROUP BY `zip` COLLATE UTF8_BINARY, `city` COLLATE UTF8_BINARY" in groups
    fk = {d: [sql for label, sql in rendered[d] if label.endswith("sales.orders.email.foreign_key")] for d in DIALECTS}
    assert "COLLATE(\"wd_parent\".\"email\", 'utf8') = COLLATE(\"wd_child\".\"email\", 'utf8')" in fk["snowflake"][0]
    assert '"wd_parent"."email" = "wd_child"."email"' in fk["trino"][0]
    # numbers are never collated (COLLATE on a number is an error)
    for dialect in DIALECTS:
        tree = _aggregate_pass(rendered, dialect)
        [priority_in] = [n for n in tree.find_all(exp.In) if "priority" in n.this.sql()]
        assert isinstance(priority_in.this, exp.Column)


def test_unique_keys_found_again_by_value_keep_their_trailing_space(rendered):
    for dialect in DIALECTS:
        [sql] = [s for label, s in rendered[dialect] if label.startswith("sample pass over sales.customers")]
        literal = sqlglot.parse_one(sql, read=dialect).find(exp.EQ).expression
        assert literal.this == "Lee ", sql


# ------------------------------------------------------------------------------------------- regexes


def _pattern_literals(sql: str, dialect: str) -> list[str]:
    tree = sqlglot.parse_one(sql, read=dialect)
    return [node.expression.this for node in tree.find_all(exp.RegexpLike)]


def test_regex_functions_search_on_each_engine(rendered):
    """Trino regexp_like, BigQuery REGEXP_CONTAINS and Databricks REGEXP_LIKE (= RLIKE) search the value;
    Snowflake's REGEXP_LIKE matches the WHOLE value, so it gets .*( )* around the pattern (or an anchored
    form), and the parameters 'cs': case-sensitive, '.' matches a newline."""
    names = {"trino": "REGEXP_LIKE(CAST(\"email\" AS VARCHAR), '(?s)^",
             "bigquery": "REGEXP_CONTAINS(CAST(`email` AS STRING), '(?s)^",
             "databricks": "REGEXP_LIKE(CAST(`email` AS STRING), '(?s)^",
             "snowflake": "REGEXP_LIKE(CONCAT(CAST(\"email\" AS VARCHAR), '#'), '(([^"}
    for dialect, start in names.items():
        [sql] = [s for label, s in rendered[dialect] if label == "finding sql: sales.orders.email.pattern"]
        assert start in sql, sql
    [sql] = [s for label, s in rendered["snowflake"] if label == "finding sql: sales.orders.notes.pattern"]
    assert "REGEXP_LIKE(CAST(\"notes\" AS VARCHAR), '(.*(TODO).*|.*(FIXME).*)', 'cs')" in sql


@pytest.mark.parametrize("dialect", DIALECTS)
def test_the_pattern_reaches_the_engine_as_written(dialect, rendered):
    """The string literal, read back as the dialect reads it (backslashes doubled in Snowflake, BigQuery
    and Databricks literals, not in Trino's), is exactly the translated pattern."""
    [sql] = [s for label, s in rendered[dialect] if label == "finding sql: sales.orders.email.pattern"]
    suite_regex = r"^[^@\s]+@[^@\s]+\.[a-z]{2,}$"
    if dialect == "snowflake":
        expected = [ere for _, ere in regex_warehouse.snowflake_regexes(suite_regex)]
    else:
        expected = [regex_warehouse.translate(suite_regex, dialect)]
    assert _pattern_literals(sql, dialect) == expected
    assert ("\\\\" in sql) == (dialect != "trino")


def _reference() -> dict[str, list[bool]]:
    """What each corpus pattern matches: the SQLite spelling (Python's re), which tests/test_regex_corpus.py
    checks against PostgreSQL and MariaDB, plus the hand counts there."""
    out = {}
    for pattern, failing in CORPUS:
        compiled = re.compile(regex.translate(pattern, "python"))
        found = [compiled.search(v) is not None for v in VALUES]
        if pattern == CORPUS[5][0]:  # ^[[:alpha:]]+$: its count is worked out in test_regex_corpus.py
            failing = len(VALUES) - _by_hand_alpha()
        if failing is not None:
            assert found.count(False) == failing, pattern
        out[pattern] = found
    return out


#: what each warehouse refuses, and why (asserted in the message)
REFUSED_ON = {
    "snowflake": ("word boundaries", "lookaheads", "^ and $"),
    "bigquery": ("\\m and \\M", "lookaheads"),
    "trino": (),
    "databricks": (),
}


def _spellings(dialect: str) -> tuple[dict[str, object], dict[str, str]]:
    written: dict[str, object] = {}
    refused: dict[str, str] = {}
    for pattern, _ in CORPUS:
        try:
            written[pattern] = (regex_warehouse.snowflake_regexes(pattern) if dialect == "snowflake"
                                else regex_warehouse.translate(pattern, dialect))
        except regex.RegexError as exc:
            refused[pattern] = str(exc)
    return written, refused


@pytest.mark.parametrize("dialect", ["trino", "databricks"])
def test_java_spelling_means_the_same_in_java_util_regex(dialect):
    """Databricks runs java.util.regex itself; Trino's Joni reads the same Java syntax."""
    reference = _reference()
    written, refused = _spellings(dialect)
    assert not refused  # lookarounds exist in Java: nothing is refused
    patterns = list(written)
    results = regex_engines.java_find([str(written[p]) for p in patterns], VALUES)
    for pattern, found in zip(patterns, results, strict=True):
        assert found == reference[pattern], (pattern, written[pattern], found)


def test_bigquery_spelling_means_the_same_in_re2():
    reference = _reference()
    written, refused = _spellings("bigquery")
    for pattern, spelled in written.items():
        assert regex_engines.re2_search(str(spelled), VALUES) == reference[pattern], (pattern, spelled)
    assert {p for p in refused} == {p for p, _ in CORPUS if re.search(r"\\[mM]|\(\?[=!]", p)}
    for message in refused.values():
        assert any(why in message for why in REFUSED_ON["bigquery"]), message
    assert r"\bcat\b" in written  # RE2's own \b is the same ASCII word boundary


def test_snowflake_spelling_means_the_same_as_a_whole_value_match():
    """Each ERE is matched against the WHOLE value, as Snowflake does, by glibc's POSIX regex (which also
    shows why ^ and $ are never written: glibc matches them next to an inner newline) and by Python's re."""
    reference = _reference()
    written, refused = _spellings("snowflake")
    for message in refused.values():
        assert any(why in message for why in REFUSED_ON["snowflake"]), message
    assert len(written) >= len(CORPUS) - 12, sorted(refused)
    flat = [(pattern, sentinel, ere) for pattern, parts in written.items() for sentinel, ere in parts]  # type: ignore[attr-defined]
    plain = regex_engines.posix_full_match([ere for _, _, ere in flat], VALUES)
    ended = regex_engines.posix_full_match([ere for _, _, ere in flat], [v + regex_warehouse.SENTINEL for v in VALUES])
    got: dict[str, list[bool]] = {p: [False] * len(VALUES) for p in written}
    for (pattern, sentinel, ere), a, b in zip(flat, plain, ended, strict=True):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", FutureWarning)  # "possible nested set" for a literal [ in brackets
            compiled = re.compile(ere, re.S)
        subjects = [v + regex_warehouse.SENTINEL if sentinel else v for v in VALUES]
        python_row = [compiled.fullmatch(s) is not None for s in subjects]
        row = b if sentinel else a
        if row == "ERR":  # glibc's C.UTF-8 has no collation order for non-ASCII range ends ([à-ÿ]); Python's re only
            assert re.search(r"[^\x00-\x7f]-|-[^\x00-\x7f]", ere), (pattern, ere)
            row = python_row
        assert python_row == row, (pattern, ere)
        got[pattern] = [x or y for x, y in zip(got[pattern], row, strict=True)]
    for pattern in written:
        assert got[pattern] == reference[pattern], (pattern, written[pattern])


def test_a_refused_pattern_is_a_check_error_naming_the_reason_never_another_answer():
    suite_checks = warehouse_sql.suite_checks()
    from watchdog.scan.check_types.pattern import Pattern, PatternOptions

    check = Pattern("sales.orders", PatternOptions(column="notes", regex=r"\bTODO\b"), {})
    check.column_kinds = dict(warehouse_sql.SCHEMA["sales.orders"])
    for dialect, refused in (("snowflake", True), ("bigquery", False), ("trino", False), ("databricks", False)):
        result = plan([*suite_checks, check], dialect)
        if refused:
            assert "word boundaries" in result.errors[check.name] and "Snowflake" in result.errors[check.name]
        else:
            assert check.name not in result.errors


# ------------------------------------------------------------------- NULLs, quoting, LIMIT, dates, rates


def test_counts_are_null_safe_and_portable(rendered):
    """Failing rows are counted as SUM(CASE WHEN cond THEN 1 ELSE 0 END): a NULL condition counts 0 (never
    COUNT_IF / COUNTIF, which not every engine spells alike), and SUM over no rows (NULL) is read as 0 by
    watchdog. Compound keys that may hold a NULL are matched NULL-safely (IS NOT DISTINCT FROM)."""
    for dialect in DIALECTS:
        for label, sql in rendered[dialect]:
            assert not re.search(r"\bCOUNT_?IF\(", sql, re.I), (dialect, label)
        tree = _aggregate_pass(rendered, dialect)
        for node in tree.find_all(exp.Sum):
            case = node.this
            assert isinstance(case, exp.Case) and case.args["default"].this == "0", node.sql(dialect=dialect)
        fd_label = "finding sql: sales.orders.zip->city.functional_dependency"
        [fd] = [s for label, s in rendered[dialect] if label == fd_label]
        assert "IS NOT DISTINCT FROM" in fd


def test_identifiers_are_quoted_in_each_dialects_style_and_keep_their_case():
    """Backticks in BigQuery and Databricks, double quotes in Trino and Snowflake. Quoted names keep their
    case: Snowflake folds UNquoted names to upper case, so a suite names Snowflake tables as stored
    (usually ORDERS), and watchdog never folds them itself."""
    table = sqlbuild.table("SALES.Orders")
    expected = {"trino": '"SALES"."Orders"', "snowflake": '"SALES"."Orders"', "bigquery": "`SALES`.`Orders`",
                "databricks": "`SALES`.`Orders`"}
    for dialect, text in expected.items():
        assert table.sql(dialect=dialect) == text
    project = sqlbuild.table("my-project.sales.orders")  # BigQuery's project.dataset.table
    assert project.sql(dialect="bigquery") == "`my-project`.`sales`.`orders`"


def test_samples_are_limited_with_limit(rendered):
    for dialect in DIALECTS:
        limited = [sql for label, sql in rendered[dialect] if label.startswith("sample") or "sample rows" in label]
        assert len(limited) >= 7
        for sql in limited:
            assert sqlglot.parse_one(sql, read=dialect).find(exp.Limit) is not None
            assert re.search(r" LIMIT \d+;?$", sql) and " TOP " not in sql and " FETCH " not in sql, sql


def test_rates_and_ages_are_computed_by_watchdog_not_the_engine(rendered):
    """No division (integer division differs: Trino and Databricks' DIV vs BigQuery's /) and no clock in the
    statements: freshness reads MAX(col) and watchdog subtracts it from its own UTC clock."""
    for dialect in DIALECTS:
        for label, sql in rendered[dialect]:
            tree = sqlglot.parse_one(sql, read=dialect)
            assert tree.find(exp.Div, exp.IntDiv) is None, (dialect, label)
            assert tree.find(exp.CurrentTimestamp, exp.CurrentDate) is None, (dialect, label)
        [fresh] = [s for label, s in rendered[dialect] if label == "finding sql: sales.orders.created_at.freshness"]
        assert sqlglot.parse_one(fresh, read=dialect).find(exp.Max) is not None


def test_dates_compare_with_typed_values_where_the_engine_needs_them(rendered):
    """Trino compares no text with a DATE or TIMESTAMP (it is an error there), so bounds and values are cast;
    Snowflake, BigQuery and Databricks convert an ISO literal to the column's type themselves."""
    for dialect in DIALECTS:
        [sql] = [s for label, s in rendered[dialect] if label == "finding sql: sales.orders.ship_date.range"]
        if dialect == "trino":
            assert "CAST('2020-01-01' AS DATE)" in sql and "CAST('2030-12-31' AS DATE)" in sql
        else:
            assert "< '2020-01-01'" in sql and "CAST(" not in sql
    [bq] = [s for label, s in rendered["bigquery"] if label.startswith("anomaly buckets (week)")]
    assert "DATETIME_TRUNC(CAST(`created_at` AS DATETIME), WEEK(MONDAY))" in bq  # weeks from Monday, as elsewhere


# ------------------------------------------------------------------------------------- connecting


@pytest.mark.parametrize("dialect", DIALECTS)
def test_without_the_driver_connecting_is_one_clear_line(dialect):
    warehouse = WAREHOUSES[dialect]
    with pytest.raises(DatabaseUnavailable) as caught:
        Sandbox(warehouse.example_url)
    message = str(caught.value)
    assert message == (f"the {warehouse.label} driver is not installed: pip install '{warehouse.package}' "
                       f"(watchdog writes {warehouse.label} SQL, generated SQL only, not tested against a live server)")
    assert "PASSWORD" not in message and "TOKEN" not in message


def test_the_cli_says_it_in_one_line(run_cli):
    result = run_cli("query", "--db", "snowflake://me:s3cret@acct/DB/PUBLIC", "SELECT 1")
    assert result.returncode == 3
    assert result.stderr.strip() == ("error: the Snowflake driver is not installed: pip install 'snowflake-sqlalchemy' "
                                     "(watchdog writes Snowflake SQL, generated SQL only, not tested against a live "
                                     "server)")
    assert "s3cret" not in result.stderr + result.stdout


class _Catalogue:
    """Only what ``with_column_types`` reads of a sandbox: its dialect and a catalogue."""

    def __init__(self, dialect: str):
        self.dialect = dialect
        self.read: list[list[str]] = []

    def column_types(self, table: list[str]) -> dict[str, tuple[str, str]]:
        self.read.append(table)
        return dict(warehouse_sql.SCHEMA[".".join(table)])


@pytest.mark.parametrize("dialect, reads", [("snowflake", True), ("bigquery", True), ("databricks", True),
                                            ("trino", False), ("postgres", False), ("strictsqlite", False)])
def test_unique_keys_learn_their_types_where_columns_carry_collations(dialect, reads):
    from watchdog.scan.scanner import with_column_types

    [unique] = [c for c in warehouse_sql.suite_checks() if c.name == "sales.customers.email.unique"]
    unique.column_kinds = {}
    box = _Catalogue(dialect)
    [typed] = with_column_types(box, [unique])  # type: ignore[arg-type]
    assert bool(box.read) == reads
    assert (typed.column_kind("email") == ("text", "varchar")) == reads


class _NoServer:
    dialect_name = "generic"

    def run(self, *args, **kwargs):  # pragma: no cover - the policy refuses before anything runs
        raise AssertionError("not reached")

    def close(self) -> None:
        pass


@pytest.mark.parametrize("dialect", DIALECTS)
def test_the_url_scheme_selects_the_dialect_and_its_policy(dialect):
    box = Sandbox(WAREHOUSES[dialect].example_url, session=_NoServer())
    assert box.dialect == dialect and box.policy.dialect == dialect


DANGEROUS = {
    "trino": ["SELECT * FROM TABLE(system.query(query => 'DROP TABLE t'))", "CALL system.runtime.kill_query('1')",
              "INSERT INTO t SELECT 1", "SELECT sleep(1)"],
    "snowflake": ["SELECT SYSTEM$CANCEL_ALL_QUERIES(1)", "SELECT * FROM TABLE(RESULT_SCAN('x'))",
                  "CREATE TABLE t AS SELECT 1", "SELECT SYSTEM$WAIT(10)"],
    "bigquery": ["SELECT * FROM EXTERNAL_QUERY('c', 'SELECT 1')", "DELETE FROM d.t WHERE TRUE",
                 "SELECT SESSION_USER()"],
    "databricks": ["SELECT reflect('java.lang.Runtime', 'getRuntime')", "SELECT java_method('a', 'b')",
                   "SELECT * FROM read_files('/etc/passwd')", "CACHE TABLE t", "SELECT http_request('x')"],
}


@pytest.mark.parametrize("dialect", DIALECTS)
def test_the_policy_refuses_what_reaches_outside_a_read(dialect):
    policy = ReadOnlyPolicy(dialect)
    for sql in DANGEROUS[dialect]:
        with pytest.raises(QueryRefused):
            policy.vet(sql)
    policy.vet("SELECT COUNT(*) FROM t WHERE x IS NULL")
