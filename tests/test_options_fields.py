"""The check options' validator (watchdog/scan/check_types/fields.py): constraints, coercions, problems."""

from __future__ import annotations

import dataclasses
import json
import subprocess
import sys
import textwrap
from datetime import date, datetime
from typing import Any, Literal

import pytest

from watchdog.scan.check_types import check_types, fields
from watchdog.scan.check_types.anomaly_options import AnomalyOptions
from watchdog.scan.check_types.fields import Options, OptionsError, option, options_class


def _not_blank(value: str) -> str:
    if not value.strip():
        raise ValueError("must not be blank")
    return value


def _listed(value: Any) -> Any:
    return [value] if isinstance(value, str) else value


def _no_x(value: Any) -> Any:
    if value == "x":
        raise ValueError("x is refused before anything else")
    return value


@options_class
class Inner(Options):
    size: int = option(1, ge=1, le=50)
    unit: Literal["hour", "day"] | None = None

    def __post_init__(self) -> None:
        if self.size > 10 and self.unit is None:
            raise ValueError("a size above 10 needs a unit")


@options_class
class Sample(Options):
    name: str = option(min_length=1)
    count: int | None = option(None, ge=0)
    rate: float | None = option(None, ge=0, le=1)
    scale: float = option(1.0, gt=0)
    flag: bool = False
    mode: Literal["fail", "warn"] = "fail"
    tags: list[str] | None = option(None, min_length=1)
    values: list[str | int | float | bool] | None = None
    types: dict[str, str | None] | None = option(None, min_length=1)
    key: str | list[str] | None = option(None, min_length=1)
    bound: int | float | str | date | datetime | None = None
    listed: list[str] | None = option(None, before=_listed)
    early: str | None = option(None, before=_no_x)
    label: str | None = option(None, after=_not_blank)
    inner: Inner | None = None
    low: int | None = None
    high: int | None = None
    number: float | None = None
    text: str | None = None

    def __post_init__(self) -> None:
        if self.low is not None and self.high is not None and self.low > self.high:
            raise ValueError(f"low ({self.low}) is greater than high ({self.high})")


def parse(**data: Any) -> Sample:
    return Sample.parse({"name": "n", **data})


def problems(data: dict[str, Any]) -> list[tuple[tuple[Any, ...], str]]:
    with pytest.raises(OptionsError) as info:
        Sample.parse(data)
    return [(p.loc, p.message) for p in info.value.problems]


def problem(**data: Any) -> tuple[tuple[Any, ...], str]:
    [found] = problems({"name": "n", **data})
    return found


# ---- constraints


def test_min_length_on_strings_lists_and_mappings():
    assert problem(name="") == (("name",), "String should have at least 1 character (got '')")
    assert problem(tags=[]) == (("tags",), "List should have at least 1 item after validation, not 0 (got [])")
    assert problem(types={}) == (("types",),
                                 "Dictionary should have at least 1 item after validation, not 0 (got {})")
    assert problem(key="") == (("key",), "String should have at least 1 character (got '')")
    assert problem(key=[]) == (("key",), "List should have at least 1 item after validation, not 0 (got [])")


def test_ge_gt_le_in_pydantics_words_with_the_value_as_written():
    assert problem(count=-1) == (("count",), "Input should be greater than or equal to 0 (got -1)")
    assert problem(rate=2) == (("rate",), "Input should be less than or equal to 1 (got 2)")
    assert problem(rate=-0.5) == (("rate",), "Input should be greater than or equal to 0 (got -0.5)")
    assert problem(scale=0) == (("scale",), "Input should be greater than 0 (got 0)")
    assert parse(count=0, rate=1, scale=0.1) == Sample(name="n", count=0, rate=1.0, scale=0.1)


def test_literal_choices():
    assert problem(mode="critical") == (("mode",), "Input should be 'fail' or 'warn' (got 'critical')")
    assert problem(inner={"unit": "week"}) == (("inner", "unit"), "Input should be 'hour' or 'day' (got 'week')")
    assert parse(mode="warn").mode == "warn"


# ---- coercions (pydantic's lax mode for YAML values)


@pytest.mark.parametrize(("given", "expected"), [(3, 3), (3.0, 3), ("3", 3), (" -4 ", -4), (None, None)])
def test_int_takes_ints_integral_floats_and_numeric_text(given, expected):
    value = parse(low=given).low
    assert value == expected and type(value) is type(expected)


@pytest.mark.parametrize(("given", "message"), [
    (1.5, "Input should be a valid integer, got a number with a fractional part"),
    ("x", "Input should be a valid integer, unable to parse string as an integer"),
    ("1.5", "Input should be a valid integer, unable to parse string as an integer"),
    (True, "Input should be a valid integer"),
    ([1], "Input should be a valid integer"),
    (float("inf"), "Input should be a finite number"),
])
def test_int_refuses(given, message):
    assert problem(low=given) == (("low",), f"{message} (got {given!r})")


@pytest.mark.parametrize(("given", "expected"), [(1, 1.0), (0.5, 0.5), ("0.25", 0.25), ("1e-1", 0.1)])
def test_float_takes_numbers_and_numeric_text(given, expected):
    value = parse(rate=given).rate
    assert value == expected and type(value) is float


@pytest.mark.parametrize(("given", "message"), [
    ("x", "Input should be a valid number, unable to parse string as a number"),
    ("1_0", "Input should be a valid number, unable to parse string as a number"),
    (False, "Input should be a valid number"),
    ({}, "Input should be a valid number"),
])
def test_float_refuses(given, message):
    assert problem(rate=given) == (("rate",), f"{message} (got {given!r})")


@pytest.mark.parametrize(("given", "expected"), [
    (True, True), (False, False), (1, True), (0, False), ("yes", True), ("Off", False), (" t ", True), ("0", False)])
def test_bool_takes_bools_zero_one_and_the_usual_words(given, expected):
    assert parse(flag=given).flag is expected


@pytest.mark.parametrize(("given", "message"), [
    (2, "Input should be a valid boolean, unable to interpret input"),
    ("maybe", "Input should be a valid boolean, unable to interpret input"),
    (None, "Input should be a valid boolean"),
    ([True], "Input should be a valid boolean"),
])
def test_bool_refuses(given, message):
    assert problem(flag=given) == (("flag",), f"{message} (got {given!r})")


def test_str_takes_strings_only():
    assert problem(name=5) == (("name",), "Input should be a valid string (got 5)")
    assert problem(label=True) == (("label",), "Input should be a valid string (got True)")


def test_scalar_coercions_agree_with_pydantic_lax_mode():
    """The same values accepted, converted to the same values, as the pydantic models did (except bools
    for numbers, which pydantic took as 1 and 0 and the validator refuses)."""
    pydantic = pytest.importorskip("pydantic")
    model = pydantic.create_model("M", i=(int | None, None), f=(float | None, None), b=(bool | None, None),
                                  s=(str | None, None))
    mine = {"i": "low", "f": "number", "b": "flag", "s": "text"}
    inputs = [0, 1, -3, 2.0, 2.5, "7", " 8 ", "-9", "1.5", "x", "", "yes", "no", "on", "OFF", "t", "F", "1e3",
              "inf", 1e300, [], {}, [1], date(2024, 1, 2), None]
    for field, ours in mine.items():
        for value in inputs:
            if field in ("i", "f") and isinstance(value, bool) or (field, value) == ("i", 1e300):
                continue  # pydantic's ints stop at 64 bits for floats; Python's do not
            try:
                theirs: Any = getattr(model.model_validate({field: value}), field)
            except pydantic.ValidationError:
                theirs = "refused"
            try:
                got: Any = getattr(parse(**{ours: value}), ours)
            except OptionsError:
                got = "refused"
            if field == "b" and value is None:
                theirs = "refused"  # the flag is not optional here
            assert (got, type(got)) == (theirs, type(theirs)), (field, value)


def test_unions_take_the_member_of_the_values_own_type_first():
    values = parse(values=["a", "1", 1, 1.5, True, False]).values
    assert values == ["a", "1", 1, 1.5, True, False]
    assert [type(v) for v in values] == [str, str, int, float, bool, bool]
    for bound in (3, 2.5, "2024-01-02", date(2024, 1, 2), datetime(2024, 1, 2, 3, 4)):
        got = parse(bound=bound).bound
        assert got == bound and type(got) is type(bound)
    assert parse(key="a").key == "a" and parse(key=["a", "b"]).key == ["a", "b"]


def test_a_union_that_fits_no_member_is_one_problem():
    assert problem(bound=[1]) == (("bound",), "Input should be a valid integer, number, string, date or datetime "
                                              "(got [1])")
    assert problem(key=5) == (("key",), "Input should be a valid string or list (got 5)")
    assert problem(key=["a", 5]) == (("key", 1), "Input should be a valid string (got 5)")


def test_lists_and_mappings_report_each_bad_item_by_position_or_key():
    assert problems({"name": "n", "values": ["a", {}, [2]], "types": {"a": "int", "b": 5}}) == [
        (("values", 1), "Input should be a valid string, integer, number or boolean (got {})"),
        (("values", 2), "Input should be a valid string, integer, number or boolean (got [2])"),
        (("types", "b"), "Input should be a valid string (got 5)"),
    ]
    assert problem(tags="a") == (("tags",), "Input should be a valid list (got 'a')")
    assert problem(types=["a"]) == (("types",), "Input should be a valid dictionary (got ['a'])")
    assert parse(types={"a": None, "b": "int"}).types == {"a": None, "b": "int"}


# ---- hooks and rules across fields


def test_before_hooks_see_the_raw_value_and_their_errors_have_no_got_suffix():
    assert parse(listed="a").listed == ["a"]
    assert problem(early="x") == (("early",), "x is refused before anything else")


def test_after_hooks_run_on_converted_values_only():
    assert parse(label="ok").label == "ok"
    assert problem(label="  ") == (("label",), "must not be blank")
    assert problem(label=5) == (("label",), "Input should be a valid string (got 5)")  # the hook never saw 5


def test_rules_across_fields_run_when_every_field_is_valid():
    assert problems({"name": "n", "low": 3, "high": 1}) == [((), "low (3) is greater than high (1)")]
    assert problems({"name": "n", "low": 3, "high": 1, "count": -1}) == [
        (("count",), "Input should be greater than or equal to 0 (got -1)")]


def test_nested_options_report_by_path():
    assert parse(inner={"size": "12", "unit": "day"}).inner == Inner(size=12, unit="day")
    assert problems({"name": "n", "inner": {"size": 0, "colour": 1}}) == [
        (("inner", "size"), "Input should be greater than or equal to 1 (got 0)"),
        (("inner", "colour"), "unknown option 'colour'"),
    ]
    assert problem(inner={"size": 11}) == (("inner",), "a size above 10 needs a unit")
    assert problem(inner=[1]) == (("inner",), "Input should be a valid dictionary (got [1])")


# ---- unknown, missing, all at once


def test_unknown_and_missing_options():
    assert problems({"nme": "x"}) == [(("name",), "missing required option 'name'"),
                                      (("nme",), "unknown option 'nme' (did you mean 'name'?)")]
    assert problems({"name": "x", "zzz": 1}) == [(("zzz",), "unknown option 'zzz'")]  # no close name: no hint


def test_every_problem_is_reported_at_once_in_field_order_then_unknown_options():
    found = problems({"count": -1, "mode": "x", "flag": "maybe", "extra": 1, "inner": {"size": 99}})
    assert [loc for loc, _ in found] == [("name",), ("count",), ("flag",), ("mode",), ("inner", "size"), ("extra",)]


def test_defaults_frozen_and_not_a_mapping():
    sample = Sample.parse({"name": "n"})
    assert (sample.count, sample.scale, sample.mode, sample.inner) == (None, 1.0, "fail", None)
    with pytest.raises(dataclasses.FrozenInstanceError):
        sample.name = "m"  # type: ignore[misc]
    with pytest.raises(OptionsError, match="Input should be a valid dictionary"):
        Sample.parse(["name"])


def test_type_hints_are_read_once_per_class(monkeypatch):
    fields._SPECS.pop(Sample, None)
    calls = []
    real = fields.get_type_hints

    def counting(cls: type) -> dict[str, Any]:
        calls.append(cls)
        return real(cls)

    monkeypatch.setattr(fields, "get_type_hints", counting)
    for _ in range(3):
        parse(count=1)
    assert calls == [Sample]


def test_options_classes_become_frozen_dataclasses_on_first_use():
    @options_class
    class Base(Options):
        a: int = option(1, ge=0)

    @options_class
    class Child(Base):
        b: str = option(min_length=1)

        def __post_init__(self) -> None:
            if self.b == "bad":
                raise ValueError("b is bad")

    assert not dataclasses.is_dataclass(Child)  # nothing paid at import
    child = Child(b="x")  # constructed before any parse: the child and its base are made dataclasses first
    assert (child.a, child.b) == (1, "x") and dataclasses.is_dataclass(Base) and dataclasses.is_dataclass(Child)
    assert [f.name for f in dataclasses.fields(Child)] == ["a", "b"]
    assert child == Child(a=1, b="x") and repr(child).endswith("Child(a=1, b='x')")
    with pytest.raises(dataclasses.FrozenInstanceError):
        child.a = 2  # type: ignore[misc]
    with pytest.raises(TypeError):
        Child("x")  # type: ignore[misc]  # keyword-only
    with pytest.raises(ValueError, match="b is bad"):
        Child(b="bad")

    @options_class
    class Other(Base):
        c: bool = False

    assert Other.parse({"c": "yes", "a": "2"}) == Other(a=2, c=True)  # parsed first: made a dataclass then
    assert [p.message for p in _problems_of(Other, {"a": -1, "d": 1})] == [
        "Input should be greater than or equal to 0 (got -1)", "unknown option 'd'"]


def _problems_of(cls: type[Options], data: dict[str, Any]) -> list[Any]:
    with pytest.raises(OptionsError) as info:
        cls.parse(data)
    return info.value.problems


def test_anomaly_options_keep_their_rules():
    assert AnomalyOptions.parse({"timestamp_column": "ts"}).bucket == "day"
    with pytest.raises(OptionsError, match="`bucket` needs `timestamp_column`"):
        AnomalyOptions.parse({"bucket": "day"})
    with pytest.raises(OptionsError, match="at most 2000"):
        AnomalyOptions.parse({"timestamp_column": "ts", "bucket": "hour", "training": "100d"})
    assert AnomalyOptions.parse({"training": "8w"}).training_seconds() == 8 * 7 * 86400


# ---- the scan path does not import pydantic

EVERY_CHECK = """\
tables:
  orders:
    - not_null: id
    - unique: {column: [id, email], max_rate: 0.1}
    - accepted_values: {column: status, values: [open, 1, 2.5, true]}
    - range: {column: amount, min: 0, max: 1e3}
    - pattern: {column: email, regex: '@', match: yes}
    - expression: {condition: "amount >= 0", nulls: fail}
    - foreign_key: {column: customer_id, references: customers.id}
    - freshness: {column: created_at, max_age: 30d}
    - functional_dependency: {determinant: zip, dependent: city}
    - row_count: {min: 1, anomaly: {timestamp_column: created_at, detection: "3"}}
    - schema: {columns: {id: integer, email: text, note: null}}
    - schema_changes: {severity: warn}
    - reconcile: {with: warehouse, key: id}
    - metric: {column: amount, agg: p95, max: 100, warn: {max: 80}}
    - distribution: {column: status, max_psi: 0.2, baseline: {open: 0.5, paid: 0.5}}
custom_sql:
  - {name: no_orphans, sql: "SELECT 0"}
"""


def test_loading_a_suite_of_every_check_type_does_not_import_pydantic(tmp_path):
    path = tmp_path / "every.yaml"
    path.write_text(EVERY_CHECK, encoding="utf-8")
    script = textwrap.dedent(f"""
        import json, sys
        from watchdog.scan.suites import load_suite
        checks = load_suite({str(path)!r}).checks
        print(json.dumps({{"kinds": sorted(c.kind for c in checks), "pydantic": "pydantic" in sys.modules}}))
    """)
    out = json.loads(subprocess.run([sys.executable, "-c", script], check=True, capture_output=True,
                                    text=True).stdout)
    assert out["kinds"] == sorted(check_types())
    assert out["pydantic"] is False
