"""Walk the report block by block, carrying which finding (or tables, or passing list) each part speaks of.

A heading naming one finding covers its section (until a heading of the same or a higher level); a
list item naming one finding covers its sentences and nested items; a paragraph sentence naming one
finding covers the paragraph's later sentences; a bold line or a line ending in ":" that names one
finding, or introduces passing checks, covers the list or table right after it.
"""

from __future__ import annotations

import re
from typing import Any

from watchdog.findings import FindingsDoc
from watchdog.verify.diagnosis_causes import check_cause_sections
from watchdog.verify.locate import CHECK_TYPES, Ctx, Index, IndexedFinding
from watchdog.verify.markdown import Block, blocks, clean, sentences
from watchdog.verify.model import Results, Verification
from watchdog.verify.prose import check_sentence
from watchdog.verify.status import check_unknown_names, check_unmentioned, lists_passing
from watchdog.verify.tables import check_table
from watchdog.verify.truncation import check_truncation
from watchdog.verify.unwrap import unwrap
from watchdog.verify.wording import check_copied, check_is_report, check_repeated, check_unknown_in_prose

__all__ = ["verify_fn"]

_SAMPLE_LEAD = re.compile(r"^(?:sample|samples|sample\s+rows|example\s+rows|examples?|failing\s+rows\s+sample)\s*:?$",
                          re.I)


def verify_fn(report_markdown: str, findings: FindingsDoc | dict[str, Any]) -> Verification:
    """Check the report's numbers and statuses against the findings (see :mod:`watchdog.verify`)."""
    doc = FindingsDoc.validate(findings)
    unwrapped = unwrap(report_markdown or "")
    walker = _Walker(Index(doc))
    for block in blocks(unwrapped.text):
        walker.block(block)
    walker.end_list()
    check_cause_sections(walker.res, unwrapped.text, doc)  # likely causes grounded in the diagnosis
    check_truncation(walker.res, unwrapped, len(doc.findings))
    check_is_report(walker.res, unwrapped.text, walker.tables)
    check_unmentioned(walker.res, walker.idx)
    return walker.res.verification()


class _Walker:
    """The walk's state: the open headings, the open list items and a lead-in's context."""

    def __init__(self, idx: Index) -> None:
        self.idx = idx
        self.res = Results()
        self.headings: list[tuple[int, Ctx]] = []
        self.items: list[tuple[int, Ctx]] = []
        self.pseudo: Ctx | None = None
        self.list_texts: list[str] = []
        self.tables = 0  # the items of the list being read (a list saying one thing 3 times)

    def end_list(self) -> None:
        check_repeated(self.res, self.list_texts, None)
        self.list_texts = []

    def wording(self, text: str, finding: IndexedFinding | None) -> None:
        check_copied(self.res, text, finding.name if finding is not None else None)

    def section(self) -> Ctx:
        return self.headings[-1][1] if self.headings else Ctx()

    def block(self, block: Block) -> None:
        if block.kind != "item":
            self.end_list()
        if block.kind == "heading":
            self.heading(block)
        elif block.kind == "break":
            self.items = []
            self.pseudo = None
        elif block.kind == "table":
            self.tables += 1
            check_table(self.res, self.idx, block.rows, self.pseudo if self.pseudo is not None else self.section())
        elif block.kind == "item":
            self.item(block)
        else:
            self.paragraph(block)

    def heading(self, block: Block) -> None:
        text = re.sub(r"^\s*(?:\d{1,3}(?:\.\d{1,3})*[.)]?|[A-Z][.)])\s+", "", block.text)
        while self.headings and self.headings[-1][0] >= block.level:
            self.headings.pop()
        cleaned = clean(text)
        ctx = _heading_ctx(self.idx, cleaned[0], self.section())
        check_unknown_names(self.res, self.idx, cleaned[0].strip(), cleaned[1])
        check_sentence(self.res, self.idx, "", Ctx(ctx.finding, ctx.tables, None), cleaned=cleaned)
        self.headings.append((block.level, ctx))
        self.items = []
        self.pseudo = None

    def item(self, block: Block) -> None:
        idx = self.idx
        base = self.pseudo if self.pseudo is not None else self.section()
        while self.items and self.items[-1][0] >= block.level:
            self.items.pop()
        parent = self.items[-1][1] if self.items else base
        if parent.status_class == "sample":  # rows under "- Sample:": values, not claims
            self.items.append((block.level, parent))
            return
        cleaned = clean(block.text)
        explicit = _distinct(idx, cleaned[0])
        if len(explicit) == 1:
            own = _finding_ctx(explicit[0])
        elif explicit:
            own = Ctx(None, parent.tables, None)
        else:
            loose = idx.loose(cleaned[0].lower(), parent.tables)
            own = (Ctx(loose[0], parent.tables, None) if len(loose) == 1 and parent.finding is None
                   else Ctx(parent.finding, parent.tables, parent.status_class))
        for sent in sentences(block.text):
            check_sentence(self.res, idx, sent, Ctx(own.finding, own.tables, parent.status_class))
            self.wording(clean(sent)[0], own.finding)
        check_unknown_in_prose(self.res, idx, cleaned[0], CHECK_TYPES)
        self.list_texts.append(cleaned[0])
        item_ctx = own
        head = cleaned[0].strip()
        if not explicit and own.finding is None and head.endswith(":") and lists_passing(head):
            item_ctx = Ctx(None, own.tables, "pass")
        elif _SAMPLE_LEAD.match(head):
            item_ctx = Ctx(own.finding, own.tables, "sample")
        self.items.append((block.level, item_ctx))

    def paragraph(self, block: Block) -> None:
        idx = self.idx
        self.items = []
        text = clean(block.text)[0].strip()
        explicit = _distinct(idx, text)
        is_label = (re.fullmatch(r"\*\*[^*]+\*\*:?", block.text.strip()) is not None or text.endswith(":")) and \
            len(text) < 160
        para_ctx = self.section()
        current = para_ctx
        named: set[int] = set()
        said = sentences(block.text)
        check_repeated(self.res, [clean(x)[0] for x in said], None)
        check_unknown_in_prose(self.res, idx, text, CHECK_TYPES)
        for sent in said:
            found = check_sentence(self.res, idx, sent, current)
            self.wording(clean(sent)[0], found or current.finding)
            sent_explicit = {id(i) for i in _distinct(idx, clean(sent)[0])}
            named |= sent_explicit
            if found is not None and len(named) == 1 and sent_explicit:
                current = Ctx(found, para_ctx.tables, para_ctx.status_class)
            elif len(named) > 1:
                current = para_ctx
        self.pseudo = None
        if is_label:
            if len(explicit) == 1:
                self.pseudo = _finding_ctx(explicit[0])
            elif not explicit and lists_passing(text):
                self.pseudo = Ctx(None, para_ctx.tables, "pass")


def _distinct(idx: Index, text: str) -> list[IndexedFinding]:
    """The findings named exactly in ``text``, each once."""
    return list({id(i): i for _s, _e, i in idx.explicit(text)}.values())


def _finding_ctx(item: IndexedFinding) -> Ctx:
    return Ctx(item, frozenset({item.table_key} if item.table_key else ()), None)


def _heading_ctx(idx: Index, text: str, parent: Ctx) -> Ctx:
    """What a heading's section speaks of: the one finding it names, its one table, or passing checks."""
    explicit = {id(i): i for _s, _e, i in idx.explicit(text)}
    low = text.lower()
    tables = idx.tables_in(low)
    if len(explicit) == 1:
        (only,) = explicit.values()
        return Ctx(only, frozenset({only.table_key} if only.table_key else ()), None)
    if explicit:
        return Ctx(None, frozenset(), None)
    loose = idx.loose(low, parent.tables)
    if len(loose) == 1:
        return Ctx(loose[0], frozenset({loose[0].table_key} if loose[0].table_key else ()), None)
    status = None
    if lists_passing(text):
        status = "pass"
    if len(tables) == 1 and not loose:
        return Ctx(None, frozenset(tables), status)
    if loose or tables:
        return Ctx(None, frozenset(), status)
    return Ctx(parent.finding, parent.tables, status or parent.status_class)
