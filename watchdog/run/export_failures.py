"""Every failing row of each breaching check, written to ``DIR/<check>.csv`` (or ``.parquet``).

Rows are read through the sandbox in batches of :data:`~watchdog.defaults.EXPORT_BATCH_ROWS` (one statement
each: the check's failing-rows query ordered by the table's primary key when it has one, continued past the
last key written where the key is one integer or text column, else with ``LIMIT``/``OFFSET``) and appended to
the file as they come, so memory holds one batch whatever the count; at most ``limit`` rows per check are
written. Beside each file a companion ``<check>.json`` states the cap, whether it was hit, the rows written and
the SQL that reproduces the full list. Parquet is written from the finished CSV by DuckDB (the ``duckdb``
extra), which streams it too.
"""

from __future__ import annotations

import csv
import json
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import sqlglot
from sqlglot import exp

from watchdog.defaults import DEFAULT_EXPORT_LIMIT, EXPORT_BATCH_ROWS
from watchdog.errors import ConfigError, WatchdogError
from watchdog.findings import Finding, FindingsDoc
from watchdog.redact import redact
from watchdog.sandbox import Sandbox
from watchdog.scan import sqlbuild

FORMATS = ("csv", "parquet")
#: the folder of an audit run that holds its exported failing rows
EXPORT_FOLDER = "failures"
#: the statuses whose failing rows are exported
EXPORTED = ("fail", "warn")


@dataclass(frozen=True)
class ExportRequest:
    """Where and how to export: a folder, ``csv`` or ``parquet``, the most rows per check."""

    folder: Path
    format: str = "csv"
    limit: int = DEFAULT_EXPORT_LIMIT
    batch: int = EXPORT_BATCH_ROWS

    def __post_init__(self) -> None:
        if self.format not in FORMATS:
            raise ConfigError(f"export format must be one of {', '.join(FORMATS)}, not {self.format!r}")
        if self.limit < 1 or self.batch < 1:
            raise ConfigError("the export limit and batch must be at least 1 row")
        if self.format == "parquet":
            try:
                import duckdb  # noqa: F401
            except ImportError:
                raise ConfigError("Parquet export needs DuckDB: pip install 'watchdog-dq[duckdb]' "
                                  "(or export as csv)") from None


def file_stem(check_name: str) -> str:
    """A file name for a check: its name with anything but letters, digits, ``.``, ``_`` and ``-`` as ``_``."""
    return re.sub(r"[^A-Za-z0-9._-]", "_", check_name).strip(".") or "check"


def export_failures(box: Sandbox, doc: FindingsDoc, request: ExportRequest,
                    primary_keys: dict[str, list[str]] | None = None) -> list[dict[str, Any]]:
    """Export each breaching finding's failing rows; record each export in its ``details.export`` (and return
    them). A check whose rows cannot be read gets ``details.export.error``; the others are still exported."""
    request.folder.mkdir(parents=True, exist_ok=True)
    done: list[dict[str, Any]] = []
    used: set[str] = set()
    for finding in doc.findings:
        if finding.status not in EXPORTED or not finding.sql:
            continue
        stem = file_stem(finding.name)
        while stem in used:
            stem += "_"
        used.add(stem)
        keys = (primary_keys or {}).get(finding.table or "", [])
        try:
            record = _export_one(box, finding, request, stem, keys)
        except WatchdogError as exc:
            record = {"check": finding.name, "error": redact(str(exc))}
        finding.details["export"] = {k: v for k, v in record.items() if k not in ("check", "sql")}
        done.append(record)
    return done


def batch_sql(sql: str, dialect: str, keys: list[str], size: int, offset: int, after: Any = None) -> str:
    """One batch of ``sql``'s rows: ``SELECT * FROM (sql) ORDER BY keys LIMIT size OFFSET offset``, or with
    ``after`` (the last value of a one-column key) ``WHERE key > after ORDER BY key LIMIT size``: each batch then
    starts at its first row through the key instead of reading past every row exported before it."""
    inner = sqlglot.parse_one(sql, read=dialect)
    query = exp.select("*").from_(
        exp.Subquery(this=inner, alias=exp.TableAlias(this=exp.to_identifier("wd_failing"))))
    if keys:
        query = query.order_by(*[exp.column(sqlbuild.ident(k), "wd_failing") for k in keys])
    if after is not None:
        literal = exp.Literal.number(after) if isinstance(after, int) else exp.Literal.string(after)
        return query.where(exp.GT(this=exp.column(sqlbuild.ident(keys[0]), "wd_failing"), expression=literal)) \
            .limit(size).sql(dialect=dialect)
    return query.limit(size).offset(offset).sql(dialect=dialect)


def _last_key(columns: list[str], rows: list[tuple[Any, ...]], keys: list[str]) -> Any:
    """The last row's key where the batches can continue from it: one key column, read back as an integer or a
    text (other types, compound keys: None, and the next batch uses OFFSET)."""
    if len(keys) != 1 or keys[0] not in columns or not rows:
        return None
    value = rows[-1][columns.index(keys[0])]
    return value if isinstance(value, (int, str)) and not isinstance(value, bool) else None


def _export_one(box: Sandbox, finding: Finding, request: ExportRequest, stem: str,
                keys: list[str]) -> dict[str, Any]:
    sql = finding.sql or ""
    csv_path = request.folder / f"{stem}.csv"
    rows = batches = 0
    columns: list[str] | None = None
    more = True
    after = None
    with csv_path.open("w", newline="", encoding="utf-8") as handle:
        writer = csv.writer(handle)
        while more and rows < request.limit:
            size = min(request.batch, request.limit - rows)
            result = box.query(batch_sql(sql, box.dialect, keys, size, rows, after), max_rows=size)
            batches += 1
            if columns is None:
                columns = list(result.columns)
                writer.writerow(columns)
            writer.writerows(result.rows)
            rows += len(result.rows)
            after = _last_key(columns, result.rows, keys)
            # fewer rows than asked, and not cut by the byte cap: the list is complete
            more = bool(result.rows) and (len(result.rows) == size or result.truncated)
    capped = rows >= request.limit and _has_more(box, sql, keys, rows, after)
    path = csv_path
    if request.format == "parquet":
        path = _to_parquet(csv_path)
    record = {"check": finding.name, "file": path.name, "format": request.format, "rows": rows,
              "limit": request.limit, "capped": capped, "failing": finding.failing, "batches": batches,
              "order": keys or None, "sql": sql}
    (request.folder / f"{stem}.json").write_text(json.dumps(record, indent=2, default=str) + "\n", encoding="utf-8")
    return record


def _has_more(box: Sandbox, sql: str, keys: list[str], offset: int, after: Any) -> bool:
    return bool(box.query(batch_sql(sql, box.dialect, keys, 1, offset, after), max_rows=1).rows)


def _to_parquet(csv_path: Path) -> Path:
    """The CSV as Parquet (DuckDB reads and writes it streaming); the CSV is removed."""
    import duckdb

    target = csv_path.with_suffix(".parquet")
    con = duckdb.connect(":memory:")
    try:
        con.execute("SET memory_limit = '256MB'")
        con.execute("SET preserve_insertion_order = true")
        source = "read_csv(?, header = true, all_varchar = false)"
        into = exp.Literal.string(str(target)).sql(dialect="duckdb")  # a quoted literal: no file name is code
        con.execute(f"COPY (SELECT * FROM {source}) TO {into} (FORMAT parquet)", [str(csv_path)])
    finally:
        con.close()
    csv_path.unlink()
    return target


def primary_keys(box: Sandbox, tables: list[str]) -> dict[str, list[str]]:
    """The primary key of each table that has one (an engine whose catalog cannot say: none)."""
    from watchdog.profile.schema import read_schema

    try:
        return {info.name: list(info.primary_key) for info in read_schema(box, tables) if info.primary_key}
    except (ValueError, WatchdogError):
        return {}
