"""The MCP server: :class:`~watchdog.mcp.toolbox.Toolbox` behind the official SDK's ``MCPServer``.

Every tool answers with structured content (a JSON schema per tool) and the same data as JSON text.
A refusal of the sandbox is a tool error whose text starts ``refused:``; any other watchdog error is a
tool error starting ``error:``. Every call is logged on ``watchdog.mcp`` with secrets masked.
"""

import json
from collections.abc import Callable
from functools import cache
from typing import Annotated, Any

from mcp.server.mcpserver import MCPServer
from mcp.types import CallToolResult, TextContent
from pydantic import BaseModel, TypeAdapter

from watchdog import __version__
from watchdog.errors import QueryRefused, WatchdogError
from watchdog.findings import FindingsDoc
from watchdog.mcp.toolbox import Toolbox, log_call
from watchdog.redact import redact
from watchdog.settings import Settings
from watchdog.verify.model import Verification


class Database(BaseModel):
    name: str
    dialect: str
    timeout_s: float
    max_rows: int


class Databases(BaseModel):
    databases: list[Database]


class Tables(BaseModel):
    tables: list[str]


class Column(BaseModel):
    name: str
    type: str
    nullable: bool


class TableDescription(BaseModel):
    table: str
    row_count: int
    columns: list[Column]


class Rows(BaseModel):
    columns: list[str]
    rows: list[list[Any]]
    truncated: bool


class TableProfileOut(BaseModel):
    profile: dict[str, Any]


class Runs(BaseModel):
    runs: list[dict[str, Any]]


class LatestFindings(BaseModel):
    run: dict[str, Any]
    findings: list[dict[str, Any]]


def _answer(tool: str, arguments: dict[str, Any], work: Callable[[], Any], model: type) -> CallToolResult:
    """``model``: a pydantic model, or a dataclass pydantic validates (:class:`FindingsDoc`)."""
    log_call(tool, arguments)
    try:
        adapter = _adapter(model)
        data = adapter.dump_python(adapter.validate_python(work()), mode="json")
    except QueryRefused as exc:
        return _error("refused", exc)
    except WatchdogError as exc:
        return _error(exc.prefix, exc)
    text = redact(json.dumps(data, ensure_ascii=False, default=str))
    return CallToolResult(content=[TextContent(type="text", text=text)], structured_content=json.loads(text))


@cache
def _adapter(model: type) -> TypeAdapter[Any]:
    return TypeAdapter(model)


def _error(prefix: str, exc: BaseException) -> CallToolResult:
    return CallToolResult(content=[TextContent(type="text", text=f"{prefix}: {redact(exc)}")], is_error=True)


def build_server(settings: Settings) -> MCPServer:
    """An MCP server over ``settings``' databases, audits and history."""
    box = Toolbox(settings)
    server: MCPServer = MCPServer(
        "watchdog", version=__version__,
        instructions="Read-only data-quality tools: every query runs in watchdog's sandbox (one read statement, "
                     "row/byte/time capped). Databases are the configured ones; see list_databases.")

    @server.tool(description="The configured databases a client may query, with their limits.")
    def list_databases() -> Annotated[CallToolResult, Databases]:
        return _answer("list_databases", {}, lambda: {"databases": box.list_databases()}, Databases)

    @server.tool(description="Tables and views of a configured database.")
    def list_tables(database: str) -> Annotated[CallToolResult, Tables]:
        return _answer("list_tables", {"database": database},
                       lambda: {"tables": box.list_tables(database)}, Tables)

    @server.tool(description="A table's columns, types, nullability and row count.")
    def describe_table(database: str, table: str) -> Annotated[CallToolResult, TableDescription]:
        return _answer("describe_table", {"database": database, "table": table},
                       lambda: box.describe_table(database, table), TableDescription)

    @server.tool(description="Profile a table: rows; per column type, nulls, distinct, min/max, lengths, top "
                             "values, shapes (email, URL, UUID, date...), freshness. Aggregates only.")
    def profile_table(database: str, table: str) -> Annotated[CallToolResult, TableProfileOut]:
        return _answer("profile_table", {"database": database, "table": table},
                       lambda: {"profile": box.profile_table(database, table)}, TableProfileOut)

    @server.tool(description="Run ONE read-only SQL statement through the sandbox (anything else is refused). "
                             "Rows are capped (max_rows and the configured limit), and so is time.")
    def query(database: str, sql: str, max_rows: int | None = None) -> Annotated[CallToolResult, Rows]:
        return _answer("query", {"database": database, "sql": sql, "max_rows": max_rows},
                       lambda: box.query(database, sql, max_rows), Rows)

    @server.tool(description="Run a check suite (watchdog's YAML, as text) against a database; returns the "
                             "findings document: exact counts, rates, samples and the SQL of each check.")
    def run_checks(database: str, checks_yaml: str) -> Annotated[CallToolResult, FindingsDoc]:
        return _answer("run_checks", {"database": database, "checks_yaml": checks_yaml},
                       lambda: box.run_checks(database, checks_yaml), FindingsDoc)

    @server.tool(description="The findings of a configured audit's newest recorded run.")
    def latest_findings(audit: str) -> Annotated[CallToolResult, LatestFindings]:
        return _answer("latest_findings", {"audit": audit}, lambda: box.latest_findings(audit), LatestFindings)

    @server.tool(description="A configured audit's recorded runs, newest first.")
    def history(audit: str, limit: int = 20) -> Annotated[CallToolResult, Runs]:
        return _answer("history", {"audit": audit, "limit": limit},
                       lambda: {"runs": box.history(audit, limit)}, Runs)

    @server.tool(description="Check the numbers and statuses a Markdown QA report states against the findings "
                             "document it was written from (watchdog's deterministic verify_fn).")
    def verify_report(report_markdown: str, findings: dict[str, Any]) -> Annotated[CallToolResult, Verification]:
        return _answer("verify_report", {"report_markdown": report_markdown[:80]},
                       lambda: box.verify_report(report_markdown, findings), Verification)

    @server.resource("watchdog://audits", name="audits", mime_type="application/json",
                     description="The configured audits: database, schedule, checks.")
    def audits() -> str:
        return json.dumps({name: {"database": a.database, "schedule": str(a.schedule) if a.schedule else None,
                                  "checks": a.checks} for name, a in settings.audits.items()}, indent=2)

    @server.resource("watchdog://audits/{audit}/report", name="latest_report", mime_type="text/markdown",
                     description="The newest filed report.md of an audit.")
    def latest_report(audit: str) -> str:
        return redact(box.latest_report(audit))

    return server
