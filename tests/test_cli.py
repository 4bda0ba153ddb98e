"""The CLI as users and CI gates run it: exit codes, one-line errors, outputs, no secrets."""

import json
import sqlite3
from pathlib import Path

import pytest

from tests.conftest import REPO
from watchdog.run.demo_data import build_demo_database

SECRET = "Sup3r-S3cret-pw"


@pytest.fixture
def shop_db(tmp_path: Path) -> str:
    """A small SQLite shop: 10 customers (2 without email), orders with one orphan."""
    path = tmp_path / "shop.db"
    with sqlite3.connect(path) as conn:
        conn.executescript("""
            CREATE TABLE customers (id INTEGER PRIMARY KEY, email TEXT, tier TEXT);
            CREATE TABLE orders (id INTEGER PRIMARY KEY, customer_id INTEGER, amount REAL);
        """)
        conn.executemany("INSERT INTO customers VALUES (?, ?, ?)",
                         [(i, None if i in (3, 7) else f"c{i}@shop.com", "gold" if i % 2 else "basic")
                          for i in range(1, 11)])
        conn.executemany("INSERT INTO orders VALUES (?, ?, ?)",
                         [(i, 99 if i == 5 else i, 10.0 * i) for i in range(1, 9)])
    return f"sqlite:///{path}"


@pytest.fixture
def suite_file(tmp_path: Path):
    def write(text: str) -> Path:
        path = tmp_path / "suite.yaml"
        path.write_text(text)
        return path

    return write


def scan_args(db: str, suite: Path, out: Path, *extra: str) -> list[str]:
    return ["scan", "--db", db, "--checks", str(suite), "--out", str(out), *extra]


@pytest.mark.parametrize(
    "suite, expected_exit",
    [
        ("tables:\n  customers:\n    - unique: id\n", 0),
        ("tables:\n  customers:\n    - not_null: email\n    - unique: id\n", 1),
        ("tables:\n  customers:\n    - not_null: email\n      severity: warn\n", 2),
        ("tables:\n  customers:\n    - not_null: email\n      max_count: 2\n", 0),
        ("tables:\n  customers:\n    - not_null: nope\n    - not_null: email\n", 3),
        ("tables:\n  customers:\n    - not_null: email\n      severity: warn\n    - unique: id\n"
         "  orders:\n    - foreign_key: {column: customer_id, references: customers.id}\n", 1),
    ],
    ids=["all-pass", "fail", "only-warn", "tolerated", "error-wins-over-fail", "fail-wins-over-warn"],
)
def test_scan_exit_codes(run_cli, shop_db, suite_file, tmp_path, suite, expected_exit):
    result = run_cli(*scan_args(shop_db, suite_file(suite), tmp_path / "out"))
    assert result.returncode == expected_exit, result.stderr
    assert (tmp_path / "out" / "findings.json").is_file()
    assert (tmp_path / "out" / "report.md").is_file()


def test_a_check_in_error_does_not_stop_the_others(run_cli, shop_db, suite_file, tmp_path):
    suite = suite_file("tables:\n  customers:\n    - not_null: nope\n    - not_null: email\n"
                       "  missing_table:\n    - row_count: {min: 1}\n"
                       "  orders:\n    - foreign_key: {column: customer_id, references: customers.id}\n")
    result = run_cli(*scan_args(shop_db, suite, tmp_path / "out", "--json"))
    assert result.returncode == 3
    doc = json.loads(result.stdout)
    by_name = {f["name"]: f for f in doc["findings"]}
    assert by_name["customers.nope.not_null"]["status"] == "error"
    assert "nope" in by_name["customers.nope.not_null"]["error"]
    assert by_name["missing_table.row_count"]["status"] == "error"
    assert "missing_table" in by_name["missing_table.row_count"]["error"]
    assert (by_name["customers.email.not_null"]["failing"], by_name["customers.email.not_null"]["total"]) == (2, 10)
    assert by_name["orders.customer_id.foreign_key"]["failing"] == 1
    assert doc["summary"] == {"checks": 4, "passed": 0, "warned": 0, "failed": 2, "errors": 2}


def test_invalid_suite_is_reported_before_any_query_with_file_and_line(run_cli, suite_file, tmp_path):
    suite = suite_file("tables:\n  customers:\n    - not_null: email\n    - range: {column: age, minimum: 0}\n")
    # the database does not exist: a suite error must come first, without trying to connect
    result = run_cli(*scan_args("sqlite:////nonexistent/x.db", suite, tmp_path / "out"))
    assert result.returncode == 3
    assert f"{suite}:4: tables.customers[1].range.minimum: unknown option 'minimum'" in result.stderr
    assert "Traceback" not in result.stderr
    assert not (tmp_path / "out").exists()


def test_scan_json_prints_the_findings_document(run_cli, shop_db, suite_file, tmp_path):
    result = run_cli(*scan_args(shop_db, suite_file("tables:\n  customers:\n    - not_null: email\n"),
                                tmp_path / "out", "--json", "--sample", "1"))
    doc = json.loads(result.stdout)
    assert doc == json.loads((tmp_path / "out" / "findings.json").read_text())
    [finding] = doc["findings"]
    assert finding["sample"] == [{"id": 3, "email": None, "tier": "gold"}]
    assert finding["sql"] == "SELECT * FROM `customers` WHERE `email` IS NULL"


def test_default_out_dir_is_a_timestamped_adhoc_folder(run_cli, shop_db, suite_file, tmp_path):
    result = run_cli("scan", "--db", shop_db, "--checks", str(suite_file("tables:\n  customers:\n    - unique: id\n")))
    assert result.returncode == 0
    [run_dir] = (tmp_path / "reports" / "adhoc").iterdir()
    assert (run_dir / "findings.json").is_file() and str(run_dir) in result.stdout


def test_checks_takes_several_paths_and_folders(run_cli, shop_db, tmp_path):
    folder = tmp_path / "suites"
    folder.mkdir()
    (folder / "a.yaml").write_text("tables:\n  customers:\n    - unique: id\n")
    (folder / "b.yaml").write_text("tables:\n  orders:\n    - unique: id\n")
    extra = tmp_path / "c.yaml"
    extra.write_text("tables:\n  orders:\n    - row_count: {min: 1}\n")
    result = run_cli("scan", "--db", shop_db, "--checks", str(folder), str(extra), "--json",
                     "--out", str(tmp_path / "o"))
    assert [f["name"] for f in json.loads(result.stdout)["findings"]] == [
        "customers.id.unique", "orders.id.unique", "orders.row_count"]


def test_query_prints_rows_and_json(run_cli, shop_db):
    table = run_cli("query", "--db", shop_db, "SELECT tier, count(*) AS n FROM customers GROUP BY tier ORDER BY tier")
    assert table.returncode == 0 and "basic" in table.stdout and "gold" in table.stdout
    as_json = run_cli("query", "--db", shop_db, "SELECT id FROM customers ORDER BY id", "--json", "--max-rows", "3")
    assert json.loads(as_json.stdout) == {"columns": ["id"], "rows": [[1], [2], [3]],
                                          "truncated": True}


@pytest.mark.parametrize("sql", ["UPDATE customers SET tier = 'x'", "SELECT 1; DROP TABLE customers",
                                 "WITH x AS (DELETE FROM orders RETURNING *) SELECT * FROM x"])
def test_query_refuses_writes_with_one_line_and_exit_3(run_cli, shop_db, sql):
    result = run_cli("query", "--db", shop_db, sql)
    assert result.returncode == 3
    assert result.stderr.startswith("refused: ") and result.stderr.count("\n") == 1


def test_query_error_is_one_line_and_exit_3(run_cli, shop_db):
    result = run_cli("query", "--db", shop_db, "SELECT nope FROM customers")
    assert result.returncode == 3
    assert result.stderr.startswith("error: ") and "nope" in result.stderr and result.stderr.count("\n") == 1


def test_usage_errors_exit_3_not_2(run_cli):
    result = run_cli("scan", "--checks", "x.yaml")
    assert result.returncode == 3 and result.stderr.startswith("error: ")


def _command_paths(group=None, prefix=()):
    """Every command of the CLI, sub-commands of groups included, read from the click group itself."""
    import click

    from watchdog.cli import cli

    group = group or cli
    for name, command in sorted(group.commands.items()):
        yield (*prefix, name)
        if isinstance(command, click.Group):
            yield from _command_paths(command, (*prefix, name))


COMMANDS = [" ".join(path) for path in _command_paths()]


def test_the_help_test_covers_every_command():
    assert len(COMMANDS) >= 15 and {"scan", "query", "run", "serve", "review approve"} <= set(COMMANDS)


def test_every_command_is_found_in_its_own_module_alone():
    """``watchdog scan`` imports only watchdog/cli/scan.py: COMMAND_HOMES names each command's module."""
    from watchdog.cli import cli
    from watchdog.cli.app import COMMAND_HOMES

    homes = {name: command.callback.__module__.rsplit(".", 1)[-1] for name, command in cli.commands.items()}
    assert homes == COMMAND_HOMES, "add the new command to COMMAND_HOMES in watchdog/cli/app.py"


@pytest.mark.parametrize("command", COMMANDS)
def test_every_command_has_help_with_an_example(run_cli, command):
    result = run_cli(*command.split(), "--help")
    assert result.returncode == 0, result.stderr
    out = result.stdout
    assert "\\b" not in out and "\b" not in out, "a stray click escape in the help"
    assert "Example:" in out
    example = out.split("Example:", 1)[1].split("\n\n", 1)[0].strip().splitlines()
    # \b kept the example's lines as written: each is one command, none re-wrapped into the next
    assert example and all("watchdog " in line for line in example), example


def test_no_password_in_any_output_when_the_server_is_unreachable(run_cli, suite_file, tmp_path):
    url = f"postgresql+psycopg://reader:{SECRET}@127.0.0.1:1/shop"
    result = run_cli(*scan_args(url, suite_file("tables:\n  customers:\n    - not_null: email\n"), tmp_path / "out"))
    assert result.returncode == 3
    assert "database unavailable" in result.stderr
    written = "".join(p.read_text() for p in (tmp_path / "out").iterdir())
    for text in (result.stdout, result.stderr, written):
        assert SECRET not in text
    assert "reader:***@127.0.0.1:1/shop" in written
    query = run_cli("query", "--db", url, "SELECT 1")
    assert query.returncode == 3 and SECRET not in query.stdout + query.stderr


def test_no_password_in_outputs_of_a_real_postgres_scan(run_cli, make_database, suite_file, tmp_path):
    db = make_database("postgresql")
    db.create_table("customers", {"id": "int", "email": "text"}, [(1, "a@x.io"), (2, None)])
    url = db.url.replace("postgres@", f"postgres:{SECRET}@")  # trust auth: any password is accepted
    result = run_cli(*scan_args(url, suite_file("tables:\n  customers:\n    - not_null: email\n"), tmp_path / "out"))
    assert result.returncode == 1, result.stderr
    written = "".join(p.read_text() for p in (tmp_path / "out").iterdir())
    assert SECRET not in result.stdout + result.stderr + written
    assert json.loads((tmp_path / "out" / "findings.json").read_text())["database"].startswith("postgresql+psycopg://postgres:***@")


@pytest.fixture
def demo_config(tmp_path: Path) -> Path:
    """A copy of the default config whose paths point into tmp_path (the demo suite from the repo)."""
    config = tmp_path / "config" / "watchdog.yaml"
    config.parent.mkdir()
    text = (REPO / "config" / "watchdog.yaml").read_text()
    config.write_text(text.replace("checks: [checks/demo_crm.yaml]", f"checks: [{REPO / 'checks' / 'demo_crm.yaml'}]"))
    return config


def test_demo_builds_the_database_and_finds_every_planted_defect(run_cli, demo_config, tmp_path, monkeypatch):
    monkeypatch.delenv("CRM_DATABASE_URL", raising=False)
    result = run_cli("demo", "--config", str(demo_config))
    assert result.returncode == 0, result.stderr
    [run_dir] = (tmp_path / "reports" / "demo").glob("2*")
    doc = json.loads((run_dir / "findings.json").read_text())
    planted = build_demo_database(tmp_path / "expected.db")
    assert doc["summary"]["errors"] == 0
    for f in doc["findings"]:
        measured = f["observed"] if f["check"] in ("row_count", "freshness") else f["failing"]
        if f["check"] == "freshness":
            assert abs(measured - planted[f["name"]]) < 120, f["name"]
        else:
            assert measured == planted[f["name"]], f["name"]
    assert {f["status"] for f in doc["findings"]} == {"pass", "warn", "fail"}
    assert "report.md" in result.stdout and (run_dir / "report.md").is_file()


def test_check_config_validates_every_suite_without_a_database(run_cli, demo_config, tmp_path):
    ok = run_cli("check-config", "--config", str(demo_config))
    assert ok.returncode == 0 and ok.stdout.startswith("ok: ")
    bad = tmp_path / "bad.yaml"
    bad.write_text("tables:\n  t:\n    - not_nul: a\n")
    result = run_cli("check-config", "--config", str(demo_config), "--checks", str(bad))
    assert result.returncode == 3 and f"{bad}:3: tables.t[0].not_nul: unknown check type" in result.stderr
