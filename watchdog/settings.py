"""The configuration (``config/watchdog.yaml``): databases, audits and, later, llm/smtp/history.

* Found at ``--config FILE``, else ``$WATCHDOG_CONFIG``, else ``./config/watchdog.yaml``, else the
  ``config/watchdog.yaml`` of the checkout watchdog was installed from.
* ``${VAR}`` and ``${VAR:-default}`` in any string value are taken from the environment.
* Relative paths (SQLite URLs, suite files, report folders) resolve against ``base_dir``, which is
  itself relative to the folder holding the config file (default: that folder). The shipped
  ``config/watchdog.yaml`` sets ``base_dir: ..``, the repository root, so it works from any directory.
* Errors name the file, the line and the field.
"""

from __future__ import annotations

import os
import re
from dataclasses import fields, is_dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any, Literal

import yaml
from pydantic import BaseModel, ConfigDict, Field, SecretStr, ValidationError, field_validator, model_validator
from pydantic.functional_validators import AfterValidator

from watchdog.database import DatabaseConfig
from watchdog.defaults import *  # noqa: F403 -- re-exported: the shared defaults live in watchdog.defaults
from watchdog.defaults import (
    DEFAULT_EXPORT_LIMIT,
    DEFAULT_MAX_ROWS,
    DEFAULT_PARALLEL,
    DEFAULT_SAMPLE,
    DEFAULT_TIMEOUT_S,
)
from watchdog.delivery.channels import DeliveryChannel, OwnerContacts, every_seconds
from watchdog.errors import ConfigError
from watchdog.monitor.config import MonitorConfig
from watchdog.redact import redact_url, register_secret, register_url_secrets
from watchdog.sandbox.file_tables import check_file_path, check_files, check_table_name
from watchdog.scan.selection_config import AuditSelection
from watchdog.yaml_lines import DuplicateKeyError, YamlLines, dotted, load_with_lines, shield_references, unshield

ENV_VAR = "WATCHDOG_CONFIG"
DEFAULT_RELATIVE = Path("config") / "watchdog.yaml"
_INTERPOLATION = re.compile(r"\$\{([A-Za-z_][A-Za-z0-9_]*)(?::-([^}]*))?\}")


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", defer_build=True)  # schemas built on first use: fast imports


#: the key and value types of ``files:`` (errors are reported at the entry's line)
TableName = Annotated[str, AfterValidator(check_table_name)]
FilePath = Annotated[str, AfterValidator(check_file_path)]


class DatabaseEntry(_Strict):
    """A ``databases:`` entry as the config file gives it: checked field by field here (errors name the
    field), then turned into the :class:`~watchdog.database.DatabaseConfig` the rest of watchdog uses."""

    model_config = ConfigDict(extra="forbid", defer_build=True, from_attributes=True)  # from a DatabaseConfig too

    url: str = Field(min_length=1)
    timeout_s: float = Field(default=DEFAULT_TIMEOUT_S, gt=0)
    max_rows: int = Field(default=DEFAULT_MAX_ROWS, gt=0)
    files: dict[TableName, FilePath] = Field(default_factory=dict)  #: DuckDB: {table: CSV/Parquet/JSON path or glob}
    parallel: int = Field(default=DEFAULT_PARALLEL, ge=1)

    @model_validator(mode="after")
    def _files(self) -> DatabaseEntry:  # files: only under a DuckDB URL
        check_files(self.url, self.files)
        return self

    def config(self) -> DatabaseConfig:
        return DatabaseConfig(url=self.url, timeout_s=self.timeout_s, max_rows=self.max_rows, files=dict(self.files),
                              parallel=self.parallel)


if TYPE_CHECKING:
    _Database = DatabaseConfig
else:  # validated as a DatabaseEntry, kept as a DatabaseConfig
    _Database = Annotated[DatabaseEntry, AfterValidator(DatabaseEntry.config)]


class Every(_Strict):
    every: str

    @field_validator("every")
    @classmethod
    def _interval(cls, value: str) -> str:
        if every_seconds(value) <= 0:
            raise ValueError("the interval must be positive")
        return value


class ExportFailures(_Strict):
    """``export_failures:`` on an audit: every failing row into the run folder's ``failures/``."""

    format: Literal["csv", "parquet"] = "csv"
    limit: int = Field(default=DEFAULT_EXPORT_LIMIT, ge=1)


class AuditConfig(_Strict, AuditSelection):  # tags, owners, exclude_tags: the checks it runs
    database: str
    #: suites (files or folders); may be left out when ``monitor:`` watches the tables
    checks: list[str] = Field(default_factory=list)
    #: volume, freshness and schema changes of every table of some schemas, from the catalogue (watchdog/monitor/)
    monitor: MonitorConfig | None = None
    schedule: str | Every | None = None
    timezone: str = "UTC"
    llm: bool = False
    review: bool = False
    sample: int = Field(default=DEFAULT_SAMPLE, ge=0)
    diagnose: bool = True
    deliver: list[DeliveryChannel] = Field(default_factory=list)
    #: a run whose suites hold no check at all is an error unless this is true
    allow_empty: bool = False
    #: true or {format, limit}: every failing row of each breaching check, filed with the run
    export_failures: bool | ExportFailures = False

    @model_validator(mode="after")
    def _something_to_run(self) -> AuditConfig:
        if not self.checks and self.monitor is None:
            raise ValueError("checks: give at least one suite (or monitor: to watch tables without one)")
        return self

    @field_validator("schedule")
    @classmethod
    def _cron(cls, value: Any) -> Any:
        if isinstance(value, str):
            from watchdog.daemon.cron import cron_trigger  # validate what will actually be scheduled

            try:
                cron_trigger(value)
            except ValueError as exc:
                message = str(exc)
                detail = message if "5-field" in message else f"invalid cron string {value!r}: {message}"
                raise ValueError(detail) from None
        return value

    @field_validator("timezone")
    @classmethod
    def _zone(cls, value: str) -> str:
        from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

        try:
            ZoneInfo(value)
        except (ZoneInfoNotFoundError, ValueError):
            raise ValueError(f"unknown time zone {value!r} (use an IANA name such as UTC or Europe/Paris)") from None
        return value


class SmtpConfig(_Strict):
    host: str = "localhost"
    port: int = Field(default=25, gt=0, lt=65536)
    security: Literal["none", "starttls", "ssl"] = "none"
    username: str = ""
    password: SecretStr = SecretStr("")
    sender: str = "watchdog@example.com"
    timeout_s: float = Field(default=30.0, gt=0)


class HistoryConfig(_Strict):
    url: str = "sqlite:///reports/history.db"
    #: how long a locked or unreachable history database is waited for before a run gives up (one line)
    wait_s: float = Field(default=60.0, ge=0)


class SchedulerConfig(_Strict):
    misfire_grace_s: int = Field(default=300, ge=1)
    outbox_interval_s: float = Field(default=60.0, gt=0)
    delivery_attempts: int = Field(default=3, ge=1, le=10)
    delivery_wait_max_s: float = Field(default=5.0, ge=0)
    #: a delivery claimed ``sending`` by a process that died is retried after this many seconds
    delivery_lease_s: float = Field(default=120.0, gt=0)
    #: the leader's lease on the history database; a standby takes over at most lease_s + lease_s/3
    #: after the leader died or lost its connection (default: within 20 s)
    lease_s: float = Field(default=15.0, ge=1, le=600)


class RoleModels(_Strict):
    """A model per role: the cheap one plans and reviews, the capable one writes."""

    planner: str = "gpt-4.1-mini"
    specialist: str = "gpt-4.1"
    evaluator: str = "gpt-4.1-mini"


class RoleTokens(_Strict):
    """Cap on output tokens per role (sent as both max_completion_tokens and max_tokens)."""

    planner: int = Field(default=1000, gt=0)
    specialist: int = Field(default=4000, gt=0)
    evaluator: int = Field(default=1000, gt=0)


class LocalModel(_Strict):
    """A llama.cpp server started on 127.0.0.1 for the run and stopped after it (nothing is downloaded)."""
    model: str
    context: int = Field(default=16384, ge=512)
    threads: int = Field(default=2, ge=1, le=256)
    start_timeout_s: float = Field(default=180.0, gt=0)


class LLMConfig(_Strict):
    """The LLM report. ``base_url``/``api_key`` fall back to OPENAI_BASE_URL / OPENAI_API_KEY."""

    base_url: str | None = None
    api_key: SecretStr | None = None
    models: RoleModels = Field(default_factory=RoleModels)
    max_output_tokens: RoleTokens = Field(default_factory=RoleTokens)
    temperature: float = Field(default=0.2, ge=0, le=2)
    request_timeout_s: float = Field(default=600.0, gt=0)  #: the wait for the first token (prompt reading)
    idle_timeout_s: float = Field(default=60.0, gt=0)  #: then cut when no token comes for this long
    max_attempts: int = Field(default=4, ge=1, le=10)
    retry_wait_max_s: float = Field(default=8.0, ge=0)
    max_fix_rounds: int = Field(default=3, ge=0, le=10)
    max_replans: int = Field(default=1, ge=0, le=3)
    review_threshold: float = Field(default=0.7, ge=0, le=1)
    use_planner: bool = False
    tool_budget: int = Field(default=5, ge=0, le=50)
    tool_max_rows: int = Field(default=20, gt=0, le=200)
    table: Literal["program", "model"] = "model"  #: program: the program writes the table and every number
    causes: Literal["write", "choose"] = "write"  #: program mode: choose causes/fixes among the program's candidates
    review: Literal["gate", "advisory", "off"] = "gate"  #: advisory: recorded, never a fix round
    local: LocalModel | None = None  #: a GGUF file served by llama.cpp for the run (watchdog-dq[local])

    @field_validator("review", mode="before")
    @classmethod
    def _review_off(cls, value: Any) -> Any:  # YAML 1.1 reads a bare `review: off` as false
        return "off" if value is False else value

    def endpoint(self) -> tuple[str | None, str | None]:
        """(base_url, api_key), config first, then the environment; empty strings count as unset."""
        base_url = self.base_url or os.environ.get("OPENAI_BASE_URL") or None
        configured = self.api_key.get_secret_value() if self.api_key is not None else ""
        return base_url, configured or os.environ.get("OPENAI_API_KEY") or None


class MCPConfig(_Strict):
    """``watchdog mcp``: what its clients may reach, and the limits of each call."""

    allow_urls: bool = False          # clients may name only configured databases unless this is on
    max_rows: int = Field(default=200, gt=0)
    timeout_s: float = Field(default=10.0, gt=0)
    sample: int = Field(default=DEFAULT_SAMPLE, ge=0)


class Settings(_Strict):
    base_dir: str | None = None
    #: where checkpoints and run state live (relative to base_dir); $WATCHDOG_STATE_DIR overrides it
    state_dir: str = "reports/.state"
    databases: dict[str, _Database] = Field(default_factory=dict)
    audits: dict[str, AuditConfig] = Field(default_factory=dict)
    llm: LLMConfig = Field(default_factory=LLMConfig)
    mcp: MCPConfig = Field(default_factory=MCPConfig)
    smtp: SmtpConfig = Field(default_factory=SmtpConfig)
    history: HistoryConfig = Field(default_factory=HistoryConfig)
    scheduler: SchedulerConfig = Field(default_factory=SchedulerConfig)
    #: where ``watchdog serve --ui`` is reached by the people alerts go to: messages link to its pages
    public_url: str | None = Field(default=None, pattern=r"^https?://")
    #: who each owner named in suites is, per channel
    owners: dict[str, OwnerContacts] = Field(default_factory=dict)

    #: where the file was read from, and the folder relative paths resolve against
    source: Path | None = None
    root: Path = Field(default_factory=Path.cwd)

    def path(self, value: str | Path) -> Path:
        """A path from the config, made absolute against ``root``."""
        path = Path(value).expanduser()
        return path if path.is_absolute() else (self.root / path).resolve()

    def history_url(self) -> str:
        return resolve_url(self.history.url, self.root)

    def state_path(self) -> Path:
        return self.path(os.environ.get("WATCHDOG_STATE_DIR") or self.state_dir)

    def database_url(self, name: str) -> str:
        return self.database(name).url

    def database(self, name: str) -> DatabaseConfig:
        """The configured database ``name``, its URL resolved against the project root."""
        if name not in self.databases:
            known = ", ".join(sorted(self.databases)) or "none"
            raise ConfigError(f"{self.source}: no database named {redact_url(name)!r} (configured: {known})")
        db = self.databases[name]
        files = {table: str(self.path(path)) for table, path in db.files.items()}
        return replace(db, url=resolve_url(db.url, self.root), files=files)

    def audit(self, name: str) -> AuditConfig:
        if name not in self.audits:
            known = ", ".join(sorted(self.audits)) or "none"
            raise ConfigError(f"{self.source}: no audit named {name!r} (configured: {known})")
        return self.audits[name]


def resolve_url(url: str, root: Path) -> str:
    """A SQLite or DuckDB URL with a relative file path made absolute against ``root``; other URLs unchanged."""
    from sqlalchemy.engine import make_url  # here, not at the top: SQLAlchemy is slow to import

    try:
        parsed = make_url(url)
    except Exception:
        return url
    if parsed.get_backend_name() not in ("sqlite", "duckdb") or not parsed.database or parsed.database == ":memory:":
        return url
    if parsed.database.startswith("file:") or Path(parsed.database).is_absolute():
        return url
    return parsed.set(database=str((root / parsed.database).resolve())).render_as_string(hide_password=False)


def find_config(explicit: str | Path | None = None) -> Path:
    """Where the configuration is read from (see the module docstring for the order)."""
    if explicit:
        return Path(explicit)
    if os.environ.get(ENV_VAR):
        return Path(os.environ[ENV_VAR])
    local = Path.cwd() / DEFAULT_RELATIVE
    if local.is_file():
        return local
    return Path(__file__).resolve().parent.parent / DEFAULT_RELATIVE


def load_settings(path: str | Path | None = None) -> Settings:
    config_path = find_config(path)
    try:
        text = config_path.read_text(encoding="utf-8")
    except OSError as exc:
        raise ConfigError(f"cannot read the configuration {config_path}: {exc.strerror or exc}") from None
    try:
        data, lines = load_with_lines(shield_references(text, _INTERPOLATION))
    except DuplicateKeyError as exc:
        raise ConfigError(f"{config_path}:{exc.line}: {exc}") from None
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f"{config_path}:{mark.line + 1}" if mark else str(config_path)
        raise ConfigError(f"{where}: not valid YAML: {getattr(exc, 'problem', None) or exc}") from None
    data = data or {}
    if not isinstance(data, dict):
        raise ConfigError(f"{config_path}:1: expected a mapping (databases:, audits:, ...)")
    data = _interpolate(data, (), lines, config_path)
    try:
        settings = Settings.model_validate(data)
    except ValidationError as exc:
        raise ConfigError(_describe(exc, lines, config_path)) from None
    settings.source = config_path.resolve()
    settings.root = (config_path.resolve().parent / (settings.base_dir or ".")).resolve()
    _check_references(settings, lines, config_path)
    register_secrets(settings)
    register_secret(os.environ.get("OPENAI_API_KEY"))
    return settings


def register_secrets(model: Any) -> None:
    """One walk over a settings model: every ``SecretStr`` value, and the password of every ``url``
    field (database, history, webhook), is registered with :mod:`watchdog.redact` to be masked."""
    if isinstance(model, SecretStr):
        value = model.get_secret_value()
        register_secret(value)
        for part in value.split()[1:]:  # "Bearer <token>": the token alone is a secret too
            register_secret(part)
    elif isinstance(model, BaseModel) or is_dataclass(model):
        names = type(model).model_fields if isinstance(model, BaseModel) else [f.name for f in fields(model)]
        for name in names:
            value = getattr(model, name)
            if name == "url" and isinstance(value, str):
                register_url_secrets(value)  # every secret the URL carries (password, query, webhook token)
            else:
                register_secrets(value)
    elif isinstance(model, dict):
        for value in model.values():
            register_secrets(value)
    elif isinstance(model, (list, tuple)):
        for value in model:
            register_secrets(value)


def load_settings_or_default(path: str | Path | None = None) -> Settings:
    """The configuration if one is found; otherwise defaults rooted at the current directory."""
    if path or os.environ.get(ENV_VAR) or find_config().is_file():
        return load_settings(path)
    register_secret(os.environ.get("OPENAI_API_KEY"))
    return Settings(root=Path.cwd())


def _interpolate(value: Any, at: tuple[Any, ...], lines: YamlLines, path: Path) -> Any:
    if isinstance(value, dict):
        return {unshield(k) if isinstance(k, str) else k: _interpolate(v, at + (k,), lines, path)
                for k, v in value.items()}
    if isinstance(value, list):
        return [_interpolate(v, at + (i,), lines, path) for i, v in enumerate(value)]
    if not isinstance(value, str):
        return value
    value = unshield(value)

    def substitute(match: re.Match[str]) -> str:
        name, default = match.group(1), match.group(2)
        if name in os.environ and (os.environ[name] or default is None):
            return os.environ[name]
        if default is not None:
            return default
        raise ConfigError(f"{path}:{lines.line(at)}: {dotted(at)}: environment variable {name} is not set "
                          f"(write ${{{name}:-default}} to give a default)")

    return _INTERPOLATION.sub(substitute, value)


def _check_references(settings: Settings, lines: YamlLines, path: Path) -> None:
    for name, audit in settings.audits.items():
        if audit.database not in settings.databases:
            at = ("audits", name, "database")
            known = ", ".join(sorted(settings.databases)) or "none"
            raise ConfigError(f"{path}:{lines.line(at)}: {dotted(at)}: no database named {audit.database!r} "
                              f"under databases: (configured: {known})")


def _describe(exc: ValidationError, lines: YamlLines, path: Path) -> str:
    out = []
    for err in exc.errors():
        loc = tuple(err.get("loc") or ())
        kind = err.get("type", "")
        if kind == "extra_forbidden":
            message = "unknown field"
        elif kind == "missing":
            message = "missing required field"
        else:
            message = str(err.get("msg", "invalid value")).removeprefix("Value error, ")
        out.append(f"{path}:{lines.line(loc)}: {dotted(loc)}: {message}")
    return "invalid configuration:\n  " + "\n  ".join(out) if len(out) > 1 else out[0]
