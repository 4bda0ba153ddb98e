"""``watchdog profile`` and ``suggest`` on real SQLite, PostgreSQL and MariaDB databases.

The same small shop is loaded into each database; the profile's figures are counted by hand from
the rows below, and the suggested suite must validate, pass whole on the data it came from, and
write the checks that fail today commented out with their measured failure.
"""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
import yaml

from watchdog.profile.suggest import profile_database, suggest_suite
from watchdog.sandbox import Sandbox
from watchdog.scan.scanner import scan
from watchdog.scan.suites import load_suite

NOW = datetime.now(UTC).replace(microsecond=0, tzinfo=None)
STATUSES = ["lead", "customer", "churned"]


def _customers() -> list[tuple]:
    rows = []
    for i in range(1, 121):
        email = f"user{i}@example.com" if i != 7 else "not-an-email"  # 1 of 120 is off-shape
        phone = f"555-{i:03d}-{1000 + i}" if i % 20 else None           # 6 nulls
        rows.append((i, email, STATUSES[i % 3], 18 + i % 50, phone, NOW - timedelta(hours=i)))
    return rows


def _load(db) -> None:  # type: ignore[no-untyped-def]
    ts = {"sqlite": "TEXT", "postgresql": "TIMESTAMP", "mariadb": "DATETIME"}[db.kind]
    text = {"sqlite": "TEXT", "postgresql": "TEXT", "mariadb": "VARCHAR(255)"}[db.kind]
    q = db.quote
    db.run(f"CREATE TABLE {q('customers')} ({q('id')} INTEGER PRIMARY KEY, {q('email')} {text} NOT NULL, "
           f"{q('status')} {text}, {q('age')} INTEGER, {q('phone')} {text}, {q('created_at')} {ts})",
           f"CREATE TABLE {q('orders')} ({q('id')} INTEGER PRIMARY KEY, {q('customer_id')} INTEGER, "
           f"{q('amount')} INTEGER, FOREIGN KEY ({q('customer_id')}) REFERENCES {q('customers')} ({q('id')}))",
           f"CREATE TABLE {q('notes')} ({q('id')} INTEGER PRIMARY KEY, {q('order_id')} INTEGER)")
    rows = _customers()
    if db.kind == "sqlite":
        rows = [r[:5] + (r[5].isoformat(sep=" "),) for r in rows]
    db.insert("customers", ["id", "email", "status", "age", "phone", "created_at"], rows)
    db.insert("orders", ["id", "customer_id", "amount"], [(i, 1 + i % 120, 10 * i) for i in range(1, 301)])
    db.insert("notes", ["id", "order_id"], [(i, i) for i in range(1, 51)])


def test_profile_figures_are_exact_and_batched(database) -> None:
    _load(database)
    with Sandbox(database.url) as box:
        sent: list[str] = []
        box.on_execute(sent.append)
        profiles = {p.name: p for p in profile_database(box)}
    customers = profiles["customers"]
    assert customers.rows == 120 and customers.primary_key == ["id"]
    email, status, age, phone = (customers.column(c) for c in ("email", "status", "age", "phone"))
    assert (email.nulls, email.distinct, email.distinct_method) == (0, 120, "exact")
    assert email.shapes["email"] == pytest.approx(119 / 120, abs=1e-6)
    assert (phone.nulls, phone.null_rate) == (6, 0.05)
    assert phone.shapes["phone"] == 1.0
    assert (age.min, age.max) == (18, 67)
    assert dict(status.top_values or []) == {"lead": 40, "customer": 40, "churned": 40}
    assert customers.column("created_at").age_s is not None and customers.column("created_at").age_s < 7200
    assert profiles["orders"].foreign_keys == [("customer_id", "customers", "id")]
    # per table: one batched SELECT (with each shape's cheap LIKE gate), one batched pass running the shape
    # regexes only where a gate let a value through, plus one GROUP BY per low-cardinality column (status here)
    catalog = ("information_schema", "pragma_", "pg_")
    selects = [s for s in sent if "customers" in s and not any(c in s.lower() for c in catalog)]
    assert len(selects) == 3, selects
    regex_words = ("regexp", "~", "rlike")
    assert not any(w in selects[0].lower() for w in regex_words)
    shaped = selects[1]
    # of 9 shapes x 3-4 text columns, only the shapes whose coarse gate group passed are counted (email: email;
    # phone and SQLite's TEXT created_at: the 6 digit-led shapes), and numbers stored as text (count, min, max)
    # only where a value starts as a number can (phone, created_at); status passes none
    assert shaped.count(" AS s") <= 1 + 6 + 6 + 2 * 3 and "status" not in shaped


def test_suggested_suite_validates_passes_and_comments_out_failures(database, tmp_path: Path) -> None:
    _load(database)
    with Sandbox(database.url) as box:
        result = suggest_suite(box, profile_database(box))
        path = tmp_path / "suggested.yaml"
        path.write_text(result.text)
        suite = load_suite(path)                        # validates as check-config does
        doc = scan(box, suite.checks, sample=0)
    assert doc.summary.failed == 0 and doc.summary.errors == 0 and doc.summary.passed == len(suite.checks)
    names = {c.name for c in suite.checks}
    assert {"customers.id.unique", "customers.email.not_null", "orders.customer_id.foreign_key",
            "customers.status.accepted_values", "customers.phone.pattern", "customers.row_count",
            "customers.created_at.freshness", "notes.order_id.foreign_key"} <= names
    phone_null = next(c for c in suite.checks if c.name == "customers.phone.not_null")
    assert phone_null.options.max_rate == pytest.approx(0.075)
    # the email shape holds for 119 of 120 rows: written commented out, with the measured rate
    text = result.text
    assert "# FAILS on today's data: 1 of 120 rows fail (0.83%)" in text
    assert "    # - pattern: {column: email" in text
    assert "customers.email.pattern" not in names
    evidence = text.splitlines()[text.splitlines().index("    - not_null: email") - 1]
    assert evidence == "    # 0 nulls in 120 rows"


def test_kinds_and_tables_narrow_the_suite(database) -> None:
    _load(database)
    with Sandbox(database.url) as box:
        result = suggest_suite(box, profile_database(box, ["orders"]), kinds=["not_null", "unique"])
    data = yaml.safe_load(result.text)
    assert list(data["tables"]) == ["orders"]
    assert {next(iter(e)) for e in data["tables"]["orders"]} == {"not_null", "unique"}


def test_cli_profile_json_and_suggest_out(make_database, run_cli, tmp_path: Path) -> None:
    db = make_database("sqlite")
    _load(db)
    shown = run_cli("profile", "--db", db.url, "--tables", "customers", "--json")
    assert shown.returncode == 0, shown.stderr
    doc = json.loads(shown.stdout)
    assert [t["name"] for t in doc["tables"]] == ["customers"] and doc["tables"][0]["rows"] == 120
    out = tmp_path / "checks" / "shop.yaml"
    made = run_cli("suggest", "--db", db.url, "--out", str(out), "--strictness", "strict")
    assert made.returncode == 0, made.stderr
    assert "commented out" in made.stderr
    checked = run_cli("check-config", "--checks", str(out))
    assert checked.returncode == 0, checked.stdout + checked.stderr
    scanned = run_cli("scan", "--db", db.url, "--checks", str(out), "--out", str(tmp_path / "run"))
    assert scanned.returncode == 0, scanned.stdout + scanned.stderr
    bad = run_cli("suggest", "--db", db.url, "--kinds", "nonsense")
    assert bad.returncode == 3 and "nonsense" in bad.stderr
    missing = run_cli("profile", "--db", db.url, "--tables", "nope")
    assert missing.returncode == 3 and "nope" in missing.stderr


TRICKY = ["123e4567-e89b-12d3-a456-426614174000", "123E4567-E89B-12D3-A456-426614174000 ", "a@b.co",
          "x.y+z@sub.example.org", "@b.co", "a@b", "http://a", "HTTPS://example.com/x y", "ftp://h:21/p",
          "https://", "2024-01-31", "2024-01-31T12:30:00+02:00", "2024-1-31", "12345", "12345-6789", "1234",
          " 5551234567", "(555) 123-4567", "+1 555.123.4567", "-555-123-4567", "+1.5", "-3", ".5", "7", "", " ",
          "Customer 12", "555/123-4567", "7/12/11", "12/31/2024", "13/1/11", "31.12.2024", "1.13.2024", "3.1.24"]


def _random_values(count: int) -> list[str]:
    import random

    rng = random.Random(15)
    alphabet = "0123456789-+(). @:/abcfhtpxAFT:"
    return [("".join(rng.choice(alphabet) for _ in range(rng.randint(1, 40)))) for _ in range(count)]


def test_gated_shapes_count_exactly_what_every_regex_counts(database) -> None:
    """The shape gates only skip values that cannot match: the same shares as every regex on every value."""
    text = {"sqlite": "TEXT", "postgresql": "TEXT", "mariadb": "VARCHAR(64)"}[database.kind]
    q = database.quote
    database.run(f"CREATE TABLE {q('odd')} ({q('id')} INTEGER PRIMARY KEY, {q('v')} {text})")
    values = TRICKY + _random_values(400) + [s[:i] for s in TRICKY for i in (5, 10, 36) if len(s) > i]
    database.insert("odd", ["id", "v"], list(enumerate(values, 1)))
    with Sandbox(database.url) as box:
        gated = profile_database(box, ["odd"])[0].column("v").shapes
        every = profile_database(box, ["odd"], gate_shapes=False)[0].column("v").shapes
    assert gated == every and set(gated) == {"uuid", "email", "url", "iso_date", "zip", "phone", "numeric",
                                             "us_date", "dotted_date"}


def test_slash_phones_and_non_iso_dates_are_shapes(database) -> None:
    """``NNN/NNN-NNNN`` is a phone; ``m/d/yy`` and ``d.m.yyyy`` are date shapes (impossible months and days are not)."""
    text = {"sqlite": "TEXT", "postgresql": "TEXT", "mariadb": "VARCHAR(64)"}[database.kind]
    q = database.quote
    database.run(f"CREATE TABLE {q('t')} ({q('id')} INTEGER PRIMARY KEY, {q('phone')} {text}, "
                 f"{q('us')} {text}, {q('eu')} {text})")
    rows = [(1, "555/123-4567", "7/12/11", "31.12.2024"), (2, "555-123-4567", "12/31/2024", "1.2.2024"),
            (3, "555/1234567", "13/1/11", "1.13.2024"), (4, "55/123-4567", "1/32/11", "3.1.24")]
    database.insert("t", ["id", "phone", "us", "eu"], rows)
    with Sandbox(database.url) as box:
        prof = profile_database(box, ["t"])[0]
    assert prof.column("phone").shapes["phone"] == 0.75  # 3 of 4: a 2-digit area code is not a phone
    assert prof.column("us").shapes["us_date"] == 0.5    # month 13 and day 32 are not dates
    assert prof.column("eu").shapes["dotted_date"] == 0.5  # month 13 and a 2-digit year are not
    assert "us_date" not in prof.column("eu").shapes and "dotted_date" not in prof.column("us").shapes


def test_blank_and_marker_rates_are_exact_and_case_sensitive(database) -> None:
    """Of 8 rows: '' and '  ' are blank (2); '?', 'N/A' and 'null' are markers (3); 'Null' and 'n.a.' are not."""
    text = {"sqlite": "TEXT", "postgresql": "TEXT", "mariadb": "VARCHAR(64)"}[database.kind]
    q = database.quote
    database.run(f"CREATE TABLE {q('m')} ({q('id')} INTEGER PRIMARY KEY, {q('v')} {text})")
    values = ["", "  ", "?", "N/A", "null", "Null", "n.a.", None]
    database.insert("m", ["id", "v"], list(enumerate(values, 1)))
    with Sandbox(database.url) as box:
        v = profile_database(box, ["m"])[0].column("v")
    assert (v.blank_rate, v.marker_rate, v.nulls) == (2 / 8, 3 / 8, 1)
