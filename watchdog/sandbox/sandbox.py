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
from watchdog.sandbox.dialects import missing_driver
from watchdog.sandbox.direct import psycopg_conninfo
from watchdog.sandbox.policy import ReadOnlyPolicy, sqlglot_dialect
from watchdog.sandbox.result import QueryResult

if TYPE_CHECKING:
    from sqlglot import exp

    from watchdog.database import DatabaseConfig
    from watchdog.sandbox.sessions import Session

log = logging.getLogger(__name__)

DEFAULT_MAX_BYTES = 16 * 1024 * 1024


def unknown_dialect(drivername: str) -> str:
    """The message for a URL whose database kind or driver SQLAlchemy cannot load."""
    backend, _, driver = drivername.partition("+")
    if backend == "hive":
        return ("hive:// (Spark SQL through the Spark Thrift server) needs PyHive: "
                "pip install 'watchdog-dq[spark]'")
    missing = missing_driver(backend)
    if missing is not None:
        return missing
    if driver and backend in ("sqlite", "postgresql", "mysql", "mariadb"):
        return (f"the driver {driver!r} for {backend} is not installed or not known; "
                f"use e.g. {_EXAMPLES[backend]}")
    return (f"unknown database kind {drivername!r} in the URL; watchdog reads SQLite, PostgreSQL, "
            f"MySQL/MariaDB and DuckDB, e.g. {_EXAMPLES['sqlite']}, {_EXAMPLES['postgresql']}, "
            f"{_EXAMPLES['mysql']} or duckdb:///path/to/file.duckdb")


_EXAMPLES = {"sqlite": "sqlite:///path/to/file.db", "postgresql": "postgresql+psycopg://user@host/db",
             "mysql": "mysql+pymysql://user@host/db", "mariadb": "mysql+pymysql://user@host/db"}


class Sandbox:
    """Runs one read statement at a time, vetted by the parser and enforced by the database.

    >>> box = Sandbox("sqlite:///reports/demo/crm.db", timeout_s=5, max_rows=100)
    >>> box.query("SELECT count(*) FROM contacts").scalar()    # doctest: +SKIP
    """

    @classmethod
    def for_database(cls, db: DatabaseConfig, **options: Any) -> Sandbox:
        """A sandbox on a configured database, with its limits."""
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
        """``files``: DuckDB only, tables read from files ``{name: path or glob}`` (see duckdb_session.py)."""
        sqlite_file = _plain_sqlite_file(url)
        if sqlite_file is not None:  # the common cases read without importing SQLAlchemy
            backend = "sqlite"
        elif psycopg_conninfo(url) is not None:
            backend = "postgresql"
        else:
            from sqlalchemy.engine import make_url

            try:
                backend = make_url(url).get_backend_name()
            except Exception:
                raise DatabaseUnavailable(f"not a database URL: {redact_url(url)!r}") from None
        self.display_url = redact_url(url)
        self.timeout_s = float(timeout_s)
        self.max_rows = int(max_rows)
        self.max_bytes = int(max_bytes)
        self.dialect = sqlglot_dialect(backend)
        self.policy = policy or ReadOnlyPolicy(self.dialect)
        given_session = session is not None
        if session is None and sqlite_file is not None:
            from watchdog.sandbox.sqlite_session import SQLiteSession

            session = SQLiteSession(sqlite_file)
        if session is None and backend == "duckdb":
            from watchdog.sandbox.duckdb_session import DuckDBSession

            session = DuckDBSession(url, files)
        elif files:
            raise DatabaseUnavailable("files: needs a DuckDB database (duckdb:///:memory: or duckdb:///path.duckdb)")
        if session is None and psycopg_conninfo(url) is not None:  # psycopg directly: no SQLAlchemy import
            from watchdog.sandbox.sessions import open_session

            session = open_session(url)
        if session is None:
            from sqlalchemy.engine import make_url
            from sqlalchemy.exc import NoSuchModuleError

            from watchdog.sandbox.sessions import open_session

            try:
                session = open_session(url)
            except NoSuchModuleError:
                raise DatabaseUnavailable(unknown_dialect(make_url(url).drivername)) from None
            except ImportError:  # a warehouse's SQLAlchemy dialect is there but not its driver
                missing = missing_driver(backend)
                if missing is None:
                    raise
                raise DatabaseUnavailable(missing) from None
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
              parallel: bool = False) -> QueryResult:
        """Run one read statement and return its rows (raises a SandboxError subclass).

        ``parallel``: the caller needs no column names when there is no row (the scanner's own
        statements); PostgreSQL then streams the result from a plain statement instead of a
        server-side cursor, which lets the server plan it with parallel workers.
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


def _plain_sqlite_file(url: str) -> str | None:
    """The file of a plain ``sqlite:///path`` URL (no driver, query or escapes), else None."""
    prefix = "sqlite:///"
    if not url.startswith(prefix) or any(c in url for c in "?%#"):
        return None
    return url[len(prefix):] or None
