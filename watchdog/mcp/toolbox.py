"""What the MCP tools do, as plain functions over the configuration: every database access goes through
:class:`watchdog.sandbox.Sandbox` (read-only, row/byte/time capped), every answer is JSON-ready data.

Only databases named in the configuration are reachable, unless the operator sets ``mcp.allow_urls``.
Errors are watchdog's own (``QueryRefused`` for a refusal), so the server can say ``refused: ...``.
"""

from __future__ import annotations

import logging
import tempfile
from pathlib import Path
from typing import Any

from sqlglot import exp

from watchdog.database import DatabaseConfig
from watchdog.errors import ConfigError, WatchdogError
from watchdog.findings import jsonable
from watchdog.redact import redact
from watchdog.sandbox import Sandbox
from watchdog.settings import Settings
from watchdog.urls import database_url, looks_like_dsn

log = logging.getLogger("watchdog.mcp")

class Toolbox:
    """The MCP tools' logic for one configuration."""

    def __init__(self, settings: Settings):
        self.settings = settings

    # ---- databases

    def database(self, name: str) -> DatabaseConfig:
        if "://" in name or looks_like_dsn(name):
            if not self.settings.mcp.allow_urls:
                raise ConfigError("database URLs are not allowed here (mcp.allow_urls is off); "
                                  f"use a configured name: {', '.join(sorted(self.settings.databases)) or 'none'}")
            try:
                url = database_url(name) or name
            except ValueError as exc:
                raise ConfigError(f"database: not a valid keyword=value connection string: {exc}") from None
            db = DatabaseConfig(url=url)
        else:
            db = self.settings.database(name)
        limits = self.settings.mcp
        return db.with_limits(timeout_s=min(db.timeout_s, limits.timeout_s), max_rows=min(db.max_rows, limits.max_rows))

    def list_databases(self) -> list[dict[str, Any]]:
        out = []
        for name in sorted(self.settings.databases):
            db = self.settings.database(name)
            out.append({"name": name, "dialect": db.url.split(":", 1)[0].split("+", 1)[0],
                        "timeout_s": db.timeout_s, "max_rows": db.max_rows})
        return out

    def list_tables(self, database: str) -> list[str]:
        with Sandbox.for_database(self.database(database)) as box:
            return box.table_names()

    def describe_table(self, database: str, table: str) -> dict[str, Any]:
        tables = self.list_tables(database)
        if table not in tables:
            raise ConfigError(f"no table {table!r} in {database} (tables: {', '.join(tables[:20])})")
        with Sandbox.for_database(self.database(database)) as box:
            columns = box.query(_columns_sql(box.dialect, table), max_rows=10_000).rows
            count_sql = exp.select(exp.Count(this=exp.Star())).from_(exp.to_table(table)).sql(dialect=box.dialect)
            rows = box.query(count_sql).scalar()
        return {"table": table, "row_count": rows,
                "columns": [{"name": str(c[0]), "type": str(c[1]), "nullable": _nullable(c[2])} for c in columns]}

    def profile_table(self, database: str, table: str) -> dict[str, Any]:
        """The profiler's figures for one table (aggregates only: no row leaves the database)."""
        from watchdog.profile.suggest import profile_database

        tables = self.list_tables(database)
        if table not in tables:
            raise ConfigError(f"no table {table!r} in {database} (tables: {', '.join(tables[:20])})")
        with Sandbox.for_database(self.database(database)) as box:
            [profile] = profile_database(box, [table.rpartition(".")[2] if box.dialect == "postgres" else table])
        return profile.to_dict()

    def query(self, database: str, sql: str, max_rows: int | None = None) -> dict[str, Any]:
        with Sandbox.for_database(self.database(database)) as box:
            result = box.query(sql, max_rows=min(max_rows or box.max_rows, box.max_rows))
        return {"columns": list(result.columns), "rows": [list(jsonable(list(r))) for r in result.rows],
                "truncated": result.truncated}

    # ---- checks, history, verification

    def run_checks(self, database: str, checks_yaml: str) -> dict[str, Any]:
        from watchdog.scan.scanner import scan
        from watchdog.scan.suites import load_suites

        with tempfile.TemporaryDirectory(prefix="wd-mcp-") as folder:
            path = Path(folder) / "suite.yaml"
            path.write_text(checks_yaml, encoding="utf-8")
            suites = load_suites([path])
        checks = [check for suite in suites for check in suite.checks]
        with Sandbox.for_database(self.database(database)) as box:
            doc = scan(box, checks, sample=self.settings.mcp.sample, suites=["(mcp)"])
        return doc.to_json_dict()

    def latest_findings(self, audit: str) -> dict[str, Any]:
        self.settings.audit(audit)
        runs = self.history(audit, limit=1)
        if not runs:
            raise WatchdogError(f"audit {audit!r} has no recorded run yet")
        from watchdog.history import HistoryStore

        store = HistoryStore(self.settings.history_url())
        try:
            return {"run": runs[0], "findings": store.findings_of(runs[0]["id"])}
        finally:
            store.close()

    def history(self, audit: str, limit: int = 20) -> list[dict[str, Any]]:
        from watchdog.history import HistoryStore

        self.settings.audit(audit)
        store = HistoryStore(self.settings.history_url())
        try:
            return [run.to_json_dict() for run in store.list_runs(audit, limit=max(1, min(limit, 200)))]
        finally:
            store.close()

    def latest_report(self, audit: str) -> str:
        runs = self.history(audit, limit=1)
        if not runs or not runs[0].get("out_dir"):
            raise WatchdogError(f"audit {audit!r} has no filed report yet")
        return (Path(runs[0]["out_dir"]) / "report.md").read_text(encoding="utf-8")

    @staticmethod
    def verify_report(report_markdown: str, findings: dict[str, Any]) -> dict[str, Any]:
        from watchdog.verify import verify_fn

        return verify_fn(report_markdown, findings).model_dump(mode="json")


def _columns_sql(dialect: str, table: str) -> str:
    """The catalogue query for ``table``'s columns; the name travels as a SQL string literal built by sqlglot."""
    if dialect == "strictsqlite":  # the sandbox's SQLite dialect
        name = exp.Literal.string(table).sql(dialect="sqlite")
        return f"SELECT name, type, CASE WHEN \"notnull\" = 1 THEN 'NO' ELSE 'YES' END FROM pragma_table_info({name})"
    schema, _, bare = table.rpartition(".")
    where: exp.Expr = exp.column("table_name").eq(exp.Literal.string(bare))
    if schema:
        where = where.and_(exp.column("table_schema").eq(exp.Literal.string(schema)))
    elif dialect == "mysql":
        where = where.and_(exp.column("table_schema").eq(exp.func("DATABASE")))
    query = (exp.select("column_name", "data_type", "is_nullable").from_("information_schema.columns")
             .where(where).order_by("ordinal_position"))
    return query.sql(dialect=dialect)


def _nullable(value: Any) -> bool:
    return str(value).upper() in ("YES", "1", "TRUE")


def log_call(tool: str, arguments: dict[str, Any]) -> None:
    """One line per tool call, secrets masked (arguments may carry URLs or SQL with literals)."""
    shown = {k: (v if len(str(v)) <= 200 else str(v)[:200] + "...") for k, v in arguments.items()}
    log.info("tool %s %s", tool, redact(shown))
