"""Load YAML while remembering the line of every key and item, for error messages.

``load_with_lines(text)`` returns ``(data, lines)`` where ``lines`` maps a path such as
``("tables", "contacts", 2, "regex")`` to its 1-based line number.
"""

from __future__ import annotations

import re
from typing import Any

import yaml
from yaml.constructor import SafeConstructor
from yaml.nodes import MappingNode, Node, ScalarNode, SequenceNode

Path = tuple[Any, ...]


class YamlLines(dict[Path, int]):
    """Line numbers by path; :meth:`line` falls back to the nearest known parent."""

    def line(self, path: Path) -> int | None:
        path = tuple(path)
        while path:
            if path in self:
                return self[path]
            path = path[:-1]
        return self.get((), None)


class DuplicateKeyError(ValueError):
    def __init__(self, key: Any, line: int):
        super().__init__(f"duplicate key {key!r}")
        self.key = key
        self.line = line


#: libyaml's parser where PyYAML was built with it (the wheels are): the same nodes and marks, ~15x faster
_LOADER = getattr(yaml, "CSafeLoader", yaml.SafeLoader)


def load_with_lines(text: str) -> tuple[Any, YamlLines]:
    """Parse ``text`` (raises ``yaml.YAMLError`` with a line on bad syntax)."""
    node = yaml.compose(text, Loader=_LOADER)
    lines = YamlLines()
    if node is None:
        return None, lines
    constructor = SafeConstructor()
    return _build(node, (), lines, constructor), lines


_YAML11_BOOL_WORDS = {"yes", "no", "on", "off", "y", "n"}


def _key(node: Node, constructor: SafeConstructor) -> Any:
    """A mapping key; YAML 1.1 reads a bare ``on:`` as True, but as a key it is the word (``on: problems``)."""
    if isinstance(node, ScalarNode) and not node.style and node.value.lower() in _YAML11_BOOL_WORDS:
        return node.value
    return constructor.construct_object(node, deep=True)


def _build(node: Node, path: Path, lines: YamlLines, constructor: SafeConstructor) -> Any:
    lines.setdefault(path, node.start_mark.line + 1)
    if isinstance(node, MappingNode):
        constructor.flatten_mapping(node)
        out: dict[Any, Any] = {}
        for key_node, value_node in node.value:
            key = _key(key_node, constructor)
            if key in out:
                raise DuplicateKeyError(key, key_node.start_mark.line + 1)
            lines[path + (key,)] = key_node.start_mark.line + 1
            out[key] = _build(value_node, path + (key,), lines, constructor)
        return out
    if isinstance(node, SequenceNode):
        return [_build(item, path + (i,), lines, constructor) for i, item in enumerate(node.value)]
    assert isinstance(node, ScalarNode)
    return constructor.construct_object(node, deep=True)


_SHIELD = "\u2063WDENV{}\u2063"  # an invisible separator never typed in a config: marks a shielded ${...}
_SHIELDED = re.compile("\u2063WDENV([0-9a-f]+)\u2063")


def shield_references(text: str, reference: re.Pattern[str]) -> str:
    """``${VAR}`` written unquoted inside a flow mapping (``{planner: ${WD_MODEL}}``) would end the mapping at
    its ``}``: each ``reference`` is hidden behind a plain-scalar-safe token for the parse (see :func:`unshield`)."""
    return reference.sub(lambda m: _SHIELD.format(m.group(0).encode().hex()), text)


def unshield(value: str) -> str:
    """A parsed string with its shielded references written back as they were."""
    return _SHIELDED.sub(lambda m: bytes.fromhex(m.group(1)).decode(), value)


def dotted(path: tuple[Any, ...]) -> str:
    """A location in a YAML document as people write it: ``audits.nightly.deliver[0].email``."""
    return ".".join(str(p) if not isinstance(p, int) else f"[{p}]" for p in path).replace(".[", "[")
