"""How many statements a scan sends, and what they are: few aggregate reads, never rows to count."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
import sqlglot
from sqlglot import exp

from tests.dbs import TestDatabase
from watchdog.findings import FindingsDoc
from watchdog.sandbox import Sandbox
from watchdog.scan.check_types import Aggregate, Check
from watchdog.scan.planner import batch_statements, plan
from watchdog.scan.samples import KEYED_DIALECTS
from watchdog.scan.scanner import scan, with_column_types
from watchdog.scan.suites import load_suites

NOW = datetime.now(UTC).replace(tzinfo=None, microsecond=0)
ORDERS = {"id": "int", "email": "text", "code": "text", "status": "text", "amount": "real", "customer_id": "int",
          "created_at": "timestamp"}
STATUSES = ["open", "paid", "shipped"]


def order_rows(nulls_in_email: int = 0, negative_amounts: int = 0) -> list[tuple]:
    """30 clean orders; the first ``nulls_in_email`` lose their email, the next ``negative_amounts`` go negative."""
    rows = []
    for i in range(1, 31):
        email = None if i <= nulls_in_email else f"buyer{i}@shop.io"
        amount = -5.0 if nulls_in_email < i <= nulls_in_email + negative_amounts else 10.0 * i
        rows.append((i, email, f"OR-{i:04d}", STATUSES[i % 3], amount, 1 + i % 4, NOW - timedelta(hours=i)))
    return rows


AGGREGATE_CHECKS = """
tables:
  orders:
    - not_null: id
    - not_null: email
    - not_null: code
    - pattern: {column: code, regex: '^OR-[0-9]{4}$'}
    - accepted_values: {column: status, values: [open, paid, shipped]}
    - range: {column: amount, min: 0}
    - row_count: {min: 1}
    - freshness: {column: created_at, max_age: 1d}
"""
KEYED_CHECKS = """
    - unique: id
    - unique: [email, code]
    - foreign_key: {column: customer_id, references: customers.id}
"""


def load_shop(db: TestDatabase, **damage: int) -> None:
    db.create_table("orders", ORDERS, order_rows(**damage))
    db.create_table("customers", {"id": "int"}, [(1,), (2,), (3,), (4,)])


def load_checks(tmp_path: Path, text: str) -> list[Check]:
    path = tmp_path / "suite.yaml"
    path.write_text(text, encoding="utf-8")
    return [check for suite in load_suites([path]) for check in suite.checks]


def scan_recording(db: TestDatabase, checks: list[Check], sample: int = 5) -> tuple[FindingsDoc, list[str], str]:
    """Scan and return the findings, every statement sent to the database, and the sqlglot dialect."""
    sent: list[str] = []
    with Sandbox(db.url) as sandbox:
        sandbox.on_execute(sent.append)
        doc = scan(sandbox, checks, sample=sample)
        return doc, sent, sandbox.dialect


def parse(sql: str, dialect: str) -> exp.Expression:
    return sqlglot.parse_one(sql, read=dialect)


def is_aggregate_read(tree: exp.Expression) -> bool:
    """A SELECT whose every output column is an aggregate and that has no GROUP BY: it returns exactly one row."""
    return (isinstance(tree, exp.Select) and not tree.args.get("group")
            and all(_aggregate(p.unalias()) for p in tree.expressions))


def _aggregate(node: exp.Expression) -> bool:
    """An aggregate call, with or without a FILTER clause (PostgreSQL's ``COUNT(*) FILTER (WHERE c)``), or an
    expression of aggregates only (``CASE WHEN COUNT(k) <= 100 THEN GROUP_CONCAT(k) END``)."""
    if isinstance(node, exp.AggFunc) or (isinstance(node, exp.Filter) and isinstance(node.this, exp.AggFunc)):
        return True
    return node.find(exp.AggFunc) is not None and all(
        col.find_ancestor(exp.AggFunc, exp.Filter) is not None for col in node.find_all(exp.Column))


def is_table_batch(tree: exp.Expression, table: str) -> bool:
    """An aggregate SELECT straight over ``table``: no sub-query, join, GROUP BY or EXISTS anywhere; or, where the
    pass also returns the failing rows' keys (SQLite), the same over one row-by-row derived table that reads
    ``table`` once (``FROM (SELECT ... FROM table LIMIT -1) AS wd_rows``) and aggregates nothing itself."""
    tables = [t.name for t in tree.find_all(exp.Table)]
    source = tree.args["from_"].this if isinstance(tree, exp.Select) and tree.args.get("from_") else None
    if isinstance(source, exp.Subquery) and source.alias == "wd_rows" and isinstance(source.this, exp.Select):
        inner = source.this
        return (is_aggregate_read(tree) and tables == [table] and not inner.find(exp.AggFunc)
                and not any(inner.find(kind) for kind in (exp.Subquery, exp.Exists, exp.Group, exp.Join))
                and not tree.find(exp.Group))
    return (is_aggregate_read(tree) and tables == [table]
            and not any(tree.find(kind) for kind in (exp.Subquery, exp.Exists, exp.Group, exp.Join)))


def _in_subquery(tree: exp.Expression) -> bool:
    """MySQL/MariaDB's anti-join form: ``NOT key IN (SELECT ...)`` (see foreign_key)."""
    return any(node.args.get("query") is not None for node in tree.find_all(exp.In))


def carries_count(tree: exp.Expression) -> bool:
    """A count carried by a window over the whole result (``COUNT(*) OVER ()`` first), with a LIMIT: the
    figures and a few sample rows from one statement."""
    first = tree.expressions[0].unalias() if isinstance(tree, exp.Select) and tree.expressions else None
    return (isinstance(first, exp.Window) and isinstance(first.this, exp.AggFunc)
            and not first.args.get("partition_by") and tree.args.get("limit") is not None)


def limits(tree: exp.Expression) -> list[int]:
    """The LIMIT of every SELECT that reads a table directly."""
    return [int(s.args["limit"].expression.name) if s.args.get("limit") else -1
            for s in tree.find_all(exp.Select) if isinstance(s.args.get("from_") and s.args["from_"].this, exp.Table)]


def is_sample(tree: exp.Expression) -> bool:
    """A SELECT with a LIMIT, or a UNION ALL of them: every read of the table is capped."""
    return isinstance(tree, (exp.Select, exp.Union)) and all(n >= 0 for n in limits(tree))


def where_of(tree: exp.Expression) -> exp.Expression | None:
    """The filter of a table's aggregate pass (inside its row-by-row derived table, where it has one)."""
    source = tree.args["from_"].this
    return (source.this if isinstance(source, exp.Subquery) else tree).args.get("where")


def is_by_key(tree: exp.Expression) -> bool:
    """A read of given rows by key (``WHERE src.rowid IN (1, 2)``): the samples the counting pass found the keys of."""
    where = tree.args.get("where") if isinstance(tree, exp.Select) else None
    wanted = where.this if where is not None else None
    return (isinstance(wanted, exp.In) and wanted.this.name.lower() == "rowid" and bool(wanted.expressions)
            and all(isinstance(k, exp.Literal) for k in wanted.expressions))


def kinds(statements: list[str], dialect: str) -> dict[str, int]:
    """Tally the statements by what they do."""
    tally = {"batch": 0, "group_by": 0, "anti_join": 0, "sample": 0, "other": 0}
    for sql in statements:
        tree = parse(sql, dialect)
        if is_by_key(tree):
            tally["by_key"] = tally.get("by_key", 0) + 1
        elif is_table_batch(tree, "orders"):
            tally["batch"] += 1
        elif (is_aggregate_read(tree) or carries_count(tree)) and tree.find(exp.Group):
            tally["group_by"] += 1
        elif (is_aggregate_read(tree) or carries_count(tree)) and (tree.find(exp.Exists) or _in_subquery(tree)):
            tally["anti_join"] += 1
        elif is_sample(tree):
            tally["sample"] += 1
        else:
            tally["other"] += 1
    return tally


def test_many_aggregate_checks_on_a_table_are_one_select(database, tmp_path):
    load_shop(database)
    doc, sent, dialect = scan_recording(database, load_checks(tmp_path, AGGREGATE_CHECKS))
    assert [f.status for f in doc.findings] == ["pass"] * 8
    assert len(sent) == 1
    assert is_table_batch(parse(sent[0], dialect), "orders")
    assert doc.findings[5].total == 30 and doc.findings[6].observed == 30  # all answered by that one SELECT


def test_unique_and_foreign_key_add_one_statement_each(database, tmp_path):
    load_shop(database)
    doc, sent, dialect = scan_recording(database, load_checks(tmp_path, AGGREGATE_CHECKS + KEYED_CHECKS))
    assert doc.summary.passed == doc.summary.checks == 11
    # their totals (COUNT(*)) join the table's batch; each unique is a GROUP BY, the foreign key an anti-join
    assert kinds(sent, dialect) == {"batch": 1, "group_by": 2, "anti_join": 1, "sample": 0, "other": 0}


def test_samples_are_fetched_only_for_breaching_checks(database, tmp_path):
    load_shop(database, nulls_in_email=2, negative_amounts=3)  # breaches not_null email and range amount
    doc, sent, dialect = scan_recording(database, load_checks(tmp_path, AGGREGATE_CHECKS + KEYED_CHECKS), sample=2)
    breaching = {f.name for f in doc.findings if f.status != "pass"}
    assert breaching == {"orders.email.not_null", "orders.amount.range"}
    for f in doc.findings:
        assert len(f.sample) == (2 if f.name in breaching else 0)
    if dialect in KEYED_DIALECTS:  # the counting pass returned the 2 + 3 failing rows' keys: read by key
        assert kinds(sent, dialect) == {"batch": 1, "group_by": 2, "anti_join": 1, "sample": 0, "by_key": 1,
                                        "other": 0}
    else:  # both samples come from one statement: one read of orders, stopped after the 2 + 3 failing rows
        assert kinds(sent, dialect) == {"batch": 1, "group_by": 2, "anti_join": 1, "sample": 1, "other": 0}
        samples = [parse(sql, dialect) for sql in sent if kinds([sql], dialect)["sample"]]
        assert [limits(tree) for tree in samples] == [[5]]
    assert [row["id"] for row in doc.findings[1].sample] == [1, 2]  # the first failing rows in table order


def test_checks_with_a_different_where_get_their_own_select(database, tmp_path):
    load_shop(database)
    suite = """
tables:
  orders:
    - not_null: email
    - not_null: {column: code, name: open_codes}
      where: status = 'open'
    - range: {column: amount, min: 0, name: open_amounts}
      where: status = 'open'
    - not_null: {column: email, name: big_emails}
      where: amount > 100
"""
    doc, sent, dialect = scan_recording(database, load_checks(tmp_path, suite))
    assert len(sent) == 3 and all(is_table_batch(parse(sql, dialect), "orders") for sql in sent)
    wheres = sorted(str(where_of(parse(sql, dialect)) or "") for sql in sent)
    assert wheres[0] == "" and "100" in wheres[1] and "open" in wheres[2]
    totals = {f.name: f.total for f in doc.findings}
    # ids 3, 6, ..., 30 are open (10 rows); amounts 10 * i > 100 for i = 11..30 (20 rows)
    assert totals == {"orders.email.not_null": 30, "open_codes": 10, "open_amounts": 10, "big_emails": 20}


def test_identical_metrics_are_computed_once(database, tmp_path):
    load_shop(database)
    suite = AGGREGATE_CHECKS + """
    - not_null: {column: email, name: email_again, max_count: 3}
"""
    checks = load_checks(tmp_path, suite)
    with Sandbox(database.url) as sandbox:
        the_plan = plan(checks, sandbox.dialect)
    # COUNT(*) is shared by all 9 checks and the repeated not_null email adds nothing:
    # COUNT(*), 3 x not_null, pattern, accepted_values, range, MAX(created_at)
    assert len(the_plan.statements) == 1
    assert len(the_plan.statements[0].metrics) == 8


def unique_aggregates(checks: list[Check], dialect: str) -> list[Aggregate]:
    found: list[Aggregate] = []
    for check in checks:
        for metric in check.metrics(dialect):
            if isinstance(metric, Aggregate) and metric not in found:
                found.append(metric)
    return found


def test_a_long_batch_splits_into_statements_that_measure_the_same(database, tmp_path):
    load_shop(database, nulls_in_email=2, negative_amounts=3)
    with Sandbox(database.url) as sandbox:
        aggregates = unique_aggregates(load_checks(tmp_path, AGGREGATE_CHECKS), sandbox.dialect)
        assert len(aggregates) == 8
        whole = batch_statements("orders", None, aggregates, sandbox.dialect)
        split = batch_statements("orders", None, aggregates, sandbox.dialect, max_columns=3)
        assert len(whole) == 1
        assert [len(s.metrics) for s in split] == [3, 3, 2]
        assert [m for s in split for m in s.metrics] == aggregates  # nothing lost, nothing repeated, in order
        one_row = sandbox.query(whole[0].sql).rows
        parts = [sandbox.query(s.sql).rows for s in split]
    assert all(len(rows) == 1 for rows in [one_row, *parts])
    assert tuple(v for rows in parts for v in rows[0]) == one_row[0]


def test_batches_split_by_length_too(database, tmp_path):
    load_shop(database)
    with Sandbox(database.url) as sandbox:
        aggregates = unique_aggregates(load_checks(tmp_path, AGGREGATE_CHECKS), sandbox.dialect)
        # a statement may hold only one column when every column is over the length budget
        tiny = batch_statements("orders", "status = 'open'", aggregates, sandbox.dialect, max_chars=1)
        assert len(tiny) == len(aggregates)
        for statement in tiny:
            tree = parse(statement.sql, sandbox.dialect)
            assert len(tree.expressions) == 1 and "open" in str(tree.args["where"])
            assert len(sandbox.query(statement.sql).rows) == 1


def test_a_split_plan_gives_the_same_values(database, tmp_path):
    load_shop(database, nulls_in_email=2, negative_amounts=3)
    checks = load_checks(tmp_path, AGGREGATE_CHECKS + KEYED_CHECKS)
    with Sandbox(database.url) as sandbox:
        def measured(max_columns: int) -> dict:
            values = {}
            for statement in plan(checks, sandbox.dialect, max_columns=max_columns).statements:
                row = sandbox.query(statement.sql).rows[0]
                values.update(dict(zip(statement.metrics, row, strict=True)) if statement.is_batch
                              else {statement.metrics[0]: row})
            return values

        assert measured(2) == measured(200)


@pytest.mark.parametrize("sample", [0, 5])
def test_no_statement_selects_rows_to_count_them(database, tmp_path, sample):
    # damage every aggregate check so that each breaches and would be sampled
    load_shop(database, nulls_in_email=2, negative_amounts=3)
    database.run("UPDATE orders SET code = 'bad', status = 'lost', customer_id = 99 WHERE id = 30",
                 "UPDATE orders SET id = 28 WHERE id = 29")
    checks = load_checks(tmp_path, AGGREGATE_CHECKS + KEYED_CHECKS)
    doc, sent, dialect = scan_recording(database, checks, sample=sample)
    with Sandbox(database.url) as sandbox:
        # the scanner plans checks with their columns' types (read from the catalogue first)
        planned = [s.sql for s in plan(with_column_types(sandbox, checks), sandbox.dialect, sample=sample).statements]
    # every planned statement once (on SQLite, joins and GROUP BYs start before the batches: see scan/parallel.py)
    assert sorted(sent[:len(planned)]) == sorted(planned)
    counting = [parse(sql, dialect) for sql in planned]
    # each returns one row, or (with samples) carries its count in a window and returns up to `sample` rows
    assert all(is_aggregate_read(tree) or (carries_count(tree) and int(tree.args["limit"].expression.name) == sample)
               for tree in counting)
    assert sum(carries_count(tree) for tree in counting) == (3 if sample else 0)  # 2 unique, 1 foreign key
    rest = [parse(sql, dialect) for sql in sent[len(planned):]]
    breaching = [f for f in doc.findings if f.status != "pass"]
    # not_null email, pattern, accepted_values, range, unique id, foreign_key
    assert len(breaching) == 6
    assert all(len(f.sample) == min(sample, f.failing) for f in breaching)
    # the only other statement is the table's sample statement, every read in it capped by a LIMIT; where the
    # counting pass returned the failing rows' keys (SQLite), those rows are read by key before it
    by_key = [tree for tree in rest if is_by_key(tree)]
    assert len(by_key) == (1 if sample and dialect in KEYED_DIALECTS else 0)
    assert len(rest) - len(by_key) == (1 if sample else 0)
    assert all(is_sample(tree) for tree in rest if tree not in by_key)
