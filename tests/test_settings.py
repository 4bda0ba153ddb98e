"""Configuration: ${VAR} interpolation, one documented path rule, errors with file, line and field."""

from pathlib import Path

import pytest

from watchdog.errors import ConfigError
from watchdog.redact import redact
from watchdog.settings import load_settings

BASE = """\
base_dir: ..
databases:
  crm:
    url: ${CRM_URL:-sqlite:///data/crm.db}
    timeout_s: 5
audits:
  nightly:
    database: crm
    checks: [checks/crm.yaml]
"""


@pytest.fixture
def config_file(tmp_path: Path):
    def write(text: str) -> Path:
        path = tmp_path / "project" / "config" / "watchdog.yaml"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
        return path

    return write


def test_relative_paths_resolve_against_base_dir_from_any_working_directory(config_file, tmp_path, monkeypatch):
    path = config_file(BASE)
    monkeypatch.delenv("CRM_URL", raising=False)
    monkeypatch.chdir(tmp_path)
    settings = load_settings(path)
    project = (tmp_path / "project").resolve()
    assert settings.root == project
    assert settings.database_url("crm") == f"sqlite:///{project}/data/crm.db"
    assert settings.path(settings.audit("nightly").checks[0]) == project / "checks" / "crm.yaml"


def test_environment_variables_are_interpolated(config_file, monkeypatch):
    monkeypatch.setenv("CRM_URL", "postgresql+psycopg://reader:pw-from-env@db.internal/crm")
    settings = load_settings(config_file(BASE))
    assert settings.database_url("crm") == "postgresql+psycopg://reader:pw-from-env@db.internal/crm"
    assert "pw-from-env" not in redact("connecting with pw-from-env")  # registered as a secret


def test_unquoted_variables_inside_a_flow_mapping_are_interpolated(config_file, monkeypatch):
    monkeypatch.setenv("WD_MODEL", "qwen-local")
    monkeypatch.delenv("WD_REVIEWER", raising=False)
    text = BASE + ("llm:\n  models: {planner: ${WD_MODEL}, specialist: ${WD_MODEL}, evaluator: ${WD_REVIEWER:-small}}\n"
                   "  max_output_tokens: {specialist: ${WD_TOKENS:-900}}\n")
    settings = load_settings(config_file(text))
    assert settings.llm.models.planner == settings.llm.models.specialist == "qwen-local"
    assert settings.llm.models.evaluator == "small" and settings.llm.max_output_tokens.specialist == 900


def test_a_missing_variable_in_a_flow_mapping_names_its_line(config_file, monkeypatch):
    monkeypatch.delenv("NOPE_MODEL", raising=False)
    path = config_file(BASE + "llm:\n  models: {planner: ${NOPE_MODEL}}\n")
    with pytest.raises(ConfigError) as caught:
        load_settings(path)
    assert "llm.models.planner: environment variable NOPE_MODEL is not set" in str(caught.value)
    assert "\u2063" not in str(caught.value)


def test_a_missing_variable_without_default_names_file_line_and_field(config_file, monkeypatch):
    monkeypatch.delenv("NOPE_URL", raising=False)
    path = config_file(BASE.replace("${CRM_URL:-sqlite:///data/crm.db}", "${NOPE_URL}"))
    with pytest.raises(ConfigError) as caught:
        load_settings(path)
    assert str(caught.value).startswith(f"{path}:4: databases.crm.url: environment variable NOPE_URL is not set")


def test_unknown_and_invalid_fields_name_their_line(config_file):
    path = config_file(BASE.replace("timeout_s: 5", "timeout_s: -1\n    colour: blue"))
    with pytest.raises(ConfigError) as caught:
        load_settings(path)
    message = str(caught.value)
    assert f"{path}:5: databases.crm.timeout_s: Input should be greater than 0" in message
    assert f"{path}:6: databases.crm.colour: unknown field" in message


def test_an_audit_naming_an_unknown_database_is_refused(config_file):
    path = config_file(BASE.replace("database: crm", "database: billing"))
    with pytest.raises(ConfigError, match=r":8: audits.nightly.database: no database named 'billing'"):
        load_settings(path)


def test_watchdog_config_variable_is_used_when_no_flag_is_given(config_file, monkeypatch, tmp_path):
    path = config_file(BASE)
    monkeypatch.setenv("WATCHDOG_CONFIG", str(path))
    monkeypatch.chdir(tmp_path)
    assert load_settings().source == path.resolve()


def test_shipped_configuration_defines_the_demo_audit():
    settings = load_settings(Path(__file__).resolve().parent.parent / "config" / "watchdog.yaml")
    assert settings.audit("demo").checks == ["checks/demo_crm.yaml"]
    assert settings.path("checks/demo_crm.yaml").is_file()


def test_every_secret_of_the_settings_is_found_by_one_walk_and_masked(config_file, monkeypatch):
    """SecretStr fields (SMTP password, API key, webhook header values) and URL passwords (databases,
    history, webhook URLs) are registered for masking by load_settings itself, none by hand."""
    secrets = {"DB_PW": "db-Pw-4417", "HIST_PW": "hist-Pw-9921", "SMTP_PW": "smtp-Pw-5530",
               "API_KEY": "sk-live-7781", "HOOK_TOKEN": "hook-Tok-6602", "HOOK_PW": "hook-Pw-3319"}
    for name, value in secrets.items():
        monkeypatch.setenv(name, value)
    path = config_file("""\
databases:
  crm: {url: "postgresql://reader:${DB_PW}@db.example/crm"}
audits:
  nightly:
    database: crm
    checks: [checks/crm.yaml]
    deliver:
      - webhook: {url: "https://bot:${HOOK_PW}@hooks.example/x", headers: {Authorization: "Bearer ${HOOK_TOKEN}"}}
history: {url: "postgresql://wd:${HIST_PW}@db.example/history"}
smtp: {host: mail.example, username: wd, password: "${SMTP_PW}"}
llm: {api_key: "${API_KEY}"}
""")
    settings = load_settings(path)
    shown = repr(settings.smtp) + repr(settings.llm) + repr(settings.audits["nightly"].deliver)
    assert secrets["SMTP_PW"] not in shown and secrets["API_KEY"] not in shown and secrets["HOOK_TOKEN"] not in shown
    text = " ".join(f"value {v} here" for v in secrets.values())
    masked = redact(text)
    assert all(v not in masked for v in secrets.values()), masked
    assert settings.llm.endpoint()[1] == secrets["API_KEY"]


def test_a_configured_database_is_the_plain_dataclass_the_scan_path_uses(config_file, monkeypatch):
    from dataclasses import FrozenInstanceError

    from watchdog.database import DatabaseConfig
    from watchdog.settings import Settings

    monkeypatch.delenv("CRM_URL", raising=False)
    settings = load_settings(config_file(BASE))
    db = settings.database("crm")
    assert type(db) is DatabaseConfig and type(settings.databases["crm"]) is DatabaseConfig
    assert (db.timeout_s, db.max_rows, db.files) == (5.0, 1000, {}) and db.url.endswith("/data/crm.db")
    assert db.with_limits(timeout_s=2) == DatabaseConfig(url=db.url, timeout_s=2.0)
    assert db.with_limits() is db and db.with_limits(max_rows=7).max_rows == 7
    with pytest.raises(FrozenInstanceError):
        db.url = "sqlite://"  # type: ignore[misc]
    assert Settings(databases={"x": db}).databases["x"] == db  # one made in code is checked as an entry


@pytest.mark.parametrize(("given", "message"), [
    ({"url": ""}, "url: a database URL is required"),
    ({"url": "sqlite://", "timeout_s": 0}, "timeout_s: must be a number of seconds greater than 0"),
    ({"url": "sqlite://", "max_rows": -1}, "max_rows: must be a whole number greater than 0"),
    ({"url": "sqlite://", "files": {"t": "t.csv"}}, "files: needs a DuckDB database"),
    ({"url": "duckdb:///:memory:", "files": {"9t": "t.csv"}}, "'9t' cannot be a table name"),
    ({"url": "duckdb:///:memory:", "files": {"t": "t.xlsx"}}, "unknown file kind"),
])
def test_a_database_made_in_code_is_checked_without_pydantic(given, message):
    from watchdog.database import DatabaseConfig

    with pytest.raises(ConfigError, match=message):
        DatabaseConfig(**given)
