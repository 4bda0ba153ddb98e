"""``watchdog mcp`` driven by the MCP SDK's own client, over stdio and streamable HTTP, against real
SQLite and PostgreSQL databases: tool listing, each tool's happy path, every refusal of the attack corpus
refused through MCP too, and no secret in any response."""

from __future__ import annotations

import asyncio
import json
import os
import socket
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest
import yaml

from tests.dbs import create_database

mcp_client = pytest.importorskip("mcp.client")  # a dependency of the test extra: never skipped in CI
from mcp import Client  # noqa: E402
from mcp.client.stdio import StdioServerParameters  # noqa: E402

ATTACKS = Path(__file__).parent / "attacks"
PG_SECRET = "mcp-Pg-Secret-7731"
TOOLS = {"list_databases", "list_tables", "describe_table", "profile_table", "query", "run_checks", "latest_findings",
         "history", "verify_report"}


@pytest.fixture
def project(tmp_path: Path):
    """A configuration with a SQLite and a PostgreSQL database (its URL carries a password: trust auth ignores
    it, watchdog must never show it), one audit with a suite, and a recorded run of it."""
    sqlite = create_database("sqlite", tmp_path)
    pg = create_database("postgresql", tmp_path)
    maria = create_database("mariadb", tmp_path)
    for db in (sqlite, pg, maria):
        db.create_table("customers", {"id": "int", "email": "text"},
                        [(1, "a@x.io"), (2, None), (3, "c@x.io"), (4, None)])
        db.create_table("t", {"id": "int", "s": "text"}, [(i, f"s{i}") for i in range(10)])
    pg_url = pg.url.replace("postgres@", f"postgres:{PG_SECRET}@")
    (tmp_path / "checks").mkdir()
    (tmp_path / "checks" / "shop.yaml").write_text("tables:\n  customers:\n    - not_null: email\n")
    config = tmp_path / "watchdog.yaml"
    config.write_text(yaml.safe_dump({
        "databases": {"shop": {"url": sqlite.url}, "warehouse": {"url": pg_url}, "ledger": {"url": maria.url}},
        "audits": {"shop": {"database": "shop", "checks": ["checks/shop.yaml"]}},
        "history": {"url": f"sqlite:///{tmp_path / 'history.db'}"},
        "mcp": {"max_rows": 5},
    }))
    run = subprocess.run([sys.executable, "-m", "watchdog", "run", "shop", "--config", str(config)],
                         capture_output=True, text=True, cwd=tmp_path, timeout=120)
    assert run.returncode == 1, run.stderr  # the audit ran and found the nulls
    yield {"config": config, "root": tmp_path}
    for db in (sqlite, pg, maria):
        db.close()


def stdio(project: dict) -> Client:
    params = StdioServerParameters(command=sys.executable, args=["-m", "watchdog", "mcp", "--config",
                                                                 str(project["config"])],
                                   cwd=str(project["root"]), env={**os.environ})
    return Client(params, cache=None)


def text_of(result: Any) -> str:
    return "".join(getattr(block, "text", "") for block in result.content)


async def call(client: Client, tool: str, **arguments: Any) -> Any:
    return await client.call_tool(tool, arguments)


def test_stdio_lists_the_tools_with_schemas_and_answers_each_one(project):
    async def scenario() -> dict[str, Any]:
        async with stdio(project) as client:
            tools = {t.name: t for t in (await client.list_tools()).tools}
            out = {"tools": tools}
            out["databases"] = await call(client, "list_databases")
            out["tables"] = await call(client, "list_tables", database="warehouse")
            out["describe"] = await call(client, "describe_table", database="shop", table="customers")
            out["profile"] = await call(client, "profile_table", database="warehouse", table="public.customers")
            out["query"] = await call(client, "query", database="warehouse",
                                      sql="SELECT id, email FROM customers ORDER BY id")
            out["capped"] = await call(client, "query", database="shop", sql="SELECT id FROM t", max_rows=100)
            out["checks"] = await call(client, "run_checks", database="warehouse",
                                       checks_yaml="tables:\n  customers:\n    - not_null: email\n")
            out["bad_suite"] = await call(client, "run_checks", database="shop",
                                          checks_yaml="tables:\n  customers:\n    - not_null: {}\n")
            out["latest"] = await call(client, "latest_findings", audit="shop")
            out["history"] = await call(client, "history", audit="shop")
            resources = await client.list_resources()
            out["resources"] = [str(r.uri) for r in resources.resources]
            out["report"] = await client.read_resource("watchdog://audits/shop/report")
            findings = out["checks"].structured_content
            out["verify_ok"] = await call(client, "verify_report", findings=findings, report_markdown=(
                "# QA\n\n`customers.email.not_null` fails: 2 of 4 rows (50%) have no email.\n"))
            out["verify_bad"] = await call(client, "verify_report", findings=findings, report_markdown=(
                "# QA\n\n`customers.email.not_null` fails: 7 of 4 rows have no email.\n"))
            return out

    out = asyncio.run(scenario())
    assert set(out["tools"]) == TOOLS
    assert all(t.output_schema for t in out["tools"].values()), "every tool has a structured output schema"
    names = [d["name"] for d in out["databases"].structured_content["databases"]]
    assert names == ["ledger", "shop", "warehouse"]
    assert "public.customers" in out["tables"].structured_content["tables"]
    described = out["describe"].structured_content
    assert described["row_count"] == 4 and [c["name"] for c in described["columns"]] == ["id", "email"]
    profile = out["profile"].structured_content["profile"]
    assert profile["rows"] == 4 and {c["name"]: c["nulls"] for c in profile["columns"]}["email"] == 2
    assert out["query"].structured_content["rows"] == [[1, "a@x.io"], [2, None], [3, "c@x.io"], [4, None]]
    capped = out["capped"].structured_content
    assert len(capped["rows"]) == 5 and capped["truncated"] is True  # mcp.max_rows caps what a client asks
    [finding] = out["checks"].structured_content["findings"]
    assert finding["name"] == "customers.email.not_null" and finding["failing"] == 2
    assert out["bad_suite"].is_error and text_of(out["bad_suite"]).startswith("error: ")
    assert out["latest"].structured_content["findings"][0]["failing"] == 2
    assert out["history"].structured_content["runs"][0]["status"] == "failed"
    assert "watchdog://audits" in out["resources"]
    assert "customers.email.not_null" in out["report"].contents[0].text
    assert out["verify_ok"].structured_content["bad"] == []
    assert out["verify_bad"].structured_content["bad"], "a wrong count is flagged"
    everything = json.dumps({k: (text_of(v) if hasattr(v, "content") else str(v)) for k, v in out.items()})
    assert PG_SECRET not in everything


def _refused_cases(dialect: str) -> list[dict[str, Any]]:
    cases = []
    for name in ("writes.yaml", "tricks.yaml", "sqlite.yaml", "postgres.yaml", "mysql.yaml", "exhaustion.yaml"):
        for case in yaml.safe_load((ATTACKS / name).read_text()) or []:
            if dialect in case.get("dialects", []) and case.get("expect", "refused") == "refused":
                cases.append(case)
    return cases


def test_every_refusal_of_the_attack_corpus_is_refused_through_mcp(project):
    """The same sandbox behind MCP: each hostile statement the corpus expects refused comes back as a tool
    error whose text starts with ``refused:`` (all three databases, one stdio session)."""
    cases = {db: _refused_cases(kind) for db, kind in (("shop", "sqlite"), ("warehouse", "postgresql"),
                                                         ("ledger", "mariadb"))}
    assert sum(len(v) for v in cases.values()) > 400

    async def scenario() -> list[str]:
        wrong = []
        async with stdio(project) as client:
            for db, items in cases.items():
                for case in items:
                    sql = case["sql"].replace("__TMP__", str(project["root"] / "wd-mcp-attack"))
                    result = await call(client, "query", database=db, sql=sql)
                    if not (result.is_error and text_of(result).startswith("refused: ")):
                        wrong.append(f"{db} {case['id']}: {text_of(result)[:120]}")
        return wrong

    assert asyncio.run(scenario()) == []
    assert not list(project["root"].glob("wd-mcp-attack*"))


def test_only_configured_databases_unless_the_operator_allows_urls(project):
    async def scenario() -> Any:
        async with stdio(project) as client:
            return await call(client, "query", database="sqlite:////etc/passwd", sql="SELECT 1")

    result = asyncio.run(scenario())
    assert result.is_error and "mcp.allow_urls" in text_of(result)


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _start_http(project: dict, token: str | None) -> tuple[subprocess.Popen, str]:
    port = _free_port()
    env = {**os.environ}
    if token:
        env["WATCHDOG_MCP_TOKEN"] = token
    proc = subprocess.Popen([sys.executable, "-m", "watchdog", "mcp", "--config", str(project["config"]), "--http",
                             f"127.0.0.1:{port}"], cwd=project["root"], env=env, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True)
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        try:
            socket.create_connection(("127.0.0.1", port), timeout=0.5).close()
            return proc, f"http://127.0.0.1:{port}/mcp"
        except OSError:
            assert proc.poll() is None, proc.communicate()[1]
            time.sleep(0.2)
    proc.kill()
    raise AssertionError("the MCP HTTP server did not listen")


def test_streamable_http_answers_and_refuses_like_stdio(project):
    proc, url = _start_http(project, token=None)
    try:
        async def scenario() -> tuple[Any, Any, Any]:
            async with Client(url, cache=None) as client:
                tools = {t.name for t in (await client.list_tools()).tools}
                ok = await call(client, "query", database="warehouse", sql="SELECT count(*) AS n FROM customers")
                refused = await call(client, "query", database="warehouse", sql="DELETE FROM customers")
                return tools, ok, refused

        tools, ok, refused = asyncio.run(scenario())
    finally:
        proc.terminate()
        _, err = proc.communicate(timeout=30)
    assert tools == TOOLS
    assert ok.structured_content["rows"] == [[4]]
    assert refused.is_error and text_of(refused).startswith("refused: ")
    assert "tool query" in err and PG_SECRET not in err  # every call logged, secrets masked


def test_http_with_a_token_turns_away_requests_without_it(project):
    import httpx2
    from mcp.client.streamable_http import streamable_http_client

    token = "mcp-Token-5521"
    proc, url = _start_http(project, token=token)
    try:
        bare = httpx2.post(url, json={"jsonrpc": "2.0", "id": 1, "method": "ping"}, timeout=10)

        async def scenario() -> Any:
            client = httpx2.AsyncClient(headers={"Authorization": f"Bearer {token}"}, timeout=30)
            async with Client(streamable_http_client(url, http_client=client), cache=None) as mcp:
                return await call(mcp, "list_databases")

        listed = asyncio.run(scenario())
    finally:
        proc.terminate()
        _, err = proc.communicate(timeout=30)
    assert bare.status_code == 401
    assert [d["name"] for d in listed.structured_content["databases"]] == ["ledger", "shop", "warehouse"]
    assert token not in err


def test_a_public_bind_without_a_token_is_refused_at_start(run_cli):
    result = run_cli("mcp", "--http", "0.0.0.0:8765", env={"WATCHDOG_MCP_TOKEN": ""})
    assert result.returncode == 3 and "bearer token" in result.stderr
