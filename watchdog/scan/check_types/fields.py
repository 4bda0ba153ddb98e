"""Check options as frozen dataclasses, validated from a suite's YAML without pydantic.

An options class is ``@dataclass(frozen=True, kw_only=True)`` deriving from :class:`Options`; a field
takes its constraints from :func:`option` (``min_length``, ``ge``, ``gt``, ``le``; ``before``: a
hook that sees the raw value first; ``after``: a hook that sees the converted one), its type from
the annotation (``str``, ``int``, ``float``, ``bool``, ``date``, ``datetime``, ``Literal[...]``,
``list[X]``, ``dict[K, V]``, unions, ``None``, and nested options classes). Rules across fields
live in ``__post_init__`` and raise :class:`ValueError`.

:meth:`Options.parse` converts a mapping the way pydantic's lax mode did for YAML values (an int
field takes an int, an integral float or a numeric string; a float field an int, a float or a
numeric string; a bool field a bool, 0/1 or the usual true/false words; a string field strings
only; a union the member of the value's exact type first) and reports every problem at once, each
with the path of its field, in pydantic's words: :class:`OptionsError`.
"""

from __future__ import annotations

import contextlib
import dataclasses
import re
import types
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from datetime import date, datetime
from typing import Any, Literal, Self, TypeVar, Union, get_args, get_origin, get_type_hints

Loc = tuple[Any, ...]
OptionsT = TypeVar("OptionsT", bound="Options")


@dataclass(frozen=True)
class Problem:
    """One problem with an option: ``loc`` is the path (field name first, then keys or list indexes)."""

    loc: Loc
    message: str


class OptionsError(ValueError):
    """The options are invalid; ``problems`` lists every problem found."""

    def __init__(self, problems: list[Problem]):
        super().__init__("; ".join(f"{'.'.join(map(str, p.loc)) or 'options'}: {p.message}" for p in problems))
        self.problems = problems


class _Bad(Exception):
    """A value does not fit its type or constraint (``message`` without the "(got …)" suffix)."""

    def __init__(self, message: str):
        self.message = message


@dataclass(frozen=True)
class _Rules:
    min_length: int | None = None
    ge: float | None = None
    gt: float | None = None
    le: float | None = None
    before: Callable[[Any], Any] | None = None
    after: Callable[[Any], Any] | None = None


def option(default: Any = dataclasses.MISSING, *, min_length: int | None = None, ge: float | None = None,
           gt: float | None = None, le: float | None = None, before: Callable[[Any], Any] | None = None,
           after: Callable[[Any], Any] | None = None) -> Any:
    """A field with constraints; without ``default`` the option is required."""
    assert not isinstance(default, (list, dict, set)), "mutable defaults are not supported"
    rules = _Rules(min_length, ge, gt, le, before, after)
    return dataclasses.field(default=default, metadata={"rules": rules})


@dataclass(frozen=True, kw_only=True)
class Options:
    """Base of every options class."""

    @classmethod
    def parse(cls, data: Any) -> Self:
        """Options from a mapping (a suite's YAML); raise :class:`OptionsError` listing every problem."""
        problems: list[Problem] = []
        result = _parse(cls, data, (), problems)
        if problems:
            raise OptionsError(problems)
        return result


# ---- converters: (value, loc, problems) -> converted value, or raise _Bad / add to problems and raise _Failed


class _Failed(Exception):
    """A nested value failed; its problems are already recorded."""


Converter = Callable[[Any, Loc, list[Problem]], Any]


def _got(value: Any) -> str:
    return f" (got {value!r:.80})"


def _convert_str(value: Any, loc: Loc, problems: list[Problem]) -> Any:
    if isinstance(value, str):
        return value
    raise _Bad("Input should be a valid string")


_INT_TEXT = re.compile(r"^\s*[+-]?\d+\s*$")


def _convert_int(value: Any, loc: Loc, problems: list[Problem]) -> Any:
    if isinstance(value, bool):
        raise _Bad("Input should be a valid integer")
    if isinstance(value, int):
        return value
    if isinstance(value, float):
        if value != value or value in (float("inf"), float("-inf")):
            raise _Bad("Input should be a finite number")
        if not value.is_integer():
            raise _Bad("Input should be a valid integer, got a number with a fractional part")
        return int(value)
    if isinstance(value, str):
        if _INT_TEXT.match(value):
            return int(value)
        raise _Bad("Input should be a valid integer, unable to parse string as an integer")
    raise _Bad("Input should be a valid integer")


def _convert_float(value: Any, loc: Loc, problems: list[Problem]) -> Any:
    if isinstance(value, bool):
        raise _Bad("Input should be a valid number")
    if isinstance(value, (int, float)):
        return float(value)
    if isinstance(value, str):
        try:
            if "_" not in value:  # float() takes "1_000"; pydantic did not
                return float(value)
        except ValueError:
            pass
        raise _Bad("Input should be a valid number, unable to parse string as a number")
    raise _Bad("Input should be a valid number")


_TRUE = frozenset({"1", "on", "t", "true", "y", "yes"})
_FALSE = frozenset({"0", "off", "f", "false", "n", "no"})


def _convert_bool(value: Any, loc: Loc, problems: list[Problem]) -> Any:
    if isinstance(value, bool):
        return value
    if isinstance(value, (int, float)) and value in (0, 1):
        return bool(value)
    if isinstance(value, str):
        word = value.strip().lower()
        if word in _TRUE or word in _FALSE:
            return word in _TRUE
    if isinstance(value, (int, float, str)):
        raise _Bad("Input should be a valid boolean, unable to interpret input")
    raise _Bad("Input should be a valid boolean")


def _convert_date(value: Any, loc: Loc, problems: list[Problem]) -> Any:
    if isinstance(value, date) and not isinstance(value, datetime):
        return value
    raise _Bad("Input should be a valid date")


def _convert_datetime(value: Any, loc: Loc, problems: list[Problem]) -> Any:
    if isinstance(value, datetime):
        return value
    raise _Bad("Input should be a valid datetime")


def _convert_none(value: Any, loc: Loc, problems: list[Problem]) -> Any:
    if value is None:
        return None
    raise _Bad("Input should be None")


def _convert_any(value: Any, loc: Loc, problems: list[Problem]) -> Any:
    return value


_SCALARS: dict[Any, tuple[Converter, str]] = {
    str: (_convert_str, "string"), int: (_convert_int, "integer"), float: (_convert_float, "number"),
    bool: (_convert_bool, "boolean"), date: (_convert_date, "date"), datetime: (_convert_datetime, "datetime"),
    type(None): (_convert_none, "None"), Any: (_convert_any, "value"),
}


def _either(words: list[str]) -> str:
    return words[0] if len(words) == 1 else ", ".join(words[:-1]) + " or " + words[-1]


@dataclass(frozen=True)
class _Type:
    """A compiled annotation: how to convert a value, what it is called, and which values are exactly it."""

    convert: Converter
    noun: str
    exact: Callable[[Any], bool]


def _always(value: Any) -> bool:
    return True


def _is_exactly(kind: type) -> Callable[[Any], bool]:
    return lambda value: type(value) is kind


def _compile(hint: Any) -> _Type:
    origin = get_origin(hint)
    if hint in _SCALARS:
        convert, noun = _SCALARS[hint]
        return _Type(convert, noun, _always if hint is Any else _is_exactly(hint))
    if origin is Literal:
        return _literal(get_args(hint))
    if origin is list:
        return _list(_compile(get_args(hint)[0]))
    if origin is dict:
        key, value = get_args(hint)
        return _dict(_compile(key), _compile(value))
    if origin is Union or origin is types.UnionType:
        return _union([_compile(arg) for arg in get_args(hint)])
    if isinstance(hint, type) and issubclass(hint, Options):
        return _nested(hint)
    raise TypeError(f"options cannot have the type {hint!r}")


def _literal(choices: tuple[Any, ...]) -> _Type:
    message = "Input should be " + _either([repr(c) for c in choices])

    def convert(value: Any, loc: Loc, problems: list[Problem]) -> Any:
        for choice in choices:
            if type(value) is type(choice) and value == choice:
                return choice
        raise _Bad(message)

    return _Type(convert, _either([repr(c) for c in choices]), lambda v: any(
        type(v) is type(c) and v == c for c in choices))


def _list(item: _Type) -> _Type:
    def convert(value: Any, loc: Loc, problems: list[Problem]) -> Any:
        if not isinstance(value, (list, tuple)):
            raise _Bad("Input should be a valid list")
        out, failed = [], False
        for i, element in enumerate(value):
            try:
                out.append(_run(item.convert, element, loc + (i,), problems))
            except _Failed:
                failed = True
        if failed:
            raise _Failed
        return out

    return _Type(convert, "list", lambda v: isinstance(v, (list, tuple)))


def _dict(key: _Type, item: _Type) -> _Type:
    def convert(value: Any, loc: Loc, problems: list[Problem]) -> Any:
        if not isinstance(value, Mapping):
            raise _Bad("Input should be a valid dictionary")
        out, failed = {}, False
        for k, v in value.items():
            try:
                out[_run(key.convert, k, loc + (k,), problems)] = _run(item.convert, v, loc + (k,), problems)
            except _Failed:
                failed = True
        if failed:
            raise _Failed
        return out

    return _Type(convert, "dictionary", lambda v: isinstance(v, Mapping))


def _nested(cls: type[Options]) -> _Type:
    def convert(value: Any, loc: Loc, problems: list[Problem]) -> Any:
        if isinstance(value, cls):
            return value
        if not isinstance(value, Mapping):
            raise _Bad("Input should be a valid dictionary")
        before = len(problems)
        result = _parse(cls, value, loc, problems)
        if len(problems) > before:
            raise _Failed
        return result

    return _Type(convert, "dictionary", lambda v: isinstance(v, (Mapping, cls)))


def _union(members: list[_Type]) -> _Type:
    nullable = any(m.convert is _convert_none for m in members)
    members = [m for m in members if m.convert is not _convert_none]
    noun = _either([m.noun for m in members])
    message = "Input should be a valid " + noun

    def convert(value: Any, loc: Loc, problems: list[Problem]) -> Any:
        if value is None and nullable:
            return None
        if len(members) == 1:  # X | None: X's own words
            return members[0].convert(value, loc, problems)
        for member in members:  # the member of the value's own type first (smart mode)
            if member.exact(value):
                return member.convert(value, loc, problems)
        for member in members:  # then the first member that converts it (lax mode)
            try:
                return member.convert(value, loc, [])
            except (_Bad, _Failed):
                continue
        raise _Bad(message)

    return _Type(convert, noun, lambda v: (v is None and nullable) or any(m.exact(v) for m in members))


def _run(convert: Converter, value: Any, loc: Loc, problems: list[Problem]) -> Any:
    """``convert(value)``; a bad value becomes a problem with the "(got …)" suffix (and raises _Failed)."""
    try:
        return convert(value, loc, problems)
    except _Bad as exc:
        problems.append(Problem(loc, exc.message + _got(value)))
        raise _Failed from None


# ---- constraints


def _plural(n: int, word: str) -> str:
    return f"{n} {word}" if n == 1 else f"{n} {word}s"


def _constrain(value: Any, rules: _Rules) -> None:
    if value is None:
        return
    if rules.min_length is not None and len(value) < rules.min_length:
        n = rules.min_length
        if isinstance(value, str):
            raise _Bad(f"String should have at least {_plural(n, 'character')}")
        what = "List" if isinstance(value, list) else "Dictionary" if isinstance(value, dict) else "Value"
        raise _Bad(f"{what} should have at least {_plural(n, 'item')} after validation, not {len(value)}")
    if rules.gt is not None and not value > rules.gt:
        raise _Bad(f"Input should be greater than {rules.gt}")
    if rules.ge is not None and not value >= rules.ge:
        raise _Bad(f"Input should be greater than or equal to {rules.ge}")
    if rules.le is not None and not value <= rules.le:
        raise _Bad(f"Input should be less than or equal to {rules.le}")


# ---- classes


@dataclass(frozen=True)
class _Field:
    name: str
    required: bool
    type: _Type
    rules: _Rules

    def validate(self, raw: Any, loc: Loc, problems: list[Problem]) -> Any:
        value = raw
        if self.rules.before is not None:
            try:
                value = self.rules.before(value)
            except ValueError as exc:
                problems.append(Problem(loc, str(exc)))
                raise _Failed from None
        converted = _run(self.type.convert, value, loc, problems)
        try:
            _constrain(converted, self.rules)
        except _Bad as exc:  # shown with the value as written (2, not 2.0)
            problems.append(Problem(loc, exc.message + _got(value)))
            raise _Failed from None
        if self.rules.after is not None and converted is not None:
            try:
                converted = self.rules.after(converted)
            except ValueError as exc:
                problems.append(Problem(loc, str(exc)))
                raise _Failed from None
        return converted


_SPECS: dict[type, dict[str, _Field]] = {}
_NO_RULES = _Rules()


def _spec(cls: type[Options]) -> dict[str, _Field]:
    """The fields of ``cls``, their types compiled once per class."""
    spec = _SPECS.get(cls)
    if spec is None:
        hints = get_type_hints(cls)
        spec = {}
        for f in dataclasses.fields(cls):
            required = f.default is dataclasses.MISSING and f.default_factory is dataclasses.MISSING
            spec[f.name] = _Field(f.name, required, _compile(hints[f.name]), f.metadata.get("rules", _NO_RULES))
        _SPECS[cls] = spec
    return spec


def _parse(cls: type[OptionsT], data: Any, loc: Loc, problems: list[Problem]) -> OptionsT:
    if not isinstance(data, Mapping):
        problems.append(Problem(loc, "Input should be a valid dictionary" + _got(data)))
        return None  # type: ignore[return-value]  # the caller sees the problem
    spec = _spec(cls)
    before = len(problems)
    values: dict[str, Any] = {}
    for name, f in spec.items():
        if name not in data:
            if f.required:
                problems.append(Problem(loc + (name,), f"missing required option {name!r}"))
            continue
        with contextlib.suppress(_Failed):  # its problems are recorded
            values[name] = f.validate(data[name], loc + (name,), problems)
    for key in data:
        if key not in spec:
            problems.append(Problem(loc + (key,), f"unknown option {key!r}"))
    if len(problems) > before:
        return None  # type: ignore[return-value]
    try:
        return cls(**values)
    except ValueError as exc:  # a rule across fields (__post_init__)
        problems.append(Problem(loc, str(exc)))
        return None  # type: ignore[return-value]
