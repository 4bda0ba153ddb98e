"""A database to check: its URL and the sandbox's limits, the target every entry point passes on.

A frozen dataclass checked on creation, so that ``watchdog scan --db URL`` needs neither the
configuration model nor pydantic. In the config file, :mod:`watchdog.settings` validates each entry
with pydantic first (errors name the file, line and field) and then makes one of these.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace

from watchdog.defaults import DEFAULT_MAX_ROWS, DEFAULT_PARALLEL, DEFAULT_TIMEOUT_S
from watchdog.redact import register_url_secrets
from watchdog.sandbox.file_tables import FileTableError, check_file_path, check_files, check_table_name
from watchdog.urls import driver_url, dsn_url, looks_like_dsn


class DatabaseConfigError(FileTableError):
    """A database given with an invalid value (an empty URL, a limit that is not positive)."""


@dataclass(frozen=True, kw_only=True)
class DatabaseConfig:
    """A database to check: its URL and the sandbox's limits (the target every entry point passes on)."""

    url: str
    timeout_s: float = DEFAULT_TIMEOUT_S
    max_rows: int = DEFAULT_MAX_ROWS
    files: dict[str, str] = field(default_factory=dict)  #: DuckDB: {table: CSV/Parquet/JSON path or glob}
    #: sandboxes a scan may use at once when its statements are slow (SQLite; 1: one statement at a time)
    parallel: int = DEFAULT_PARALLEL
    #: why no database can be opened from ``url`` (a ``--db`` that is neither a URL nor a configured name):
    #: opening it fails with this, and a scan says it as its error
    unusable: str | None = None

    def __post_init__(self) -> None:
        if not isinstance(self.url, str) or not self.url:
            raise DatabaseConfigError("url: a database URL is required")
        if looks_like_dsn(self.url):  # libpq's "host=... password=..." form, as a URL
            try:
                object.__setattr__(self, "url", dsn_url(self.url))
            except ValueError as exc:
                raise DatabaseConfigError(f"url: not a valid keyword=value connection string: {exc}") from None
        register_url_secrets(self.url)  # before anything can print it (watchdog/urls.py has the rule)
        object.__setattr__(self, "url", driver_url(self.url))  # as the driver reads it: the password encoded
        if isinstance(self.timeout_s, bool) or not isinstance(self.timeout_s, (int, float)) or not self.timeout_s > 0:
            raise DatabaseConfigError(f"timeout_s: must be a number of seconds greater than 0, not {self.timeout_s!r}")
        object.__setattr__(self, "timeout_s", float(self.timeout_s))  # as the config model gives it
        if isinstance(self.max_rows, bool) or not isinstance(self.max_rows, int) or self.max_rows <= 0:
            raise DatabaseConfigError(f"max_rows: must be a whole number greater than 0, not {self.max_rows!r}")
        if isinstance(self.parallel, bool) or not isinstance(self.parallel, int) or self.parallel < 1:
            raise DatabaseConfigError(f"parallel: must be a whole number of at least 1, not {self.parallel!r}")
        for table, path in self.files.items():
            check_table_name(table)
            check_file_path(path)
        check_files(self.url, self.files)

    def with_limits(self, *, timeout_s: float | None = None, max_rows: int | None = None,
                    parallel: int | None = None) -> DatabaseConfig:
        """The same database with limits given on the command line (None keeps the configured ones)."""
        if timeout_s is None and max_rows is None and parallel is None:
            return self
        return replace(self, timeout_s=self.timeout_s if timeout_s is None else timeout_s,
                       max_rows=self.max_rows if max_rows is None else max_rows,
                       parallel=self.parallel if parallel is None else parallel)
