"""DuckDB and files from the configuration (``files:``) and the command line (``scan --file``), and RE2 patterns."""

from __future__ import annotations

import json
from pathlib import Path

import duckdb
import pytest

from watchdog.errors import ConfigError
from watchdog.sandbox import Sandbox
from watchdog.scan.scanner import scan
from watchdog.scan.suites import load_suites
from watchdog.settings import load_settings

SUITE = """
tables:
  customers:
    - not_null: email
    - unique: id
    - pattern: {column: email, regex: '^[a-z]+@[a-z]+\\.io$'}
  orders:
    - range: {column: amount, min: 0, max: 100}
    - foreign_key: {column: customer_id, references: customers.id}
"""


@pytest.fixture
def lake(tmp_path: Path) -> Path:
    """data/customers.csv (4 rows, one NULL email, one bad) and data/orders/*.parquet (2 files, 3 rows)."""
    data = tmp_path / "project" / "data"
    (data / "orders").mkdir(parents=True)
    (data / "customers.csv").write_text("id,email\n1,ann@x.io\n2,\n3,BOB@x.io\n4,cy@x.io\n", encoding="utf-8")
    con = duckdb.connect()
    con.execute(f"COPY (SELECT 1 AS id, 1 AS customer_id, 20.5 AS amount UNION ALL SELECT 2, 9, 101) "
                f"TO '{data / 'orders' / 'a.parquet'}' (FORMAT parquet)")
    con.execute(f"COPY (SELECT 3 AS id, 3 AS customer_id, -1.0 AS amount) TO '{data / 'orders' / 'b.parquet'}' "
                f"(FORMAT parquet)")
    con.close()
    (tmp_path / "project" / "lake.yaml").write_text(SUITE, encoding="utf-8")
    return tmp_path / "project"


def _config(lake: Path, body: str) -> Path:
    path = lake / "config" / "watchdog.yaml"
    path.parent.mkdir(exist_ok=True)
    path.write_text("base_dir: ..\ndatabases:\n" + body, encoding="utf-8")
    return path


EXPECTED = {"customers.email.not_null": 1, "customers.id.unique": 0, "customers.email.pattern": 1,
            "orders.amount.range": 2, "orders.customer_id.foreign_key": 1}


def test_files_under_a_configured_database_resolve_against_the_root(lake, monkeypatch, tmp_path):
    path = _config(lake, '  lake:\n    url: "duckdb:///:memory:"\n    files:\n'
                         '      customers: data/customers.csv\n      orders: "data/orders/*.parquet"\n')
    monkeypatch.chdir(tmp_path)  # anywhere: the paths resolve against base_dir
    db = load_settings(path).database("lake")
    assert db.files == {"customers": str(lake / "data" / "customers.csv"),
                        "orders": str(lake / "data" / "orders" / "*.parquet")}
    checks = [c for s in load_suites([lake / "lake.yaml"]) for c in s.checks]
    with Sandbox.for_database(db) as box:
        doc = scan(box, checks, sample=0)
    assert {f.name: f.failing for f in doc.findings} == EXPECTED
    assert {f.name: f.total for f in doc.findings}["orders.amount.range"] == 3


@pytest.mark.parametrize(("files", "message"), [
    ("      9lives: data/customers.csv\n", "databases.lake.files.9lives[key]: '9lives' cannot be a table name"),
    ("      customers: data/customers.xlsx\n", "databases.lake.files.customers: 'data/customers.xlsx': unknown file"),
    ("      customers: ''\n", "databases.lake.files.customers: the path is empty"),
])
def test_bad_files_entries_name_the_line_and_the_table(lake, files, message):
    path = _config(lake, '  lake:\n    url: "duckdb:///:memory:"\n    files:\n' + files)
    with pytest.raises(ConfigError) as caught:
        load_settings(path)
    assert str(caught.value).startswith(f"{path}:6: {message}")


def test_files_need_a_duckdb_url(lake):
    path = _config(lake, '  crm:\n    url: "sqlite:///crm.db"\n    files: {customers: data/customers.csv}\n')
    with pytest.raises(ConfigError, match="databases.crm: files: needs a DuckDB database"):
        load_settings(path)


def test_a_missing_file_is_an_error_naming_the_table(lake):
    with Sandbox("duckdb:///:memory:", files={"gone": str(lake / "data" / "nope*.csv")}) as box, \
            pytest.raises(Exception, match="files.gone: no file matches"):
        box.query("SELECT 1")


def test_a_duckdb_file_is_opened_read_only(tmp_path):
    path = tmp_path / "shop.duckdb"
    con = duckdb.connect(str(path))
    con.execute("CREATE TABLE t AS SELECT range AS id FROM range(5)")
    con.close()
    before = path.read_bytes()
    with Sandbox(f"duckdb:///{path}") as box:
        assert box.query("SELECT count(*) FROM t").scalar() == 5
        assert box.columns("t") == [{"name": "id", "type": "BIGINT", "generic": "integer"}]
    assert path.read_bytes() == before
    with Sandbox(f"duckdb:///{tmp_path / 'missing.duckdb'}") as box, pytest.raises(Exception, match="no DuckDB"):
        box.query("SELECT 1")


def test_scan_with_files_on_the_command_line(lake, run_cli, tmp_path):
    out = tmp_path / "out"
    result = run_cli("scan", "--file", str(lake / "data" / "customers.csv"),
                     "--file", f"orders={lake / 'data' / 'orders' / '*.parquet'}",
                     "--checks", str(lake / "lake.yaml"), "--json", "--out", str(out))
    assert result.returncode == 1, result.stderr
    doc = json.loads(result.stdout)
    assert {f["name"]: f["failing"] for f in doc["findings"]} == EXPECTED
    assert (out / "findings.json").is_file()


@pytest.mark.parametrize(("args", "message"), [
    (["--file", "data/orders/*.parquet"], "cannot make a table name"),
    (["--file", "data/customers.txt"], "unknown file kind"),
    (["--db", "sqlite:///x.db", "--file", "data/customers.csv"], "--file needs a DuckDB database"),
    (["--file", "data/customers.csv", "--file", "other/customers.csv"], "two files are named 'customers'"),
    (["--file", "data/nothing.csv"], "no file matches"),
])
def test_scan_file_errors_are_one_line(lake, run_cli, args, message):
    result = run_cli("scan", *[a.replace("data/", f"{lake}/data/") for a in args], "--checks",
                     str(lake / "lake.yaml"), "--out", str(lake / "out"))
    assert result.returncode == 3, result.stderr
    assert message in result.stderr and result.stderr.startswith("error: ")


def test_scan_needs_a_database_or_files(run_cli, lake):
    result = run_cli("scan", "--checks", str(lake / "lake.yaml"))
    assert result.returncode != 0 and "--file" in result.stderr


def test_query_reads_a_configured_file_database(lake, run_cli):
    path = _config(lake, '  lake:\n    url: "duckdb:///:memory:"\n    files: {customers: data/customers.csv}\n')
    result = run_cli("query", "--config", str(path), "--db", "lake", "--json",
                     "SELECT count(*) AS n FROM customers WHERE email IS NULL")
    assert result.returncode == 0, result.stderr
    assert json.loads(result.stdout)["rows"] == [[1]]


def test_a_pattern_that_needs_lookaround_is_refused_on_duckdb_only(lake, tmp_path):
    suite = tmp_path / "b.yaml"
    suite.write_text("tables:\n  customers:\n    - pattern: {column: email, regex: '\\mx'}\n", encoding="utf-8")
    checks = [c for s in load_suites([suite]) for c in s.checks]
    with Sandbox("duckdb:///:memory:", files={"customers": str(lake / "data" / "customers.csv")}) as box:
        [finding] = scan(box, checks, sample=0).findings
    assert finding.status == "error" and "RE2" in (finding.error or "")


def test_profile_reads_file_tables(lake, run_cli):
    path = _config(lake, '  lake:\n    url: "duckdb:///:memory:"\n    files:\n      customers: data/customers.csv\n'
                         '      orders: "data/orders/*.parquet"\n')
    result = run_cli("profile", "--config", str(path), "--db", "lake", "--json")
    assert result.returncode == 0, result.stderr
    doc = json.loads(result.stdout)
    tables = {t["name"]: t for t in (doc["tables"] if isinstance(doc, dict) else doc)}
    assert tables["customers"]["rows"] == 4 and tables["orders"]["rows"] == 3
    email = next(c for c in tables["customers"]["columns"] if c["name"] == "email")
    assert email["nulls"] == 1


def test_mcp_tools_list_and_describe_file_tables(lake):
    from watchdog.mcp.toolbox import Toolbox

    path = _config(lake, '  lake:\n    url: "duckdb:///:memory:"\n    files:\n      customers: data/customers.csv\n'
                         '      orders: "data/orders/*.parquet"\n')
    tools = Toolbox(load_settings(path))
    assert tools.list_tables("lake") == ["customers", "orders"]
    described = tools.describe_table("lake", "customers")
    assert [c["name"] for c in described["columns"]] == ["id", "email"]
