"""Read a Markdown report into units: headings, paragraphs, list items and tables; sentences; inline cleaning.

:func:`blocks` splits the report into blocks: ATX and setext headings, paragraphs, list items
(with continuation lines; ``level`` is the indent), GFM tables (header row first) and thematic breaks.
Block quote markers are stripped; fenced code blocks and HTML comments are dropped.
:func:`sentences` cuts a paragraph into sentences (not after "e.g.", "vs." or a list number).
:func:`clean` turns inline Markdown into plain text: escapes (``not\\_null``), emphasis, HTML tags and
link targets are removed, entities decoded; code spans keep their text and their spans are returned, so
names are found in them but numbers are not.
"""

from __future__ import annotations

import html
import re
from dataclasses import dataclass, field
from functools import lru_cache

__all__ = ["Block", "Code", "blocks", "clean", "sentences"]

Code = tuple[tuple[int, int], ...]
"""Spans of code-span contents in a cleaned text."""

_INLINE = re.compile(
    r"(?P<esc>\\[!-/:-@\[-`{-~])|(?P<code>`+)|(?P<link>\]\((?:[^()\s]|\([^()\s]*\))*(?:\s+\"[^\"]*\")?\))"
    r"|(?P<tag></?[A-Za-z][\w-]*(?:\s[^<>]*)?/?>)|(?P<ent>&(?:#\d+|#x[0-9A-Fa-f]+|[A-Za-z]+);)"
    r"|(?P<emph>\*+|~~|(?<![A-Za-z0-9\\])_+|_+(?![A-Za-z0-9]))")


@lru_cache(maxsize=4096)
def clean(raw: str) -> tuple[str, Code]:
    """Inline Markdown → plain text and the spans of code-span contents in it."""
    out: list[str] = []
    code: list[tuple[int, int]] = []
    pos = n = 0
    while True:
        m = _INLINE.search(raw, pos)
        if m is None:
            out.append(raw[pos:])
            break
        piece = raw[pos:m.start()]
        out.append(piece)
        n += len(piece)
        kind = m.lastgroup
        pos = m.end()
        if kind == "esc":
            out.append(m.group()[1])
            n += 1
        elif kind == "code":
            run = m.group()
            close = re.compile(rf"(?<!`){run}(?!`)").search(raw, m.end())
            if close is None:
                out.append(run)
                n += len(run)
                continue
            content = raw[m.end():close.start()].replace("\\|", "|")
            if len(content) >= 2 and content[0] == " " and content[-1] == " " and content.strip():
                content = content[1:-1]
            out.append(content)
            code.append((n, n + len(content)))
            n += len(content)
            pos = close.end()
        elif kind == "tag":
            out.append(" ")
            n += 1
        elif kind == "ent":
            ch = html.unescape(m.group())
            out.append(ch)
            n += len(ch)
        # link targets and emphasis markers are dropped
    return "".join(out), tuple(code)


_FENCE = re.compile(r"^\s*(`{3,}|~{3,})")
_HEADING = re.compile(r"^\s{0,3}(#{1,6})(?:\s+(.*?))?\s*#*\s*$")
_HR = re.compile(r"^\s{0,3}([-*_])(?:\s*\1){2,}\s*$")
_ITEM = re.compile(r"^(\s*)([-*+•]|\d{1,3}[.)])\s+(.*)$")
_TABLE_SEP = re.compile(r"^\s*\|?\s*:?-{1,}:?\s*(?:\|\s*:?-{1,}:?\s*)*\|?\s*$")
_QUOTE = re.compile(r"^\s{0,3}>\s?")
_COMMENT = re.compile(r"<!--.*?-->", re.S)
_SENTENCE_END = re.compile(r"(?<=[.!?])[\"')\]*]*\s+(?=[^\s])")
_ABBREV = re.compile(r"(?:\b(?:e\.g|i\.e|vs|approx|ca|etc|no|cf|incl|est|al|Fig|Dr|Mr|Ms|St)\.|\d\.)$", re.I)


@dataclass
class Block:
    """A heading, paragraph, list item, table or thematic break of the report."""

    kind: str  # heading | para | item | table | break
    line: int
    text: str = ""
    level: int = 0  # heading level, list-item indent
    rows: list[list[str]] = field(default_factory=list)  # table: header row first


def _split_row(line: str) -> list[str]:
    s = line.strip()
    if s.startswith("|"):
        s = s[1:]
    if s.endswith("|") and not s.endswith("\\|"):
        s = s[:-1]
    return [c.strip() for c in re.split(r"(?<!\\)\|", s)]


def blocks(markdown: str) -> list[Block]:
    """The report's blocks, in order."""
    text = _COMMENT.sub(lambda m: "\n" * m.group().count("\n"), markdown.replace("\r\n", "\n").replace("\r", "\n"))
    reader = _Reader(text.split("\n"))
    while reader.i < len(reader.lines):
        line = reader.lines[reader.i]
        while _QUOTE.match(line):
            line = _QUOTE.sub("", line, count=1)
        reader.step(line)
    reader.flush_para()
    return reader.out


class _Reader:
    """Reads lines into blocks; each ``_line_*`` method consumes a line (and advances) or declines."""

    def __init__(self, lines: list[str]) -> None:
        self.lines = lines
        self.i = 0
        self.out: list[Block] = []
        self.fence: str | None = None
        self.para: list[str] = []
        self.item: Block | None = None

    def flush_para(self) -> None:
        if self.para:
            self.out.append(Block("para", self.i - len(self.para), " ".join(s.strip() for s in self.para)))
            self.para = []

    def step(self, line: str) -> None:
        for handler in (self._line_in_fence, self._line_fence, self._line_blank, self._line_heading,
                        self._line_setext, self._line_table, self._line_break, self._line_item,
                        self._line_continuation):
            if handler(line):
                return
        self.para.append(line)
        self.i += 1

    def _line_in_fence(self, line: str) -> bool:
        if self.fence is None:
            return False
        if re.match(rf"^\s*{re.escape(self.fence[0])}{{{len(self.fence)},}}\s*$", line):
            self.fence = None
        self.i += 1
        return True

    def _line_fence(self, line: str) -> bool:
        fm = _FENCE.match(line)
        if not fm:
            return False
        self.flush_para()
        self.item = None
        self.fence = fm.group(1)
        self.i += 1
        return True

    def _line_blank(self, line: str) -> bool:
        if line.strip():
            return False
        self.flush_para()
        self.i += 1
        nxt = self.lines[self.i] if self.i < len(self.lines) else ""
        if self.item is not None and nxt.strip() and not nxt.startswith((" ", "\t")):
            self.item = None
        return True

    def _line_heading(self, line: str) -> bool:
        hm = _HEADING.match(line)
        if not hm:
            return False
        self.flush_para()
        self.item = None
        self.out.append(Block("heading", self.i, hm.group(2) or "", len(hm.group(1))))
        self.i += 1
        return True

    def _line_setext(self, line: str) -> bool:
        para = self.para
        if not (para and len(para) == 1 and self.item is None and re.match(r"^\s{0,3}(?:=+|-{2,})\s*$", line)
                and "|" not in para[0]):
            return False
        self.out.append(Block("heading", self.i - 1, para[0].strip(), 1 if "=" in line else 2))
        self.para = []
        self.i += 1
        return True

    def _line_table(self, line: str) -> bool:
        lines, i = self.lines, self.i
        if not ("|" in line and i + 1 < len(lines) and _TABLE_SEP.match(lines[i + 1]) and "|" in lines[i + 1] + line):
            return False
        self.flush_para()
        self.item = None
        rows = [_split_row(line)]
        i += 2
        while i < len(lines) and lines[i].strip() and "|" in lines[i]:
            rows.append(_split_row(_QUOTE.sub("", lines[i])))
            i += 1
        self.i = i
        self.out.append(Block("table", i, rows=rows))
        return True

    def _line_break(self, line: str) -> bool:
        if not _HR.match(line):
            return False
        self.flush_para()
        self.item = None
        self.out.append(Block("break", self.i))
        self.i += 1
        return True

    def _line_item(self, line: str) -> bool:
        im = _ITEM.match(line)
        if not im:
            return False
        self.flush_para()
        self.item = Block("item", self.i, im.group(3), len(im.group(1).expandtabs(4)))
        self.out.append(self.item)
        self.i += 1
        return True

    def _line_continuation(self, line: str) -> bool:
        if self.item is None or not (line.startswith((" ", "\t")) or not self.para):
            return False
        self.item.text += " " + line.strip()
        self.i += 1
        return True


def sentences(text: str) -> list[str]:
    out: list[str] = []
    start = 0
    for m in _SENTENCE_END.finditer(text):
        if _ABBREV.search(text[max(0, m.start() - 8):m.start()]):
            continue
        out.append(text[start:m.start()])
        start = m.end()
    out.append(text[start:])
    return [s for s in (x.strip() for x in out) if s]


def clause_bounds(text: str, separators: re.Pattern[str]) -> list[int]:
    """Where the clauses of a sentence start and its end: after each match of ``separators`` outside parentheses
    and brackets (``separators`` must also match ``(``, ``)``, ``[`` and ``]``, which nest)."""
    bounds = [0]
    depth = 0
    for m in separators.finditer(text):
        tok = m.group()
        if tok in "([":
            depth += 1
        elif tok in ")]":
            depth = max(0, depth - 1)
        elif depth == 0:
            bounds.append(m.end())
    bounds.append(len(text))
    return bounds

