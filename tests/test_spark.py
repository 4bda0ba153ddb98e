"""Spark SQL through a real Spark Thrift Server (local mode): the sandbox and the scan, against PostgreSQL.

One server per test session (tests/spark_server.py, or $WATCHDOG_TEST_SPARK_URL). Spark statements are
slow (a job each), so the cases are batched into few scans: the counting-rule suite, the exact-text
suite, the regex corpus and the Great Expectations oracle each run as one scan on Spark and on PostgreSQL,
and every number must be the same on both (and GX's where GX says). The function allowlist is checked
against the server's own ``SHOW FUNCTIONS``; the Spark attack corpus (tests/attacks/spark.yaml) runs
through the sandbox, and what reaches the server must change nothing.
"""

from __future__ import annotations

import glob
import threading
import time
from pathlib import Path
from typing import Any

import pytest
import yaml

from tests import test_batching as batching
from tests import test_counting_rules as rules
from tests import test_oracle_great_expectations as gx
from tests import test_regex_corpus as regex_corpus
from tests.spark_server import SparkDatabase, create_spark_database
from tests.test_attack_corpus import ATTACKS, GRACE_S, TMP_PLACEHOLDER, WORDS, load_cases
from tests.test_function_allowlist import _refused_everywhere
from watchdog.errors import QueryError, QueryRefused, QueryTimeout, SandboxError
from watchdog.findings import Finding
from watchdog.sandbox import Sandbox
from watchdog.sandbox import cancel as cancelling
from watchdog.sandbox.functions import VOLATILE_ALLOWED, allowed_functions
from watchdog.sandbox.functions.spark import SPARK_OPERATORS, SPARK_REFUSED
from watchdog.sandbox.policy import ReadOnlyPolicy
from watchdog.scan import sqlbuild
from watchdog.scan.scanner import scan
from watchdog.scan.suites import SuiteError, load_suite, load_suites

SPARK_ATTACKS = load_cases("spark.yaml")
#: Spark is slower than the other servers: a statement gets this long, and must be over GRACE_S later
TIMEOUT_S = 5.0
#: 50 million SHA-512 hashes (``big`` joined with the 10 rows of ``t``): tens of seconds on any machine,
#: in a job whose tasks stop when cancelled (they check between input batches of ``big``)
BOMB = "SELECT count(*) FROM big, t WHERE sha2(concat(CAST(big.id AS STRING), t.s), 512) LIKE '%abc%'"
BIG_ROWS = 5_000_000


@pytest.fixture(scope="module")
def spark_db(spark_admin_url: str) -> Any:
    """One Spark database for this module's scans (tables of every suite side by side)."""
    db = create_spark_database(spark_admin_url)
    yield db
    db.close()


def by_name(findings: list[Finding]) -> dict[str, Finding]:
    return {f.name: f for f in findings}


def same_numbers(spark: Finding, pg: Finding) -> bool:
    if spark.status != pg.status or spark.failing != pg.failing or spark.total != pg.total or spark.rate != pg.rate:
        return False
    if spark.check == "freshness" and spark.observed is not None and pg.observed is not None:
        return abs(spark.observed - pg.observed) < 600  # an age: the two scans run seconds apart
    return spark.observed == pg.observed


# ---------------------------------------------------------------- every counting rule, as on PostgreSQL


def test_counting_rules_give_the_postgresql_numbers(spark_db: SparkDatabase, make_database, tmp_path: Path):
    pg = make_database("postgresql")
    case = tmp_path / "case.yaml"
    case.write_text(rules.CASE_SUITE, encoding="utf-8")
    docs = {}
    for db in (spark_db, pg):
        # a quote inside a string: 'o''hare' in standard SQL is 'o' 'hare' to Spark, which joins the two
        suite = tmp_path / f"suite_{db.kind}.yaml"
        text = rules.SUITE.replace("'o''hare'", "'o\\'hare'") if db.kind == "spark" else rules.SUITE
        suite.write_text(text, encoding="utf-8")
        rules.load_fixture(db)
        db.create_table("words", {"w": "text"}, [("active",), ("Active",), ("active ",), ("inactive",)])
        checks = [c for loaded in load_suites([suite, case]) for c in loaded.checks]
        with Sandbox(db.url) as box:  # samples off: the counts are what is compared, and Spark statements are slow
            docs[db.kind] = by_name(scan(box, checks, sample=0).findings)
    spark, postgres = docs["spark"], docs["postgresql"]
    assert set(spark) == set(postgres) and len(spark) >= 40
    differ = {name: (rules.counts(spark[name]), rules.counts(postgres[name]))
              for name in spark if not same_numbers(spark[name], postgres[name])}
    assert differ == {}
    # a few worked out by hand (tests/test_counting_rules.py): the same everywhere is not the same wrong answer
    assert rules.counts(spark["people.email.not_null"]) == ("fail", 3, 24, 0.125)
    assert rules.counts(spark["words.w.accepted_values"]) == ("fail", 2, 4, 0.5)
    assert rules.counts(spark["words.w.unique"]) == ("pass", 0, 4, 0.0)
    assert {name for name, f in spark.items() if f.status == "error"} == set(rules.BROKEN)
    assert rules.counts(spark["nulls_quoted_where"]) == ("fail", 2, 2, 1.0)
    with pytest.raises(QueryRefused, match="side by side"):  # the standard spelling means 'ohare' there: refused
        sqlbuild.condition("region = 'o''hare'", "spark")


def test_regex_corpus_fails_the_same_rows_as_on_postgresql(spark_db: SparkDatabase, make_database, tmp_path: Path):
    checks = [{"pattern": {"column": "v", "regex": p, "name": f"p{i}"}} for i, (p, _) in enumerate(regex_corpus.CORPUS)]
    path = tmp_path / "regex.yaml"
    path.write_text(yaml.safe_dump({"tables": {"rx_words": checks}}, allow_unicode=True), encoding="utf-8")
    [loaded] = load_suites([path])
    failing = {}
    for db in (spark_db, make_database("postgresql")):
        db.create_table("rx_words", {"id": "int", "v": "text"}, list(enumerate(regex_corpus.VALUES)))
        sent: list[str] = []
        with Sandbox(db.url) as box:
            box.on_execute(sent.append)
            doc = scan(box, loaded.checks, sample=0)
        assert [f.name for f in doc.findings if f.status == "error"] == []
        failing[db.kind] = {f.name: f.failing for f in doc.findings}
        if db.kind == "spark":
            assert len(sent) == 1  # all the patterns in one aggregate statement
    assert {n: (failing["spark"][n], failing["postgresql"][n]) for n in failing["spark"]
            if failing["spark"][n] != failing["postgresql"][n]} == {}
    by_hand = {f"p{i}": n for i, (_, n) in enumerate(regex_corpus.CORPUS) if n is not None}
    by_hand["p5"] = len(regex_corpus.VALUES) - regex_corpus._by_hand_alpha()  # as test_regex_corpus.py counts it
    assert {n: failing["spark"][n] for n in by_hand} == by_hand


def test_great_expectations_cases_match_on_spark(spark_db: SparkDatabase, tmp_path: Path):
    """The GX cases compared on PostgreSQL, batched into one scan on Spark: GX's counts and outcomes."""
    cases = [c for c in gx.COMPARED if c.backend == "postgresql"]
    tables = {c.table.name: c.table for c in cases}
    for table in tables.values():
        spark_db.create_table(table.name, table.columns, table.rows)
    checks, expected_errors = [], set()
    for n, case in enumerate(cases):
        kind, options = next(iter(case.entry.items()))  # type: ignore[union-attr]
        entry = {kind: {**options, "name": f"gx{n}"}}
        path = tmp_path / f"gx{n}.yaml"
        path.write_text(yaml.safe_dump({"tables": {case.table.name: [entry]}}, allow_unicode=True), encoding="utf-8")
        try:
            checks.extend(load_suite(path).checks)
        except SuiteError:
            expected_errors.add(f"gx{n}")
    with Sandbox(spark_db.url) as box:
        found = by_name(scan(box, checks, sample=0).findings)
    wrong = {}
    for n, case in enumerate(cases):
        name = f"gx{n}"
        got = found.get(name)
        if case.raises:
            if not (name in expected_errors or (got is not None and got.status == "error")):
                wrong[case.id] = f"GX raises; we said {got.status if got else None}"
            continue
        if got is None or got.error is not None:
            wrong[case.id] = f"no finding or an error: {got.error if got else expected_errors}"
        elif (case.failing is not None and got.failing != case.failing) or got.total != len(case.table.rows) or (
                case.observed is not None and got.observed != case.observed) or (
                got.status != ("pass" if case.success else "fail")):
            wrong[case.id] = (got.status, got.failing, got.observed, case.success, case.failing, case.observed)
    assert wrong == {}
    assert len(cases) >= 40


def test_batching_is_one_aggregate_statement_per_table(spark_db: SparkDatabase, make_database, tmp_path: Path):
    pg = make_database("postgresql")
    both = batching.load_checks(tmp_path, batching.AGGREGATE_CHECKS + batching.KEYED_CHECKS)
    tallies = {}
    for db in (spark_db, pg):
        batching.load_shop(db, nulls_in_email=2, negative_amounts=1)
        doc, sent, dialect = batching.scan_recording(db, batching.load_checks(tmp_path, batching.AGGREGATE_CHECKS),
                                                     sample=0)
        assert len(sent) == 1 and batching.is_table_batch(batching.parse(sent[0], dialect), "orders"), sent
        assert [f.failing for f in doc.findings][:2] == [0, 2]
        doc, sent, dialect = batching.scan_recording(db, both, sample=0)
        tallies[db.kind] = (batching.kinds(sent, dialect), [(f.status, f.failing) for f in doc.findings])
    assert tallies["spark"] == tallies["postgresql"]


def test_catalog_types_read_as_on_postgresql(spark_db: SparkDatabase, make_database):
    columns = {"i": "int", "b": "bigint", "t": "text", "r": "real", "ts": "timestamp", "d": "date"}
    generic = {}
    for db in (spark_db, make_database("postgresql")):
        db.create_table("typed", columns)
        with Sandbox(db.url) as box:
            generic[db.kind] = [(c["name"], c["generic"]) for c in box.columns("typed")]
            with pytest.raises(QueryError, match="no such table"):  # a name is only a name (quoted in DESCRIBE)
                box.columns("typed; DROP TABLE typed")
    assert generic["spark"] == generic["postgresql"]


# ---------------------------------------------------------------- the function allowlist vs the catalogue


def test_every_function_the_server_has_is_classified(spark_db: SparkDatabase):
    with spark_db.engine.connect() as conn:
        listed = {str(r[0]) for r in conn.exec_driver_sql("SHOW FUNCTIONS").all()}
    allowed = allowed_functions("spark")
    refused = frozenset().union(*SPARK_REFUSED.values())
    assert not allowed & refused
    unclassified = sorted(listed - allowed - refused - SPARK_OPERATORS)
    assert unclassified == [], "classify these in watchdog/sandbox/functions/spark.py"
    assert {"reflect", "java_method", "try_reflect"} <= refused
    policy = ReadOnlyPolicy("spark")
    let_through = {name: _refused_everywhere(policy, name) for name in sorted(listed - allowed - SPARK_OPERATORS)}
    assert {n: forms for n, forms in let_through.items() if forms} == {}
    # nothing volatile is allowed unless reviewed: every allowed name the server lists is either known
    # deterministic (not a clock/random/session name) or in VOLATILE_ALLOWED
    volatile_words = ("rand", "uuid", "current", "now", "user", "version", "shuffle", "partition_id", "uniform",
                      "monotonically", "localtimestamp", "curdate")
    looks_volatile = {n for n in allowed & listed if any(w in n for w in volatile_words)}
    assert looks_volatile <= VOLATILE_ALLOWED["spark"]


# ---------------------------------------------------------------- the attack corpus on the server


class SparkTarget:
    """The attack fixture database, a sandbox on it, and the state nothing may change."""

    def __init__(self, db: SparkDatabase, tmp_prefix: str):
        self.db, self.tmp_prefix = db, tmp_prefix
        self.sandbox = Sandbox(db.url, timeout_s=TIMEOUT_S, max_rows=200, max_bytes=1_000_000)

    def state(self) -> dict[str, Any]:
        with self.db.engine.connect() as conn:
            q = lambda sql: [tuple(r) for r in conn.exec_driver_sql(sql).all()]  # noqa: E731
            return {
                "tables": q("SHOW TABLES"),
                "data": q("SELECT (SELECT count(*) FROM t), (SELECT sum(hash(id, s)) FROM t), "
                          "(SELECT count(*) FROM u), (SELECT sum(hash(id, v)) FROM u), (SELECT count(*) FROM big)"),
                "databases": q("SHOW DATABASES"),
                "user functions": q("SHOW USER FUNCTIONS"),
                "tmp files": sorted(glob.glob(self.tmp_prefix + "*")),
            }

    def session(self) -> Any:
        """What the sandbox's own session sees: time zone, database, and a plain read."""
        return self.sandbox.query("SELECT current_timezone(), current_database(), count(*) FROM t",
                                  timeout_s=30).rows


@pytest.fixture(scope="module")
def target(spark_admin_url: str, tmp_path_factory: pytest.TempPathFactory) -> Any:
    db = create_spark_database(spark_admin_url, prefix="wd_spark_attack")
    db.create_table("t", {"id": "int", "s": "text"}, [(i + 1, w) for i, w in enumerate(WORDS)])
    db.create_table("u", {"id": "int", "v": "text"}, [(1, "one"), (2, "two")])
    db.run(f"CREATE TABLE big USING parquet AS SELECT id FROM range(0, {BIG_ROWS}, 1, 20)")
    tgt = SparkTarget(db, str(tmp_path_factory.mktemp("spark_attack") / "wd_"))
    tgt.baseline, tgt.session_baseline = tgt.state(), tgt.session()  # type: ignore[attr-defined]
    yield tgt
    tgt.sandbox.close()
    db.close()


def test_the_spark_corpus_is_well_formed():
    assert len(SPARK_ATTACKS) >= 80 and len({c.id for c in SPARK_ATTACKS}) == len(SPARK_ATTACKS)
    assert all(c.dialects == ("spark",) and c.why and c.expect in ("refused", "harmless") for c in SPARK_ATTACKS)


#: generic corpus cases refused on PostgreSQL that mean something harmless to Spark, and why
HARMLESS_ON_SPARK = {
    "backslash-quote-standard": "to Spark \\' is an escaped quote: one string, as spark-backslash-quote shows",
    "pg-hba-file-rules-view": "a PostgreSQL catalog view: no such table on Spark",
    "pg-ident-file-mappings-view": "a PostgreSQL catalog view: no such table on Spark",
    "pg-file-settings-view": "a PostgreSQL catalog view: no such table on Spark",
    "pg-authid-hashes": "a PostgreSQL catalog table: no such table on Spark",
}


def test_the_generic_corpus_refused_on_postgresql_is_refused_on_spark():
    """The shared corpus (writes, tricks, PostgreSQL hazards, exhaustion) through the Spark parser."""
    passed = []
    for case in [c for c in ATTACKS if c.expect == "refused" and "postgresql" in c.dialects]:
        try:
            ReadOnlyPolicy("spark").vet(case.sql.replace(TMP_PLACEHOLDER, "/tmp/wd_never_"))
        except QueryRefused:
            continue
        passed.append(case.id)
    assert sorted(passed) == sorted(HARMLESS_ON_SPARK)


@pytest.mark.parametrize("case", [pytest.param(c, id=c.id) for c in SPARK_ATTACKS if c.expect == "refused"])
def test_the_parser_refuses(case):
    with pytest.raises(QueryRefused):
        ReadOnlyPolicy("spark").vet(case.sql.replace(TMP_PLACEHOLDER, "/tmp/wd_never_"))


def test_what_reaches_the_server_changes_nothing(target):
    """The harmless cases run on the server, within the deadline; afterwards nothing changed."""
    outcomes = {}
    for case in [c for c in SPARK_ATTACKS if c.expect == "harmless"]:
        start = time.monotonic()
        try:
            result = target.sandbox.query(case.sql.replace(TMP_PLACEHOLDER, target.tmp_prefix))
            outcomes[case.id] = f"{len(result.rows)} rows" + (" (capped)" if result.truncated else "")
        except SandboxError as exc:
            outcomes[case.id] = type(exc).__name__
        elapsed = time.monotonic() - start
        assert elapsed < TIMEOUT_S + GRACE_S + 1.5, (case.id, elapsed)  # + the connection a cancel may cost
    assert outcomes["spark-scan-bomb"] == "QueryTimeout"
    assert outcomes["spark-rows-bomb"] == "200 rows (capped)"
    assert outcomes["spark-backslash-quote"] == "1 rows"
    changed = {k: v for k, v in target.state().items() if v != target.baseline[k]}
    assert changed == {}
    assert target.session() == target.session_baseline


def test_legitimate_reads_return_their_rows(target):
    query = lambda sql, **kw: target.sandbox.query(sql, timeout_s=60, **kw)  # noqa: E731 - a loaded machine
    assert query("SELECT count(*) FROM t").rows == [(10,)]
    assert query("SELECT id FROM t ORDER BY id DESC LIMIT 3;").rows == [(10,), (9,), (8,)]
    assert query("WITH x AS (SELECT id FROM t WHERE s LIKE 'a%') SELECT count(*) FROM x -- two").rows == [(2,)]
    assert query("SELECT transform(array(1, 2), x -> x * 10), 'it\\'s'").rows == [("[10,20]", "it's")]
    assert query("SELECT max(id) OVER (), s FROM t ORDER BY s LIMIT 1").rows == [(10, "apple")]
    result = query("SELECT id FROM t ORDER BY id", max_rows=4)
    assert result.rows == [(1,), (2,), (3,), (4,)] and result.truncated


# ---------------------------------------------------------------- the deadline cancels on the server


def test_timeout_cancels_the_statement_on_the_server(target):
    start = time.monotonic()
    with pytest.raises(QueryTimeout):
        target.sandbox.query(BOMB, timeout_s=2)
    assert time.monotonic() - start < 2 + GRACE_S + 0.5  # the poll interval and the cancel call
    # the bomb's tasks would hold both cores for a long while: a plain read answers soon only if they are gone
    start = time.monotonic()
    assert target.sandbox.query("SELECT count(*) FROM u", timeout_s=60).rows == [(2,)]
    assert time.monotonic() - start < 10


def test_cancel_running_stops_the_statement(target):
    errors: list[Exception] = []

    def run() -> None:
        try:
            target.sandbox.query(BOMB, timeout_s=60)
        except Exception as exc:  # noqa: BLE001 - the test looks at it
            errors.append(exc)

    worker = threading.Thread(target=run)
    worker.start()
    time.sleep(1.5)
    try:
        assert cancelling.cancel_running() >= 1
        worker.join(timeout=15)
    finally:
        cancelling.resume()
    assert not worker.is_alive() and len(errors) == 1 and isinstance(errors[0], QueryError), errors
    assert target.sandbox.query("SELECT count(*) FROM u", timeout_s=60).rows == [(2,)]


# ---------------------------------------------------------------- the diagnosis: the same facts as elsewhere


@pytest.mark.timeout(900)  # a Spark job per statement, and the server may start with this test
def test_the_diagnosis_gives_the_same_facts_on_spark(spark_admin_url: str, tmp_path: Path):
    from tests import test_diagnose_engines as diagnosis

    db = create_spark_database(spark_admin_url, prefix="wd_diag")
    try:
        diagnosis.load_fixture(db)
        suite = tmp_path / "suite.yaml"
        suite.write_text(diagnosis.SUITE, encoding="utf-8")
        # Spark runs the CTE of failing rows once per member of the union (it does not materialize it)
        findings, found, sent = diagnosis.run_diagnosis(db.url, suite, timeout_s=300)
        assert not [v["error"] for v in found.values() if "error" in v]
        diagnosis.check_facts(findings, found, sent)
    finally:
        db.close()


def test_group_by_gives_the_hand_computed_groups(spark_db: SparkDatabase, tmp_path: Path):
    """``group_by`` on Spark: the figures tests/test_group_by.py works out by hand (a NULL group, 'eu' apart from
    'EU', 25 groups of which 20 are listed), and the recorded SQL selects the same rows."""
    from tests import test_group_by as grouping

    grouping.load_into(spark_db, "gb_")
    suite = tmp_path / "grouped.yaml"
    suite.write_text(grouping.suite_text("gb_"), encoding="utf-8")
    checks = [c for loaded in load_suites([suite]) for c in loaded.checks]
    with Sandbox(spark_db.url, timeout_s=300) as box:  # a loaded machine: the grouped job may be slow
        found = by_name(scan(box, checks, sample=0).findings)
        rows = box.query(found["half"].sql, max_rows=100).as_dicts()
    grouping.assert_groups(found, "gb_")
    assert sorted(r["id"] for r in rows) == [5, 11, 12]


def test_column_globs_expand_against_the_spark_catalogue(spark_db: SparkDatabase, tmp_path: Path):
    """Column globs and lists on Spark: the checks and figures tests/test_column_globs.py works out by hand."""
    from tests import test_column_globs as globs

    spark_db.create_table("gb_items", {"id": "int", "code_a": "text", "code_b": "text", "label": "text"}, globs.ROWS)
    suite = tmp_path / "globs.yaml"
    suite.write_text(globs.SUITE.replace("  items:", "  gb_items:"), encoding="utf-8")
    checks = [c for loaded in load_suites([suite]) for c in loaded.checks]
    with Sandbox(spark_db.url, timeout_s=300) as box:  # a loaded machine: the grouped job may be slow
        found = by_name(scan(box, checks, sample=0).findings)
    expected = {name.replace("items.", "gb_items.", 1): want for name, want in globs.EXPECTED.items()}
    assert {name: (f.status, f.failing) for name, f in found.items()} == expected
    assert "its columns: id, code_a, code_b, label" in found["gb_items.nothing_*.range"].error
