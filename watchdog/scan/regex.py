"""The one regex dialect of ``pattern`` checks, and its translation for each database.

Suites write regexes as PostgreSQL's advanced regular expressions (ARE), searched case-sensitively
like PostgreSQL's ``~``. Three engines run them -- PostgreSQL's own, PCRE2 in MariaDB (ICU in
MySQL 8) and Python's ``re`` inside the SQLite sandbox -- and they disagree on details: ``\\b`` is
a backspace in ARE but a word boundary elsewhere, ``[[:alpha:]]`` means nothing to Python, ``.``
and ``$`` treat newlines differently, ``\\d`` and ``\\w`` are Unicode-aware in some. So a pattern is
parsed here and written out again for each engine in a form that means the same on all three:

* ``\\d \\w \\s`` (and ``\\D \\W \\S``) and the POSIX classes ``[[:alpha:]]``, ``[[:digit:]]``... are
  ASCII classes, spelled out as explicit ranges;
* ``\\b`` and ``\\y`` are word boundaries, ``\\B`` and ``\\Y`` non-boundaries, ``\\m`` / ``\\M`` the start /
  end of a word (a word character is ``[A-Za-z0-9_]``), ``\\A`` the start and ``\\Z`` / ``\\z`` the end;
* ``.`` matches any character, newline included; ``^`` and ``$`` are the start and end of the value;
* ``(?i)`` at the very start makes ASCII letters match either case;
* ``\\t \\n \\r \\f \\v \\xHH \\uHHHH`` are characters; any other letter or digit after ``\\`` is refused.

Refused with a clear suite error, because no spelling means the same on every engine: back-references,
lookbehind, possessive quantifiers and atomic groups, other inline options, ``[[=x=]]`` / ``[[.x.]]``,
``\\D \\W \\S`` inside brackets, and repeat counts above 255 (PostgreSQL's limit).
"""

from __future__ import annotations

from dataclasses import dataclass, field

from watchdog.errors import ConfigError

MAX_REPEAT = 255
WORD = [(ord("A"), ord("Z")), (ord("a"), ord("z")), (ord("0"), ord("9")), (ord("_"), ord("_"))]
_R = {
    "alpha": [(65, 90), (97, 122)], "digit": [(48, 57)], "alnum": [(65, 90), (97, 122), (48, 57)],
    "upper": [(65, 90)], "lower": [(97, 122)], "space": [(9, 13), (32, 32)], "blank": [(9, 9), (32, 32)],
    "xdigit": [(48, 57), (65, 70), (97, 102)], "punct": [(33, 47), (58, 64), (91, 96), (123, 126)],
    "cntrl": [(0, 31), (127, 127)], "print": [(32, 126)], "graph": [(33, 126)], "word": WORD,
}
SHORTHAND = {"d": _R["digit"], "w": WORD, "s": _R["space"]}
CHARS = {"t": "\t", "n": "\n", "r": "\r", "f": "\f", "v": "\v"}
#: java: Trino and Databricks; re2: BigQuery (regex_warehouse.py refuses what RE2 cannot say, and writes Snowflake's)
ENGINES = ("postgres", "pcre", "python", "java", "re2")
_META = set("\\^$.|?*+()[]{}-/")


class RegexError(ConfigError, ValueError):
    """The pattern is not valid, or cannot mean the same on every database (a suite error)."""


@dataclass
class Node:
    kind: str  # char | class | any | start | end | boundary | group | look | alt | seq | repeat
    value: str = ""
    ranges: list[tuple[int, int]] = field(default_factory=list)
    negated: bool = False
    children: list[Node] = field(default_factory=list)
    low: int = 0
    high: int | None = None


def parse(pattern: str) -> Node:
    """Parse ``pattern`` (raises RegexError naming what is wrong and where)."""
    fold = pattern.startswith("(?i)")
    parser = _Parser(pattern[4:] if fold else pattern, fold)
    tree = parser.alternation()
    if parser.pos < len(parser.text):
        parser.fail("unbalanced ')'")
    return tree


def translate(pattern: str, engine: str) -> str:
    """``pattern`` written for ``engine`` (see :data:`ENGINES`) with the meaning described above."""
    if engine not in ENGINES:
        raise RegexError(f"no regex engine {engine!r}")
    body = _emit(parse(pattern), engine)
    return body if engine == "postgres" else "(?s)" + body


class _Parser:
    def __init__(self, text: str, fold: bool):
        self.text, self.pos, self.fold = text, 0, fold

    def fail(self, message: str) -> None:
        raise RegexError(f"{message} (at position {self.pos + 1})")

    def peek(self, n: int = 1) -> str:
        return self.text[self.pos:self.pos + n]

    def alternation(self) -> Node:
        branches = [self.sequence()]
        while self.peek() == "|":
            self.pos += 1
            branches.append(self.sequence())
        return branches[0] if len(branches) == 1 else Node("alt", children=branches)

    def sequence(self) -> Node:
        items: list[Node] = []
        while self.pos < len(self.text) and self.peek() not in "|)":
            atom = self.atom()
            items.append(self.quantified(atom))
        return Node("seq", children=items)

    def quantified(self, atom: Node) -> Node:
        char = self.peek()
        if char not in ("*", "+", "?", "{"):
            return atom
        if atom.kind in ("start", "end", "boundary", "look"):
            self.fail("a quantifier needs something to repeat (not an anchor or a lookahead)")
        if char == "{":
            low, high = self.braces()
        else:
            self.pos += 1
            low, high = {"*": (0, None), "+": (1, None), "?": (0, 1)}[char]
        if self.peek() == "?":
            self.pos += 1  # lazy: whether a match exists does not depend on it
        elif self.peek() == "+":
            self.fail("possessive quantifiers (*+, ++, ?+) are not supported")
        if self.peek() and self.peek() in "*+{":
            self.fail("a quantifier cannot follow another; use a group, e.g. (?:a+)*")
        return Node("repeat", children=[atom], low=low, high=high)

    def braces(self) -> tuple[int, int | None]:
        end = self.text.find("}", self.pos)
        inside = self.text[self.pos + 1:end] if end > 0 else ""
        low_text, comma, high_text = inside.partition(",")
        if end < 0 or not low_text.isdigit() or (high_text and not high_text.isdigit()):
            self.fail("'{' must start a repeat count {m}, {m,} or {m,n}; write \\{ for a literal brace")
        low = int(low_text)
        high = None if comma and not high_text else int(high_text or low_text)
        if max(low, high or 0) > MAX_REPEAT:
            self.fail(f"repeat counts above {MAX_REPEAT} are not supported (PostgreSQL's limit)")
        if high is not None and high < low:
            self.fail(f"repeat count {{{inside}}} has its maximum below its minimum")
        self.pos = end + 1
        return low, high

    def atom(self) -> Node:
        char = self.text[self.pos]
        self.pos += 1
        if char == "(":
            return self.group()
        if char == "[":
            return self.bracket()
        if char == ".":
            return Node("any")
        if char == "^":
            return Node("start")
        if char == "$":
            return Node("end")
        if char == "\\":
            return self.escape()
        if char in "*+?{":
            self.pos -= 1
            self.fail(f"{char!r} has nothing to repeat; write \\{char} for the character")
        if char == "}":
            self.fail("unbalanced '}'; write \\} for the character")
        return self.literal(char)

    def literal(self, char: str) -> Node:
        if self.fold and char.isascii() and char.isalpha():
            low, up = ord(char.lower()), ord(char.upper())
            return Node("class", ranges=[(low, low), (up, up)])
        return Node("char", value=char)

    def group(self) -> Node:
        kind, negated = "group", False
        if self.peek() == "?":
            head = self.peek(3)
            if head.startswith("?:"):
                self.pos += 2
            elif head.startswith("?=") or head.startswith("?!"):
                kind, negated = "look", head[1] == "!"
                self.pos += 2
            elif head.startswith("?P<") or (head.startswith("?<") and head not in ("?<=", "?<!")):
                close = self.text.find(">", self.pos)
                if close < 0:
                    self.fail("unclosed group name")
                self.pos = close + 1  # a named group: back-references are refused, so the name is not needed
            elif head in ("?<=", "?<!"):
                self.fail("lookbehind is not supported (Python's needs a fixed width)")
            elif head.startswith("?>"):
                self.fail("atomic groups (?>...) are not supported")
            elif head.startswith("?i"):
                self.fail("(?i) is supported only at the very start of the pattern")
            else:
                self.fail(f"the group option ({head}...) is not supported")
        inner = self.alternation()
        if self.peek() != ")":
            self.fail("missing ')'")
        self.pos += 1
        return Node(kind, negated=negated, children=[inner])

    def escape(self) -> Node:
        if self.pos >= len(self.text):
            self.fail("the pattern ends with a lone backslash")
        char = self.text[self.pos]
        self.pos += 1
        if char in SHORTHAND:
            return Node("class", ranges=list(SHORTHAND[char]))
        if char.lower() in SHORTHAND:
            return Node("class", ranges=list(SHORTHAND[char.lower()]), negated=True)
        if char in ("b", "y", "B", "Y", "m", "M"):
            return Node("boundary", value={"y": "b", "Y": "B"}.get(char, char))
        if char == "A":
            return Node("start")
        if char in ("Z", "z"):
            return Node("end")
        if char.isdigit():
            self.fail("back-references (\\1...) are not supported")
        return self.literal(self.escaped_char(char))

    def escaped_char(self, char: str) -> str:
        if char in CHARS:
            return CHARS[char]
        if char in ("x", "u"):
            width = 2 if char == "x" else 4
            digits = self.peek(width)
            if len(digits) != width or any(d not in "0123456789abcdefABCDEF" for d in digits):
                self.fail(f"\\{char} needs exactly {width} hex digits")
            self.pos += width
            if int(digits, 16) == 0:
                self.fail("the NUL character cannot be matched")
            return chr(int(digits, 16))
        if char.isalnum():
            self.fail(f"\\{char} is not a supported escape")
        return char

    def bracket(self) -> Node:
        negated = self.peek() == "^"
        if negated:
            self.pos += 1
        ranges: list[tuple[int, int]] = []
        first = True
        while True:
            if self.pos >= len(self.text):
                self.fail("missing ']'")
            char = self.text[self.pos]
            if char == "]" and not first:
                self.pos += 1
                break
            first = False
            if self.peek(2) == "[:":
                ranges += self.posix_class()
                continue
            if self.peek(2) in ("[=", "[."):
                self.fail("[[=x=]] and [[.x.]] are not supported")
            if self.peek(2) in ("\\d", "\\w", "\\s"):
                ranges += SHORTHAND[self.text[self.pos + 1]]
                self.pos += 2
                continue
            low = self.bracket_char()
            if self.peek() == "-" and self.peek(2) != "-]" and len(self.text) > self.pos + 1:
                self.pos += 1
                if self.peek(2) in ("\\d", "\\w", "\\s"):
                    self.fail("a range cannot end in a class such as \\d")
                high = self.bracket_char()
                if ord(high) < ord(low):
                    self.fail(f"the range {low}-{high} is reversed")
                ranges.append((ord(low), ord(high)))
            else:
                ranges.append((ord(low), ord(low)))
        if self.fold:
            ranges += _other_case(ranges)
        return Node("class", ranges=ranges, negated=negated)

    def posix_class(self) -> list[tuple[int, int]]:
        end = self.text.find(":]", self.pos + 2)
        name = self.text[self.pos + 2:end] if end > 0 else ""
        if name not in _R:
            self.fail(f"unknown POSIX class [:{name}:]; known: {', '.join(sorted(_R))}")
        self.pos = end + 2
        return list(_R[name])

    def bracket_char(self) -> str:
        """One character inside brackets (a backslash escapes the next one)."""
        char = self.text[self.pos]
        self.pos += 1
        if char != "\\":
            return char
        if self.pos >= len(self.text):
            self.fail("missing ']'")
        char = self.text[self.pos]
        self.pos += 1
        if char.lower() in SHORTHAND:
            self.fail(f"\\{char} inside brackets is not supported; use a negated class such as [^0-9]")
        if char == "b":
            self.fail("\\b inside brackets is not supported")
        return self.escaped_char(char)


def _other_case(ranges: list[tuple[int, int]]) -> list[tuple[int, int]]:
    out = []
    for low, high in ranges:
        for a, b, shift in ((65, 90, 32), (97, 122, -32)):
            lo, hi = max(low, a), min(high, b)
            if lo <= hi:
                out.append((lo + shift, hi + shift))
    return out


_FIXED = {"any": ".", "start": "^"}
_END = {"postgres": "$", "pcre": "\\z", "python": "\\Z", "java": "\\z", "re2": "\\z"}


def _emit(node: Node, engine: str) -> str:
    kind = node.kind
    if kind in _FIXED:
        return _FIXED[kind]
    if kind in ("seq", "alt"):
        return ("" if kind == "seq" else "|").join(_emit(c, engine) for c in node.children)
    if kind == "char":
        return _char(ord(node.value), engine, _META)
    if kind == "end":
        return _END[engine]
    if kind == "class":
        return _emit_class(node.ranges, node.negated, engine)
    if kind == "boundary":  # RE2's own \b and \B are ASCII word boundaries, like ours
        return "\\" + node.value if engine == "re2" else _boundary(node.value)
    if kind in ("group", "look"):
        head = "(?:" if kind == "group" else ("(?!" if node.negated else "(?=")
        return head + _emit(node.children[0], engine) + ")"
    if kind == "repeat":
        return _emit_repeat(node, engine)
    raise RegexError(f"cannot write {kind}")  # pragma: no cover - every kind is handled above


def _emit_repeat(node: Node, engine: str) -> str:
    inner = node.children[0]
    text = _emit(inner, engine)
    if inner.kind in ("seq", "alt"):
        text = "(?:" + text + ")"
    counts = {(0, None): "*", (1, None): "+", (0, 1): "?"}
    if (node.low, node.high) in counts:
        return text + counts[(node.low, node.high)]
    if node.high is None:
        return f"{text}{{{node.low},}}"
    return f"{text}{{{node.low}}}" if node.low == node.high else f"{text}{{{node.low},{node.high}}}"


def _emit_class(ranges: list[tuple[int, int]], negated: bool, engine: str) -> str:
    parts = []
    for low, high in class_ranges(ranges):
        one, other = _char(low, engine, _IN_CLASS), _char(high, engine, _IN_CLASS)
        parts.append(one if low == high else f"{one}-{other}")
    return "[" + ("^" if negated else "") + "".join(parts) + "]"


def class_ranges(ranges: list[tuple[int, int]]) -> list[tuple[int, int]]:
    """A class's ranges sorted and merged, without NUL, each special character (``\\ ] ^ - [``) alone."""
    merged: list[list[int]] = []
    for low, high in sorted((max(low, 1), high) for low, high in ranges if high >= 1):  # no NUL in text
        if merged and low <= merged[-1][1] + 1:
            merged[-1][1] = max(merged[-1][1], high)
        else:
            merged.append([low, high])
    return _split_special(merged)


_IN_CLASS = set("\\]^-[")


def _split_special(ranges: list[list[int]]) -> list[tuple[int, int]]:
    """Ranges whose ends are never an escaped character (engines read ``[\\--.]`` differently)."""
    special = sorted(ord(c) for c in _IN_CLASS)
    out: list[tuple[int, int]] = []
    for low, high in ranges:
        start = low
        for code in special:
            if low <= code <= high:
                if start < code:
                    out.append((start, code - 1))
                out.append((code, code))
                start = code + 1
        if start <= high:
            out.append((start, high))
    return out


def _char(code: int, engine: str, special: set[str]) -> str:
    """One character, escaped where ``engine`` would read it otherwise; control characters as hex."""
    char = chr(code)
    if code < 32 or code == 127:
        return f"\\u{code:04x}" if engine == "postgres" else f"\\x{code:02x}"
    return "\\" + char if char in special else char


_W = "[0-9A-Z_a-z]"


def _boundary(which: str) -> str:
    after_word, before_word = f"(?<={_W})", f"(?={_W})"
    after_other, before_other = f"(?<!{_W})", f"(?!{_W})"
    if which == "m":
        return after_other + before_word
    if which == "M":
        return after_word + before_other
    if which == "b":
        return f"(?:{after_other}{before_word}|{after_word}{before_other})"
    return f"(?:{after_other}{before_other}|{after_word}{before_word})"  # \B
