"""Check-suite YAML: the contract's forms load, and every mistake names file, line and field."""

from pathlib import Path

import pytest

from watchdog.scan.suites import SuiteError, load_suite, load_suites

CONTRACT_SUITE = """\
tables:
  contacts:
    - not_null: email                      # short form: the column
    - unique: email
    - unique: [first_name, last_name]      # compound
    - pattern: {column: email, regex: '^[^@ ]+@[^@ ]+\\.[a-z]{2,}$'}
    - accepted_values: {column: status, values: [lead, customer, churned]}
    - range: {column: age, min: 0, max: 120}
    - foreign_key: {column: company_id, references: companies.id}
    - freshness: {column: updated_at, max_age: 30d}    # units s, m, h, d
    - row_count: {min: 1, max: 1000000}
custom_sql:
  - name: won_deals_without_amount
    sql: SELECT count(*) FROM deals WHERE stage = 'won' AND amount IS NULL
"""


@pytest.fixture
def write_suite(tmp_path: Path):
    def write(text: str, name: str = "suite.yaml") -> Path:
        path = tmp_path / name
        path.write_text(text)
        return path

    return write


def problems_of(path: Path) -> list[str]:
    with pytest.raises(SuiteError) as caught:
        load_suite(path)
    return [str(p) for p in caught.value.problems]


def test_contract_suite_loads_with_default_names(write_suite):
    suite = load_suite(write_suite(CONTRACT_SUITE))
    assert [c.name for c in suite.checks] == [
        "contacts.email.not_null",
        "contacts.email.unique",
        "contacts.first_name+last_name.unique",
        "contacts.email.pattern",
        "contacts.status.accepted_values",
        "contacts.age.range",
        "contacts.company_id.foreign_key",
        "contacts.updated_at.freshness",
        "contacts.row_count",
        "won_deals_without_amount",
    ]


def test_common_options_can_sit_beside_the_check_or_inside_it(write_suite):
    suite = load_suite(write_suite("""\
tables:
  t:
    - not_null: a
      name: a_present
      severity: warn
      max_count: 3
    - range: {column: b, min: 0, name: b_ok, max_rate: 0.1, where: "kind = 'x'", description: Bee}
"""))
    first, second = suite.checks
    assert (first.name, first.options.severity, first.options.max_count) == ("a_present", "warn", 3)
    assert (second.name, second.options.max_rate, second.options.where, second.options.description) == (
        "b_ok", 0.1, "kind = 'x'", "Bee")
    assert second.params == {"min": 0, "max_rate": 0.1, "where": "kind = 'x'"}


def test_unknown_check_type_names_line_and_suggests(write_suite):
    path = write_suite("tables:\n  t:\n    - not_null: a\n    - uniqe: a\n")
    [problem] = problems_of(path)
    assert problem.startswith(f"{path}:4: tables.t[1].uniqe: unknown check type 'uniqe'")
    assert "did you mean 'unique'" in problem


def test_unknown_option_names_the_option_and_its_line(write_suite):
    path = write_suite("tables:\n  t:\n    - range:\n        column: a\n        minimum: 1\n")
    [problem] = problems_of(path)
    assert problem == f"{path}:5: tables.t[0].range.minimum: unknown option 'minimum' (did you mean 'min'?)"


def test_wrong_types_and_values_are_reported_all_at_once(write_suite):
    path = write_suite("""\
tables:
  t:
    - accepted_values: {column: s, values: []}
    - pattern: {column: s, regex: '(open'}
    - freshness: {column: ts, max_age: 30 days}
    - not_null: a
      severity: critical
    - row_count: {min: -1}
    - foreign_key: {column: c, references: companies}
    - range: {column: a}
    - not_null: a
      max_rate: 2
""")
    problems = problems_of(path)
    lines = [int(p.split(":")[1]) for p in problems]
    assert lines == [3, 4, 5, 7, 8, 9, 10, 12]
    text = "\n".join(problems)
    for expected in ("values", "not a valid regular expression", "not a duration", "'fail' or 'warn'",
                     "greater than or equal to 0", "expected table.column", "give min, max or both",
                     "less than or equal to 1"):
        assert expected in text


def test_bad_yaml_names_the_line(write_suite):
    path = write_suite("tables:\n  t:\n    - not_null: a\n   - broken: [\n")
    [problem] = problems_of(path)
    assert problem.startswith(f"{path}:") and "not valid YAML" in problem


def test_thresholds_are_refused_on_table_level_checks(write_suite):
    path = write_suite("tables:\n  t:\n    - row_count: {min: 1, max_count: 3}\n")
    [problem] = problems_of(path)
    assert "unknown option 'max_count'" in problem and ":3:" in problem


def test_custom_sql_needs_name_and_sql(write_suite):
    path = write_suite("custom_sql:\n  - name: x\n  - sql: SELECT 1\n    where: a = 1\n")
    problems = problems_of(path)
    assert any("missing required option 'sql'" in p for p in problems)
    assert any(":3:" in p and "missing required option 'name'" in p for p in problems)
    assert any(":4:" in p and "unknown option 'where'" in p for p in problems)


def test_duplicate_check_names_across_files_are_refused(write_suite):
    a = write_suite("tables:\n  t:\n    - not_null: a\n", "a.yaml")
    b = write_suite("tables:\n  t:\n    - not_null: a\n", "b.yaml")
    with pytest.raises(SuiteError, match="two checks are named 't.a.not_null'"):
        load_suites([a, b])


def test_unknown_top_level_section(write_suite):
    path = write_suite("tables: {}\nchecks: []\n")
    [problem] = problems_of(path)
    assert problem.startswith(f"{path}:2: checks: unknown section")


def test_missing_file_is_a_clear_problem(tmp_path):
    with pytest.raises(SuiteError, match="cannot read the file"):
        load_suite(tmp_path / "nope.yaml")


def test_every_check_type_module_is_in_the_lazy_map():
    """A suite imports only the check types it uses (base.KIND_MODULES); the map names every registered type."""
    import importlib
    import pkgutil

    import watchdog.scan.check_types as package
    from watchdog.scan.check_types.base import _REGISTRY, KIND_MODULES

    for module in pkgutil.iter_modules(package.__path__):
        importlib.import_module(f"{package.__name__}.{module.name}")
    assert set(_REGISTRY) == set(KIND_MODULES)
    assert all(_REGISTRY[kind].__module__.endswith("." + KIND_MODULES[kind]) for kind in KIND_MODULES)


def test_a_table_may_be_a_mapping_of_table_options_and_checks(write_suite):
    path = write_suite("""\
tables:
  contacts:
    segments: [source, country]
    timestamp_column: created_at
    checks:
      - not_null: email
      - unique: email
  companies:
    - not_null: name
""")
    checks = {c.name: c for c in load_suite(path).checks}
    assert set(checks) == {"contacts.email.not_null", "contacts.email.unique", "companies.name.not_null"}
    options = checks["contacts.email.unique"].table_options
    assert dict(options) == {"segments": ("source", "country"), "timestamp_column": "created_at"}
    assert checks["contacts.email.not_null"].line == 6
    assert dict(checks["companies.name.not_null"].table_options) == {}
    with pytest.raises(TypeError):
        options["segments"] = ()  # type: ignore[index]


def test_table_option_mistakes_name_file_line_and_the_closest_option(write_suite):
    path = write_suite("""\
tables:
  contacts:
    segmnets: [source]
    timestamp_column: [a, b]
    segments: []
    checks:
      - not_null: emial
      - nott_null: email
  orders:
    checks: {not_null: id}
""")
    found = problems_of(path)
    assert any(f"{path}:3: tables.contacts.segmnets: unknown table option 'segmnets' (did you mean 'segments'?)"
               in p for p in found), found
    assert any(f"{path}:4: tables.contacts.timestamp_column: expected a column name" in p for p in found), found
    assert any(f"{path}:5: tables.contacts.segments: expected a list of column names" in p for p in found), found
    assert any(f"{path}:8: tables.contacts.checks[1].nott_null: unknown check type" in p for p in found), found
    assert any(f"{path}:10: tables.orders.checks: expected a list of checks" in p for p in found), found
    assert len(found) == 5, found


def test_a_table_mapping_without_checks_has_no_checks(write_suite):
    path = write_suite("""\
tables:
  contacts:
    segments: [source]
""")
    assert any("the suite has no checks" in p for p in problems_of(path))


def test_the_diagnose_table_option(write_suite):
    from watchdog.scan.table_options import DiagnoseOptions

    path = write_suite("""\
tables:
  contacts:
    diagnose: {passing: true, timeout_s: 120}
    checks: [{not_null: email}]
  deals:
    diagnose: false
    checks: [{not_null: amount}]
""")
    options = {c.table: c.table_options["diagnose"] for c in load_suite(path).checks}
    assert options == {"contacts": DiagnoseOptions(True, True, None, 120.0), "deals": DiagnoseOptions(False)}
    bad = write_suite("""\
tables:
  contacts:
    diagnose: {pasing: true, statements: 0}
    checks: [{not_null: email}]
""", "bad.yaml")
    found = problems_of(bad)
    assert len(found) == 1 and f"{bad}:3: tables.contacts.diagnose: unknown diagnose option 'pasing' (did you mean " \
        "'passing'?)" in found[0]
