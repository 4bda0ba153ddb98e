"""Great Expectations' own test definitions (shared/oracles/great_expectations) as an oracle for our counts.

Every GX dataset becomes one table in SQLite and in PostgreSQL (column types inferred from the values);
each GX test case's kwargs become one of our checks, run through the real suite loader and scanner, and
our failing count / pass-fail are compared with GX's ``unexpected_list`` / ``success``. A GX case that
expects an error must be an error for us too (a suite error, or a finding with status ``error``).

Nothing is skipped silently. Cases fall in three groups, each asserted below:
  * compared: our documented rule and GX's agree, so the outcome must match exactly;
  * deliberately different (``DIFFERS``): our documented rule differs on purpose, with the reason; those
    whose failing count is still comparable run too and must give GX's count and our own pass/fail;
  * left out (``LEFT_OUT``): GX-only backends, SQL-suppressed cases, mixed-type columns, or no equivalent.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
import yaml

from tests.dbs import create_database
from watchdog.findings import Finding
from watchdog.sandbox import Sandbox
from watchdog.scan.scanner import scan
from watchdog.scan.suites import SuiteError, load_suite

ORACLES = Path(__file__).parents[2] / "shared" / "oracles" / "great_expectations"
BACKENDS = ("sqlite", "postgresql")
#: GX expectation -> our check type; None: we have no equivalent (every case left out with the reason)
EXPECTATIONS = {
    "expect_column_values_to_not_be_null": "not_null",
    "expect_column_values_to_be_in_set": "accepted_values",
    "expect_column_values_to_match_regex": "pattern",
    "expect_column_values_to_be_between": "range",
    "expect_column_values_to_be_unique": "unique",
    "expect_compound_columns_to_be_unique": "unique",
    "expect_table_row_count_to_be_between": "row_count",
    "expect_column_values_to_be_null": None,
    "expect_column_values_to_not_be_in_set": None,
}
NO_EQUIVALENT = {
    "expect_column_values_to_be_null": "no equivalent: we have no check that requires a column to BE null",
    "expect_column_values_to_not_be_in_set": "no equivalent: we have no forbidden-values check (only an allow-list)",
}
#: GX suppresses the whole regex dataset for SQLite because its SQLite dialect has no REGEXP; our sandbox
#: registers a case-sensitive search function there, so the expected outcomes apply and we run them.
RUN_DESPITE_DATASET_SUPPRESSION = {"sqlite"}
#: kwargs that only shape GX's output, not the outcome
OUTPUT_ONLY = {"result_format", "catch_exceptions"}

# ---- the reasons our documented rule deliberately differs
MOSTLY = ("GX `mostly` is a share of non-null values; our max_rate (= 1 - mostly) is a share of all rows, "
          "so with NULLs in the column the pass/fail threshold differs (the failing count does not)")
STRICT = "GX strict_min/strict_max exclude the bound; our range is inclusive only"
EMPTY_SET = "an empty accepted-values list is a suite error for us; GX fails every row against it"
EMPTY_REGEX = "an empty regex is a suite error for us; GX counts every value as matching it"
IGNORE_ANY = ("GX ignore_row_if=any_value_is_missing; our compound unique skips only rows whose key columns "
              "are all NULL (GX's default all_values_are_missing)")
AFFINITY = ("SQLite compares a TEXT column with numeric bounds by type affinity (as text) instead of raising "
            "GX's type error; PostgreSQL raises, and that case is compared")

#: every deliberately different case, by file:title (":sqlite" / ":postgresql" when only on one backend)
EXPECTED_DIFFERENCES = {
    "expect_column_values_to_be_between:negative_test_to_verify_that_the_denominator_for_mostly_works_with_missing_values": MOSTLY,  # noqa: E501
    "expect_column_values_to_be_between:positive_test_to_verify_that_the_denominator_for_mostly_works_with_missing_values": MOSTLY,  # noqa: E501
    "expect_column_values_to_match_regex:negative_test_one_missing_value_and_insufficent_mostly": MOSTLY,
    "expect_column_values_to_match_regex:positive_test_one_missing_value_and_exact_mostly": MOSTLY,
    "expect_column_values_to_match_regex:positive_test_one_missing_value_and_sufficent_mostly": MOSTLY,
    "expect_column_values_to_match_regex:positive_test_all_missing_values_mostly": MOSTLY,
    "expect_column_values_to_be_unique:positive_case_using_mostly": MOSTLY,
    "expect_column_values_to_be_unique:negative_case_using_mostly": MOSTLY,
    "expect_column_values_to_be_between:test_strict_min_failure": STRICT,
    "expect_column_values_to_be_between:test_strict_max_failure": STRICT,
    "expect_column_values_to_be_in_set:empty_value_set": EMPTY_SET,
    "expect_column_values_to_be_in_set:negative_empty_values_set": EMPTY_SET,
    "expect_column_values_to_match_regex:positive_test_empty_regex": EMPTY_REGEX,
    "expect_compound_columns_to_be_unique:basic_test_ignore_if_any_are_missing": IGNORE_ANY,
    "expect_column_values_to_be_between:error_on_string-to-int_comparisons:sqlite": AFFINITY,
}


@dataclass
class Table:
    name: str
    columns: dict[str, str]  # portable types for TestDatabase.create_table
    rows: list[tuple[Any, ...]]
    mixed: set[str]  # columns left out of the table: numbers and strings mixed


@dataclass
class Case:
    file: str
    title: str
    backend: str
    table: Table
    entry: dict[str, Any] | None  # our suite entry, e.g. {"range": {"column": "x", "min": 1}}
    failing: int | None  # GX: number of unexpected values (None when GX does not say)
    success: bool | None
    observed: int | None
    raises: bool  # GX raises for these kwargs
    differs: str | None = None
    left_out: str | None = None
    comparable_count: bool = False  # for a deliberate difference: the failing count is still GX's

    @property
    def key(self) -> str:
        return f"{self.file}:{self.title}"

    @property
    def id(self) -> str:
        return f"{self.key}:{self.backend}"


def column_type(values: list[Any]) -> str | None:
    present = [v for v in values if v is not None]
    if not present or all(isinstance(v, str) for v in present):
        return "text"
    if all(isinstance(v, int) and not isinstance(v, bool) for v in present):
        return "int"
    if all(isinstance(v, (int, float)) and not isinstance(v, bool) for v in present):
        return "real"
    return None


def make_table(name: str, data: dict[str, list[Any]]) -> Table:
    types = {col: column_type(values) for col, values in data.items()}
    keep = [c for c, t in types.items() if t]
    height = max((len(v) for v in data.values()), default=0)
    rows = [tuple(data[c][i] for c in keep) for i in range(height)]
    return Table(name, {c: types[c] for c in keep}, rows, {c for c, t in types.items() if not t})  # type: ignore[misc]


def gx_count(out: dict[str, Any]) -> int | None:
    for key in ("unexpected_list", "unexpected_index_list"):
        if key in out:
            return len(out[key])
    result = out.get("result") or {}
    if "unexpected_count" in result:
        return int(result["unexpected_count"])
    return len(result["unexpected_list"]) if "unexpected_list" in result else None


def translate(kind: str, kw: dict[str, Any], table: Table) -> tuple[dict[str, Any] | None, str | None, str | None]:
    """GX kwargs -> (our suite entry, deliberate-difference reason, left-out reason)."""
    unknown = set(kw) - OUTPUT_ONLY - {"column", "column_list", "value_set", "regex", "min_value", "max_value",
                                       "strict_min", "strict_max", "mostly", "ignore_row_if"}
    if unknown:
        return None, None, f"untranslated GX option(s) {sorted(unknown)}"
    cols = kw.get("column_list") or ([kw["column"]] if "column" in kw else [])
    mixed = [c for c in cols if c in table.mixed]
    if mixed:
        return None, None, f"mixed-type column {mixed[0]!r}: numbers and strings that one SQL column can't hold"
    differs = None
    options: dict[str, Any] = {}
    if kw.get("mostly") is not None:
        options["max_rate"] = round(1 - kw["mostly"], 10)
        idx = [list(table.columns).index(c) for c in cols]
        if kind != "not_null" and any(all(r[i] is None for i in idx) for r in table.rows):
            differs = MOSTLY  # GX leaves these rows out of the denominator; we do not
    if kind == "row_count":
        bounds = {k: kw[g] for k, g in (("min", "min_value"), ("max", "max_value")) if kw.get(g) is not None}
        return {"row_count": bounds}, None, None
    column = kw["column_list"] if "column_list" in kw else kw["column"]
    if kind == "not_null":
        return {"not_null": {"column": column, **options}}, differs, None
    if kind == "accepted_values":
        return {"accepted_values": {"column": column, "values": kw["value_set"], **options}}, \
            differs or (EMPTY_SET if not kw["value_set"] else None), None
    if kind == "pattern":
        return {"pattern": {"column": column, "regex": kw["regex"], **options}}, \
            differs or (EMPTY_REGEX if kw["regex"] == "" else None), None
    if kind == "range":
        bounds = {k: kw[g] for k, g in (("min", "min_value"), ("max", "max_value")) if kw.get(g) is not None}
        strict = kw.get("strict_min") or kw.get("strict_max")
        return {"range": {"column": column, **bounds, **options}}, differs or (STRICT if strict else None), None
    if kw.get("ignore_row_if", "all_values_are_missing") != "all_values_are_missing":
        differs = differs or IGNORE_ANY
    return {"unique": {"column": column, **options}}, differs, None


def load_cases() -> tuple[list[Table], list[Case]]:
    tables: list[Table] = []
    cases: list[Case] = []
    for path in sorted(ORACLES.glob("*.json")):
        doc = json.loads(path.read_text(encoding="utf-8"))
        file, kind = path.stem, EXPECTATIONS[path.stem]
        assert doc["expectation_type"] == file
        for n, dataset in enumerate(doc["datasets"]):
            # `data_alt` (some datasets) is GX's variant for engines that cannot hold `data`; we use `data`.
            table = make_table(f"{file.removeprefix('expect_')}_{n}", dataset["data"])
            tables.append(table)
            for test in dataset["tests"]:
                out = test.get("out") or {}
                for backend in BACKENDS:
                    case = Case(file, test["title"], backend, table, None, gx_count(out), out.get("success"),
                                out.get("observed_value"), "error" in test or "traceback_substring" in out)
                    only_for = test.get("only_for") or dataset.get("only_for")
                    suppressed = set(test.get("suppress_test_for") or [])
                    if backend not in RUN_DESPITE_DATASET_SUPPRESSION:
                        suppressed |= set(dataset.get("suppress_test_for") or [])
                    if kind is None:
                        case.left_out = NO_EQUIVALENT[file]
                    elif only_for and backend not in only_for:
                        case.left_out = f"only_for {only_for}: a GX backend we don't have"
                    elif "sqlalchemy" in suppressed or backend in suppressed:
                        case.left_out = f"GX suppresses it for SQL backends ({sorted(suppressed)})"
                    else:
                        case.entry, case.differs, case.left_out = translate(kind, test["in"], table)
                    if case.differs is None and f"{case.key}:{backend}" in EXPECTED_DIFFERENCES and case.entry:
                        case.differs = EXPECTED_DIFFERENCES[f"{case.key}:{backend}"]
                    case.comparable_count = case.differs == MOSTLY
                    cases.append(case)
    return tables, cases


TABLES, CASES = load_cases()
COMPARED = [c for c in CASES if c.entry is not None and not c.differs and not c.left_out]
DIFFERS = [c for c in CASES if c.differs]
LEFT_OUT = [c for c in CASES if c.left_out]


@pytest.fixture(scope="module")
def sandboxes(tmp_path_factory):
    """One database per backend holding every GX dataset as a table, created on first use."""
    opened: dict[str, tuple[Any, Sandbox]] = {}

    def get(backend: str) -> Sandbox:
        if backend not in opened:
            db = create_database(backend, tmp_path_factory.mktemp(f"gx_{backend}"))
            for table in TABLES:
                db.create_table(table.name, table.columns, table.rows)
            opened[backend] = (db, Sandbox(db.url))
        return opened[backend][1]

    yield get
    for db, box in opened.values():
        box.close()
        db.close()


def run_case(case: Case, sandbox: Sandbox, tmp_path: Path) -> Finding | SuiteError:
    options = next(iter(case.entry.values()))  # type: ignore[union-attr]
    column = options.get("column")
    for name in [column] if isinstance(column, str) else column or []:  # so an error is never a typo's
        assert name in case.table.columns, f"{case.id}: column {name!r} is not in {case.table.name}"
    path = tmp_path / "suite.yaml"
    path.write_text(yaml.safe_dump({"tables": {case.table.name: [case.entry]}}, allow_unicode=True), encoding="utf-8")
    try:
        suite = load_suite(path)
    except SuiteError as exc:
        return exc
    doc = scan(sandbox, suite.checks, sample=0)
    assert doc.error is None and len(doc.findings) == 1
    return doc.findings[0]


@pytest.mark.parametrize("case", [pytest.param(c, id=c.id) for c in COMPARED])
def test_counts_and_outcome_match_great_expectations(case: Case, sandboxes, tmp_path):
    assert_as_great_expectations(case, run_case(case, sandboxes(case.backend), tmp_path))


def assert_as_great_expectations(case: Case, got: Finding | SuiteError, engine: str = "we") -> None:
    """``got`` (a finding, or the suite's refusal) says what GX said for ``case``."""
    if case.raises:
        assert isinstance(got, SuiteError) or got.status == "error", (
            f"GX raises for {case.entry}; {engine} accepted it and reported {got.status} (failing={got.failing})")
        return
    assert isinstance(got, Finding), f"GX accepts {case.entry}; {engine} rejected the suite: {got}"
    assert got.error is None
    if case.failing is not None:
        assert got.failing == case.failing
    if case.observed is not None:
        assert got.observed == case.observed
    assert got.total == len(case.table.rows)  # total = rows looked at
    assert got.status == ("pass" if case.success else "fail")


@pytest.mark.parametrize("case", [pytest.param(c, id=c.id) for c in DIFFERS if c.comparable_count
                                  or c.differs in (EMPTY_SET, EMPTY_REGEX)])
def test_deliberately_different_cases_follow_our_documented_rule(case: Case, sandboxes, tmp_path):
    got = run_case(case, sandboxes(case.backend), tmp_path)
    if case.differs in (EMPTY_SET, EMPTY_REGEX):
        assert isinstance(got, SuiteError)
        return
    assert isinstance(got, Finding) and got.error is None
    assert got.failing == case.failing  # the count rule is GX's; only the threshold's denominator differs
    rows = len(case.table.rows)
    max_rate = next(iter(case.entry.values()))["max_rate"]  # type: ignore[union-attr]
    assert got.total == rows and got.status == ("fail" if got.failing / rows > max_rate else "pass")


def test_mostly_denominator_changes_these_outcomes():
    """The MOSTLY difference is real, not hypothetical: these pass for us (share of all rows), fail for GX."""
    flipped = {c.key for c in DIFFERS if c.differs == MOSTLY and c.success is False
               and c.failing / len(c.table.rows) <= next(iter(c.entry.values()))["max_rate"]}  # type: ignore
    assert flipped == {
        "expect_column_values_to_be_between:negative_test_to_verify_that_the_denominator_for_mostly_works_with_missing_values",  # noqa: E501
        "expect_column_values_to_match_regex:negative_test_one_missing_value_and_insufficent_mostly",
        "expect_column_values_to_be_unique:negative_case_using_mostly",
    }


def test_deliberate_differences_are_exactly_the_expected_ones_each_with_a_reason():
    found: dict[str, str] = {}
    for case in DIFFERS:
        key = case.key if f"{case.key}:{case.backend}" not in EXPECTED_DIFFERENCES else case.id
        found.setdefault(key, case.differs)  # type: ignore[arg-type]
    assert found == EXPECTED_DIFFERENCES
    assert len(DIFFERS) > 0 and all(c.differs and len(c.differs) > 20 for c in DIFFERS)
    for case in DIFFERS:
        print(f"differs  {case.id}: {case.differs}")


def test_left_out_cases_each_have_an_accepted_reason():
    accepted = ("no equivalent:", "only_for ", "GX suppresses it for SQL", "mixed-type column")
    for case in LEFT_OUT:
        print(f"left out {case.id}: {case.left_out}")
    assert LEFT_OUT and all(c.left_out and c.left_out.startswith(accepted) for c in LEFT_OUT)
    assert not (set(c.id for c in LEFT_OUT) & set(c.id for c in COMPARED + DIFFERS))
    assert len(CASES) == len(COMPARED) + len(DIFFERS) + len(LEFT_OUT)


def test_dozens_of_cases_are_compared_on_each_backend_and_every_check_type():
    for backend in BACKENDS:
        mine = [c for c in COMPARED if c.backend == backend]
        assert len(mine) >= 40, backend
        kinds = {next(iter(c.entry)) for c in mine}  # type: ignore[arg-type]
        assert kinds == {"not_null", "accepted_values", "pattern", "range", "unique", "row_count"}
        assert any(c.raises for c in mine) and any(c.success is False for c in mine)
    assert len({c.id for c in CASES}) == len(CASES)  # ids are unique and readable
