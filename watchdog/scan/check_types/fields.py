"""Check options as frozen dataclasses, validated from a suite's YAML without pydantic.

An options class derives from :class:`Options` and is decorated with :func:`options_class`: it is a
``dataclass(frozen=True, kw_only=True)``, made so on first use (parsing, construction) rather than
at import, since the stdlib decorator costs about 0.7 ms a class and a scan uses few of the check
types. A field takes its constraints from :func:`option` (``min_length``, ``ge``, ``gt``, ``le``;
``before``: a hook that sees the raw value first; ``after``: one that sees the converted value) and
its type from the annotation (see :mod:`field_types`). Rules across fields live in
``__post_init__`` and raise :class:`ValueError`; they run only when every field is valid.

:meth:`Options.parse` converts a mapping as pydantic's lax mode did and reports every problem at
once, each with the path of its field, in pydantic's words (:class:`OptionsError`): unknown options
("unknown option 'x'") and missing ones ("missing required option 'x'") included.
"""

from __future__ import annotations

import dataclasses
import threading
from collections.abc import Callable, Mapping
from typing import Any, Self, TypeVar, dataclass_transform, get_type_hints

from watchdog.errors import ConfigError, did_you_mean
from watchdog.scan.check_types.field_types import FAILED, FieldType, Loc, Problem, compile_hint, got, run

__all__ = ["Options", "OptionsError", "Problem", "option", "options_class"]

T = TypeVar("T")
OptionsT = TypeVar("OptionsT", bound="Options")


class OptionsError(ConfigError):
    """The options are invalid; ``problems`` lists every problem found (the suite reader names their lines)."""

    def __init__(self, problems: list[Problem]):
        super().__init__("; ".join(f"{'.'.join(map(str, p.loc)) or 'options'}: {p.message}" for p in problems))
        self.problems = problems


class _Rules:
    __slots__ = ("min_length", "ge", "gt", "le", "before", "after")

    def __init__(self, min_length: int | None = None, ge: float | None = None, gt: float | None = None,
                 le: float | None = None, before: Callable[[Any], Any] | None = None,
                 after: Callable[[Any], Any] | None = None):
        self.min_length, self.ge, self.gt, self.le = min_length, ge, gt, le
        self.before, self.after = before, after


def option(default: Any = dataclasses.MISSING, *, min_length: int | None = None, ge: float | None = None,
           gt: float | None = None, le: float | None = None, before: Callable[[Any], Any] | None = None,
           after: Callable[[Any], Any] | None = None) -> Any:
    """A field with constraints; without ``default`` the option is required."""
    assert not isinstance(default, (list, dict, set)), "mutable defaults are not supported"
    rules = _Rules(min_length, ge, gt, le, before, after)
    return dataclasses.field(default=default, metadata={"rules": rules})


_PENDING: set[type] = set()
_LOCK = threading.Lock()


@dataclass_transform(kw_only_default=True, frozen_default=True, field_specifiers=(option, dataclasses.field))
def options_class(cls: type[T]) -> type[T]:
    """Make ``cls`` a ``dataclass(frozen=True, kw_only=True)`` on its first use (see the module's notes)."""
    _PENDING.add(cls)
    return cls


def dataclass_now(cls: type) -> None:
    """Apply the dataclass decorator to ``cls`` and its pending bases (bases first), if not done yet."""
    if "__dataclass_fields__" in cls.__dict__:
        return
    with _LOCK:
        for klass in reversed(cls.__mro__):
            if klass in _PENDING and "__dataclass_fields__" not in klass.__dict__:
                dataclasses.dataclass(frozen=True, kw_only=True)(klass)
                _PENDING.discard(klass)


class Options:
    """Base of every options class."""

    def __new__(cls, *args: Any, **kwargs: Any) -> Self:
        dataclass_now(cls)  # constructed before any parse: its __init__ is made now (and then called)
        return super().__new__(cls)

    @classmethod
    def parse(cls, data: Any) -> Self:
        """Options from a mapping (a suite's YAML); raise :class:`OptionsError` listing every problem."""
        problems: list[Problem] = []
        result = _parse(cls, data, (), problems)
        if problems:
            raise OptionsError(problems)
        return result


# ---- constraints


def _plural(n: int, word: str) -> str:
    return f"{n} {word}" if n == 1 else f"{n} {word}s"


def _constrain(value: Any, rules: _Rules) -> None:
    if value is None:
        return
    if rules.min_length is not None and len(value) < rules.min_length:
        n = rules.min_length
        if isinstance(value, str):
            raise ValueError(f"String should have at least {_plural(n, 'character')}")
        what = "List" if isinstance(value, list) else "Dictionary" if isinstance(value, dict) else "Value"
        raise ValueError(f"{what} should have at least {_plural(n, 'item')} after validation, not {len(value)}")
    if rules.gt is not None and not value > rules.gt:
        raise ValueError(f"Input should be greater than {rules.gt}")
    if rules.ge is not None and not value >= rules.ge:
        raise ValueError(f"Input should be greater than or equal to {rules.ge}")
    if rules.le is not None and not value <= rules.le:
        raise ValueError(f"Input should be less than or equal to {rules.le}")


# ---- fields and classes


class _Field:
    __slots__ = ("name", "required", "type", "rules")

    def __init__(self, name: str, required: bool, kind: FieldType, rules: _Rules):
        self.name, self.required, self.type, self.rules = name, required, kind, rules

    def validate(self, value: Any, loc: Loc, problems: list[Problem]) -> Any:
        """The converted value, or FAILED with its problems recorded (a hook's message has no "(got …)")."""
        if self.rules.before is not None:
            try:
                value = self.rules.before(value)
            except ValueError as exc:
                problems.append(Problem(loc, str(exc)))
                return FAILED
        converted = run(self.type.convert, value, loc, problems)
        if converted is FAILED:
            return FAILED
        try:
            _constrain(converted, self.rules)
        except ValueError as exc:  # shown with the value as written (2, not 2.0)
            problems.append(Problem(loc, str(exc) + got(value)))
            return FAILED
        if self.rules.after is not None and converted is not None:
            try:
                converted = self.rules.after(converted)
            except ValueError as exc:
                problems.append(Problem(loc, str(exc)))
                return FAILED
        return converted


_SPECS: dict[type, dict[str, _Field]] = {}
_NO_RULES = _Rules()


def _is_options(hint: Any) -> bool:
    return isinstance(hint, type) and issubclass(hint, Options)


def _nested(cls: type[Options], value: Any, loc: Loc, problems: list[Problem]) -> Any:
    before = len(problems)
    result = _parse(cls, value, loc, problems)
    return FAILED if len(problems) > before else result


def _spec(cls: type[Options]) -> dict[str, _Field]:
    """The fields of ``cls``, their types read and compiled once per class."""
    spec = _SPECS.get(cls)
    if spec is None:
        dataclass_now(cls)
        hints = get_type_hints(cls)
        spec = {}
        for f in dataclasses.fields(cls):  # type: ignore[arg-type]  # a dataclass now
            required = f.default is dataclasses.MISSING and f.default_factory is dataclasses.MISSING
            kind = compile_hint(hints[f.name], _nested, _is_options)
            spec[f.name] = _Field(f.name, required, kind, f.metadata.get("rules", _NO_RULES))
        _SPECS[cls] = spec
    return spec


def _parse(cls: type[OptionsT], data: Any, loc: Loc, problems: list[Problem]) -> OptionsT:
    """``cls`` from ``data``; on any problem, the problems are recorded and the result is None."""
    if not isinstance(data, Mapping):
        problems.append(Problem(loc, "Input should be a valid dictionary" + got(data)))
        return None  # type: ignore[return-value]
    spec = _spec(cls)
    before = len(problems)
    values: dict[str, Any] = {}
    for name, f in spec.items():
        if name not in data:
            if f.required:
                problems.append(Problem(loc + (name,), f"missing required option {name!r}"))
            continue
        values[name] = f.validate(data[name], loc + (name,), problems)  # FAILED: its problems are recorded
    for key in data:
        if key not in spec:
            problems.append(Problem(loc + (key,), f"unknown option {key!r}{did_you_mean(key, spec)}"))
    if len(problems) > before:
        return None  # type: ignore[return-value]
    try:
        return cls(**values)
    except ValueError as exc:  # a rule across fields (__post_init__)
        problems.append(Problem(loc, str(exc)))
        return None  # type: ignore[return-value]
