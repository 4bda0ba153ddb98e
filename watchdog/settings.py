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
from pathlib import Path
from typing import Any

import yaml
from pydantic import BaseModel, ConfigDict, Field, ValidationError
from sqlalchemy.engine import make_url

from watchdog.errors import ConfigError
from watchdog.redact import register_secret
from watchdog.yaml_lines import DuplicateKeyError, YamlLines, load_with_lines

ENV_VAR = "WATCHDOG_CONFIG"
DEFAULT_RELATIVE = Path("config") / "watchdog.yaml"
_INTERPOLATION = re.compile(r"\$\{([A-Za-z_][A-Za-z0-9_]*)(?::-([^}]*))?\}")


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid")


class DatabaseConfig(_Strict):
    url: str = Field(min_length=1)
    timeout_s: float = Field(default=30.0, gt=0)
    max_rows: int = Field(default=1000, gt=0)


class AuditConfig(_Strict):
    database: str
    checks: list[str] = Field(min_length=1)
    schedule: str | dict[str, Any] | None = None
    timezone: str = "UTC"
    llm: bool = False
    review: bool = False
    sample: int = Field(default=5, ge=0)
    deliver: list[dict[str, Any]] = Field(default_factory=list)


class Settings(_Strict):
    base_dir: str | None = None
    databases: dict[str, DatabaseConfig] = Field(default_factory=dict)
    audits: dict[str, AuditConfig] = Field(default_factory=dict)
    # sections used by the LLM report, email delivery and the scheduler (validated by those features)
    llm: dict[str, Any] | None = None
    smtp: dict[str, Any] | None = None
    history: dict[str, Any] | None = None

    #: where the file was read from, and the folder relative paths resolve against
    source: Path | None = None
    root: Path = Field(default_factory=Path.cwd)

    def path(self, value: str | Path) -> Path:
        """A path from the config, made absolute against ``root``."""
        path = Path(value).expanduser()
        return path if path.is_absolute() else (self.root / path).resolve()

    def database_url(self, name: str) -> str:
        if name not in self.databases:
            known = ", ".join(sorted(self.databases)) or "none"
            raise ConfigError(f"{self.source}: no database named {name!r} (configured: {known})")
        return resolve_url(self.databases[name].url, self.root)

    def audit(self, name: str) -> AuditConfig:
        if name not in self.audits:
            known = ", ".join(sorted(self.audits)) or "none"
            raise ConfigError(f"{self.source}: no audit named {name!r} (configured: {known})")
        return self.audits[name]


def resolve_url(url: str, root: Path) -> str:
    """A SQLite URL with a relative file path made absolute against ``root``; other URLs unchanged."""
    try:
        parsed = make_url(url)
    except Exception:
        return url
    if parsed.get_backend_name() != "sqlite" or not parsed.database or parsed.database == ":memory:":
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
        data, lines = load_with_lines(text)
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
    for db in settings.databases.values():
        try:
            password = make_url(db.url).password
        except Exception:
            continue
        register_secret(password if isinstance(password, str) else None)
    for section in (settings.llm or {}, settings.smtp or {}):
        for key in ("api_key", "password"):
            register_secret(section.get(key) if isinstance(section.get(key), str) else None)
    return settings


def _interpolate(value: Any, at: tuple[Any, ...], lines: YamlLines, path: Path) -> Any:
    if isinstance(value, dict):
        return {k: _interpolate(v, at + (k,), lines, path) for k, v in value.items()}
    if isinstance(value, list):
        return [_interpolate(v, at + (i,), lines, path) for i, v in enumerate(value)]
    if not isinstance(value, str):
        return value

    def substitute(match: re.Match[str]) -> str:
        name, default = match.group(1), match.group(2)
        if name in os.environ and (os.environ[name] or default is None):
            return os.environ[name]
        if default is not None:
            return default
        raise ConfigError(f"{path}:{lines.line(at)}: {_dotted(at)}: environment variable {name} is not set "
                          f"(write ${{{name}:-default}} to give a default)")

    return _INTERPOLATION.sub(substitute, value)


def _check_references(settings: Settings, lines: YamlLines, path: Path) -> None:
    for name, audit in settings.audits.items():
        if audit.database not in settings.databases:
            at = ("audits", name, "database")
            known = ", ".join(sorted(settings.databases)) or "none"
            raise ConfigError(f"{path}:{lines.line(at)}: {_dotted(at)}: no database named {audit.database!r} "
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
        out.append(f"{path}:{lines.line(loc)}: {_dotted(loc)}: {message}")
    return "invalid configuration:\n  " + "\n  ".join(out) if len(out) > 1 else out[0]


def _dotted(path: tuple[Any, ...]) -> str:
    return ".".join(str(p) if not isinstance(p, int) else f"[{p}]" for p in path).replace(".[", "[")
