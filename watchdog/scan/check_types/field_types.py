"""How an options field's annotation converts a YAML value (see :mod:`fields`), in pydantic's words.

:func:`compile_hint` turns an annotation into a :class:`FieldType` once per class: ``str``, ``int``,
``float``, ``bool``, ``date``, ``datetime``, ``None``, ``Literal[...]``, ``list[X]``, ``dict[K, V]``,
unions, and nested options classes (through the ``nested`` hook). Conversion is pydantic's lax mode
for YAML values: an int takes an int, an integral float or a numeric string (not a bool); a float an
int, a float or a numeric string (not a bool); a bool a bool, 0/1 or the usual true/false words; a
string strings only; a union the member of the value's exact type first, then the first that takes it.
"""

from __future__ import annotations

import re
import types
from collections.abc import Callable, Mapping
from datetime import date, datetime
from typing import Any, Literal, Union, get_args, get_origin

Loc = tuple[Any, ...]


class Problem:
    """One problem with an option: ``loc`` is the path (field name first, then keys or list indexes)."""

    __slots__ = ("loc", "message")

    def __init__(self, loc: Loc, message: str):
        self.loc = loc
        self.message = message

    def __repr__(self) -> str:
        return f"Problem({self.loc!r}, {self.message!r})"


#: a converter's answer when the value failed and its problems are recorded
FAILED: Any = type("Failed", (), {"__repr__": lambda self: "FAILED"})()

#: (value, loc, problems) -> the converted value; raises ValueError (the message, without the "(got …)"
#: suffix) when the value itself does not fit, or records the problems within it and returns FAILED
Converter = Callable[[Any, Loc, list[Problem]], Any]


def got(value: Any) -> str:
    return f" (got {value!r:.80})"


def run(convert: Converter, value: Any, loc: Loc, problems: list[Problem]) -> Any:
    """``convert(value)``; a bad value becomes a problem with the "(got …)" suffix (and FAILED)."""
    try:
        return convert(value, loc, problems)
    except ValueError as exc:
        problems.append(Problem(loc, str(exc) + got(value)))
        return FAILED


class FieldType:
    """A compiled annotation: how to convert a value, what it is called, which values are exactly it."""

    __slots__ = ("convert", "noun", "exact")

    def __init__(self, convert: Converter, noun: str, exact: Callable[[Any], bool]):
        self.convert = convert
        self.noun = noun
        self.exact = exact


# ---- scalars


def _to_str(value: Any, loc: Loc, problems: list[Problem]) -> Any:
    if isinstance(value, str):
        return value
    raise ValueError("Input should be a valid string")


_INT_TEXT = re.compile(r"^\s*[+-]?\d+\s*$")


def _to_int(value: Any, loc: Loc, problems: list[Problem]) -> Any:
    if isinstance(value, bool):
        raise ValueError("Input should be a valid integer")
    if isinstance(value, int):
        return value
    if isinstance(value, float):
        if value != value or value in (float("inf"), float("-inf")):
            raise ValueError("Input should be a finite number")
        if not value.is_integer():
            raise ValueError("Input should be a valid integer, got a number with a fractional part")
        return int(value)
    if isinstance(value, str):
        if _INT_TEXT.match(value):
            return int(value)
        raise ValueError("Input should be a valid integer, unable to parse string as an integer")
    raise ValueError("Input should be a valid integer")


def _to_float(value: Any, loc: Loc, problems: list[Problem]) -> Any:
    if isinstance(value, bool):
        raise ValueError("Input should be a valid number")
    if isinstance(value, (int, float)):
        return float(value)
    if isinstance(value, str):
        try:
            if "_" not in value:  # float() takes "1_000"; pydantic did not
                return float(value)
        except ValueError:
            pass
        raise ValueError("Input should be a valid number, unable to parse string as a number")
    raise ValueError("Input should be a valid number")


_TRUE = frozenset({"1", "on", "t", "true", "y", "yes"})
_FALSE = frozenset({"0", "off", "f", "false", "n", "no"})


def _to_bool(value: Any, loc: Loc, problems: list[Problem]) -> Any:
    if isinstance(value, bool):
        return value
    if isinstance(value, (int, float)) and value in (0, 1):
        return bool(value)
    if isinstance(value, str):
        word = value.strip().lower()
        if word in _TRUE or word in _FALSE:
            return word in _TRUE
    if isinstance(value, (int, float, str)):
        raise ValueError("Input should be a valid boolean, unable to interpret input")
    raise ValueError("Input should be a valid boolean")


def _to_date(value: Any, loc: Loc, problems: list[Problem]) -> Any:
    if isinstance(value, date) and not isinstance(value, datetime):
        return value
    raise ValueError("Input should be a valid date")


def _to_datetime(value: Any, loc: Loc, problems: list[Problem]) -> Any:
    if isinstance(value, datetime):
        return value
    raise ValueError("Input should be a valid datetime")


def _to_none(value: Any, loc: Loc, problems: list[Problem]) -> Any:
    if value is None:
        return None
    raise ValueError("Input should be None")


_SCALARS: dict[Any, tuple[Converter, str]] = {
    str: (_to_str, "string"), int: (_to_int, "integer"), float: (_to_float, "number"), bool: (_to_bool, "boolean"),
    date: (_to_date, "date"), datetime: (_to_datetime, "datetime"), type(None): (_to_none, "None"),
}


def _either(words: list[str]) -> str:
    return words[0] if len(words) == 1 else ", ".join(words[:-1]) + " or " + words[-1]


def _is_exactly(kind: type) -> Callable[[Any], bool]:
    return lambda value: type(value) is kind


# ---- compound types

#: (class, value, loc, problems) -> a nested options instance, or FAILED with its problems recorded
Nested = Callable[[type, Any, Loc, list[Problem]], Any]


def compile_hint(hint: Any, nested: Nested, is_nested: Callable[[Any], bool]) -> FieldType:
    """The :class:`FieldType` of an annotation (``nested`` parses the classes ``is_nested`` accepts)."""
    if hint in _SCALARS:
        convert, noun = _SCALARS[hint]
        return FieldType(convert, noun, _is_exactly(hint))
    origin, args = get_origin(hint), get_args(hint)
    if origin is Literal:
        return _literal(args)
    if origin is list:
        return _list(compile_hint(args[0], nested, is_nested))
    if origin is dict:
        return _dict(compile_hint(args[0], nested, is_nested), compile_hint(args[1], nested, is_nested))
    if origin is Union or origin is types.UnionType:
        return _union([compile_hint(arg, nested, is_nested) for arg in args])
    if is_nested(hint):
        return _nested(hint, nested)
    raise TypeError(f"options cannot have the type {hint!r}")


def _literal(choices: tuple[Any, ...]) -> FieldType:
    words = _either([repr(c) for c in choices])

    def exact(value: Any) -> bool:
        return any(type(value) is type(c) and value == c for c in choices)

    def convert(value: Any, loc: Loc, problems: list[Problem]) -> Any:
        if exact(value):
            return value
        raise ValueError("Input should be " + words)

    return FieldType(convert, words, exact)


def _list(item: FieldType) -> FieldType:
    def convert(value: Any, loc: Loc, problems: list[Problem]) -> Any:
        if not isinstance(value, (list, tuple)):
            raise ValueError("Input should be a valid list")
        out = [run(item.convert, element, loc + (i,), problems) for i, element in enumerate(value)]
        return FAILED if any(v is FAILED for v in out) else out

    return FieldType(convert, "list", lambda v: isinstance(v, (list, tuple)))


def _dict(key: FieldType, item: FieldType) -> FieldType:
    def convert(value: Any, loc: Loc, problems: list[Problem]) -> Any:
        if not isinstance(value, Mapping):
            raise ValueError("Input should be a valid dictionary")
        pairs = [(run(key.convert, k, loc + (k,), problems), run(item.convert, v, loc + (k,), problems))
                 for k, v in value.items()]
        return FAILED if any(k is FAILED or v is FAILED for k, v in pairs) else dict(pairs)

    return FieldType(convert, "dictionary", lambda v: isinstance(v, Mapping))


def _nested(cls: type, nested: Nested) -> FieldType:
    def convert(value: Any, loc: Loc, problems: list[Problem]) -> Any:
        if isinstance(value, cls):
            return value
        if not isinstance(value, Mapping):
            raise ValueError("Input should be a valid dictionary")
        return nested(cls, value, loc, problems)

    return FieldType(convert, "dictionary", lambda v: isinstance(v, (Mapping, cls)))


def _union(members: list[FieldType]) -> FieldType:
    nullable = any(m.convert is _to_none for m in members)
    members = [m for m in members if m.convert is not _to_none]
    noun = _either([m.noun for m in members])

    def convert(value: Any, loc: Loc, problems: list[Problem]) -> Any:
        if value is None and nullable:
            return None
        if len(members) == 1:  # X | None: X's own words
            return members[0].convert(value, loc, problems)
        for member in members:  # the member of the value's own type first (pydantic's smart mode)
            if member.exact(value):
                return member.convert(value, loc, problems)
        for member in members:  # then the first member that takes it (lax mode)
            try:
                result = member.convert(value, loc, [])
            except ValueError:
                continue
            if result is not FAILED:
                return result
        raise ValueError("Input should be a valid " + noun)

    return FieldType(convert, noun, lambda v: (v is None and nullable) or any(m.exact(v) for m in members))
