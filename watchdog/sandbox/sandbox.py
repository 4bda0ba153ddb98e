"""The read-only query tool: the only path from watchdog to a user database."""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from watchdog.defaults import DEFAULT_MAX_ROWS, DEFAULT_TIMEOUT_S
from watchdog.errors import DatabaseUnavailable
from watchdog.redact import redact_url
from watchdog.sandbox import cancel as cancelling
from watchdog.sandbox.policy import ReadOnlyPolicy, sqlglot_dialect
from watchdog.sandbox.result import QueryResult
from watchdog.urls import driver_url

if TYPE_CHECKING:
    from sqlglot import exp

    from watchdog.database import DatabaseConfig
    from watchdog.sandbox.sessions import Session

log = logging.getLogger(__name__)

DEFAULT_MAX_BYTES = 16 * 1024 * 1024

#: per dialect: the statement listing the tables and views a read-only role can see
_TABLES_SQL = {
    "strictsqlite": "SELECT name FROM sqlite_master WHERE type IN ('table', 'view') AND name NOT LIKE 'sqlite_%' "
              "ORDER BY name",
    "postgres": "SELECT table_schema || '.' || table_name FROM information_schema.tables "
                "WHERE table_schema NOT IN ('pg_catalog', 'information_schema') ORDER BY 1",
    "mysql": "SELECT table_name FROM information_schema.tables WHERE table_schema = DATABASE() ORDER BY 1",
    # DuckDB: the database's tables and views, and the file tables (TEMP views)
    "duckdb": "SELECT DISTINCT table_name FROM information_schema.tables WHERE table_schema = 'main' ORDER BY 1",
}


class Sandbox:
    """Runs one read statement at a time, vetted by the parser and enforced by the database.

    >>> box = Sandbox("sqlite:///reports/demo/crm.db", timeout_s=5, max_rows=100)
    >>> box.query("SELECT count(*) FROM contacts").scalar()    # doctest: +SKIP
    """

    @classmethod
    def for_database(cls, db: DatabaseConfig, **options: Any) -> Sandbox:
        """A sandbox on a configured database, with its limits (DatabaseUnavailable when it names none)."""
        if db.unusable:
            raise DatabaseUnavailable(db.unusable)
        return cls(db.url, timeout_s=db.timeout_s, max_rows=db.max_rows, files=db.files or None, **options)

    def __init__(
        self,
        url: str,
        *,
        timeout_s: float = DEFAULT_TIMEOUT_S,
        max_rows: int = DEFAULT_MAX_ROWS,
        max_bytes: int = DEFAULT_MAX_BYTES,
        policy: ReadOnlyPolicy | None = None,
        session: Session | None = None,
        files: dict[str, str] | None = None,
    ):
        """``files``: DuckDB only, tables read from files ``{name: path or glob}`` (see duckdb_session.py).
        How the URL opens a session is decided in one place, :func:`watchdog.sandbox.sessions.open_session`."""
        from watchdog.sandbox.sessions import backend_name, open_session

        url = driver_url(url)  # the password percent-encoded, postgres:// read as postgresql://
        self.display_url = redact_url(url)
        backend = backend_name(url)
        self.timeout_s = float(timeout_s)
        self.max_rows = int(max_rows)
        self.max_bytes = int(max_bytes)
        self.dialect = sqlglot_dialect(backend)
        self.policy = policy or ReadOnlyPolicy(self.dialect)
        given_session = session is not None
        if session is None:
            session = open_session(url, files)
        #: what :meth:`sibling` needs to open the same database again (None: a session was given)
        self._reopen = None if given_session else (url, files)
        self._session = session
        self._listeners: list[Callable[[str], None]] = []
        self._lock = threading.Lock()

    def on_execute(self, listener: Callable[[str], None]) -> None:
        """Call ``listener(sql)`` for every statement sent to the database (tests, counters)."""
        self._listeners.append(listener)

    def vet(self, sql: str) -> exp.Expr:
        """Parse and check ``sql`` without running it (raises QueryRefused)."""
        return self.policy.vet(sql)

    def query(self, sql: str, *, max_rows: int | None = None, timeout_s: float | None = None,
              parallel: bool = False, jit: bool = True, ship_rows: bool = False) -> QueryResult:
        """Run one read statement and return its rows (raises a SandboxError subclass).

        ``parallel``: the caller needs no column names when there is no row (the scanner's own
        statements); PostgreSQL then streams the result from a plain statement instead of a
        server-side cursor, which lets the server plan it with parallel workers. ``jit``: False turns
        PostgreSQL's JIT compilation off for this statement (elsewhere it changes nothing). ``ship_rows``: the
        statement hands many rows from its scan to the rest of the query (the diagnosis's failing rows); PostgreSQL
        is told a row handed on by a parallel worker costs next to nothing, so it searches them with its workers.
        """
        self.policy.vet(sql)
        if cancelling.stopping():
            raise DatabaseUnavailable("not run: watchdog is stopping (running statements were cancelled)")
        for listener in self._listeners:
            listener(sql)
        log.debug("query on %s: %s", self.display_url, sql)
        return self._session.run(
            sql,
            max_rows=self.max_rows if max_rows is None else max(0, int(max_rows)),
            max_bytes=self.max_bytes,
            timeout_s=self.timeout_s if timeout_s is None else float(timeout_s),
            **({"parallel": True} if parallel else {}),
            **({"jit": False} if not jit and self.dialect == "postgres" else {}),
            **({"ship_rows": True} if ship_rows and self.dialect == "postgres" else {}),
        )

    def columns(self, table: str) -> list[dict[str, str]]:
        """The columns of ``table`` from the catalog: ``[{"name", "type", "generic"}]`` (see catalog.py)."""
        from watchdog.sandbox.catalog import describe

        with self._lock:
            return describe(self._session, table)

    def column_types(self, table: list[str]) -> dict[str, tuple[str, str]]:
        """``{column: (kind, declared type)}`` of ``table`` (dotted parts), read from the catalogue and
        cached for the sandbox's life; empty when it cannot be read. See :mod:`watchdog.sandbox.catalog`."""
        key = tuple(table)
        cache = self.__dict__.setdefault("_column_types", {})
        if key not in cache:
            with self._lock:
                found = None
                direct = getattr(self._session, "dialect_name", "") == "sqlite" or hasattr(
                    getattr(self._session, "_engine", None), "_conninfo")  # SQLite, psycopg: no SQLAlchemy
                if direct:
                    from watchdog.sandbox import column_kinds

                    read = column_kinds.sqlite if self._session.dialect_name == "sqlite" else column_kinds.postgres
                    found = read(self._session, list(table), timeout_s=self.timeout_s)
                if found is None:
                    from watchdog.sandbox.catalog import column_types

                    found = column_types(self._session, list(table))
                cache[key] = found
        return dict(cache[key])

    def table_names(self) -> list[str]:
        """The tables and views a read-only role can see (PostgreSQL: ``schema.table``), read through the
        sandbox once and cached for its life."""
        cache = self.__dict__.get("_table_names")
        if cache is None:
            sql = _TABLES_SQL.get(self.dialect, _TABLES_SQL["postgres"])
            cache = self.__dict__["_table_names"] = [str(row[0]) for row in self.query(sql, max_rows=10_000).rows]
        return list(cache)

    def can_open_sibling(self) -> bool:
        """Whether :meth:`sibling` can open a second sandbox whose statement :meth:`interrupt` can stop."""
        return self._reopen is not None and hasattr(self._session, "interrupt")

    def sibling(self) -> Sandbox | None:
        """A second sandbox on the same database with the same limits, policy and listeners (a scan runs
        slow statements on it meanwhile); None when this one was given its session or cannot open another."""
        if self._reopen is None:
            return None
        url, files = self._reopen
        try:
            box = Sandbox(url, timeout_s=self.timeout_s, max_rows=self.max_rows, max_bytes=self.max_bytes,
                          policy=self.policy, files=files)
        except DatabaseUnavailable:
            return None
        box._listeners = self._listeners
        return box

    def interrupt(self) -> None:
        """Stop the statement running now, from another thread (Ctrl-C while a scan uses a sibling): the
        SQLite worker is killed and the statement fails. Only for sandboxes :meth:`can_open_sibling` allows."""
        self._session.interrupt()  # type: ignore[attr-defined]

    def close(self) -> None:
        self._session.close()

    def __enter__(self) -> Sandbox:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()
