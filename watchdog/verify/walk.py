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
from watchdog.verify.locate import Ctx, Index
from watchdog.verify.markdown import blocks, clean, sentences
from watchdog.verify.model import Results, Verification
from watchdog.verify.prose import check_sentence
from watchdog.verify.status import check_unknown_names, check_unmentioned, lists_passing
from watchdog.verify.tables import check_table

__all__ = ["verify_fn"]


def verify_fn(report_markdown: str, findings: FindingsDoc | dict[str, Any]) -> Verification:
    """Check the report's numbers and statuses against the findings (see :mod:`watchdog.verify`)."""
    doc = findings if isinstance(findings, FindingsDoc) else FindingsDoc.model_validate(findings)
    idx = Index(doc)
    res = Results()
    headings: list[tuple[int, Ctx]] = []
    items: list[tuple[int, Ctx]] = []
    pseudo: Ctx | None = None

    def section() -> Ctx:
        return headings[-1][1] if headings else Ctx()

    for block in blocks(report_markdown or ""):
        if block.kind == "heading":
            text = re.sub(r"^\s*(?:\d{1,3}(?:\.\d{1,3})*[.)]?|[A-Z][.)])\s+", "", block.text)
            while headings and headings[-1][0] >= block.level:
                headings.pop()
            parent = section()
            cleaned = clean(text)
            ctx = _heading_ctx(idx, cleaned[0], parent)
            check_unknown_names(res, idx, cleaned[0].strip(), cleaned[1])
            check_sentence(res, idx, "", Ctx(ctx.finding, ctx.tables, None), cleaned=cleaned)
            headings.append((block.level, ctx))
            items = []
            pseudo = None
            continue
        if block.kind == "break":
            items = []
            pseudo = None
            continue
        base = pseudo if pseudo is not None else section()
        if block.kind == "table":
            check_table(res, idx, block.rows, base)
            continue
        if block.kind == "item":
            while items and items[-1][0] >= block.level:
                items.pop()
            parent_ctx = items[-1][1] if items else base
            cleaned = clean(block.text)
            explicit = {id(i): i for _s, _e, i in idx.explicit(cleaned[0])}
            if len(explicit) == 1:
                (only,) = explicit.values()
                own = Ctx(only, frozenset({only.table_key} if only.table_key else ()), None)
            elif explicit:
                own = Ctx(None, parent_ctx.tables, None)
            else:
                loose = idx.loose(cleaned[0].lower(), parent_ctx.tables)
                own = (Ctx(loose[0], parent_ctx.tables, None) if len(loose) == 1 and parent_ctx.finding is None
                       else Ctx(parent_ctx.finding, parent_ctx.tables, parent_ctx.status_class))
            for sent in sentences(block.text):
                check_sentence(res, idx, sent, Ctx(own.finding, own.tables, parent_ctx.status_class))
            item_ctx = own
            if not explicit and own.finding is None:
                head = cleaned[0].strip()
                if head.endswith(":") and lists_passing(head):
                    item_ctx = Ctx(None, own.tables, "pass")
            items.append((block.level, item_ctx))
            continue
        # paragraph
        items = []
        cleaned = clean(block.text)
        text = cleaned[0].strip()
        explicit = {id(i): i for _s, _e, i in idx.explicit(text)}
        is_label = (re.fullmatch(r"\*\*[^*]+\*\*:?", block.text.strip()) is not None or text.endswith(":")) and \
            len(text) < 160
        para_ctx = base if pseudo is None else section()
        current = para_ctx
        named: set[int] = set()
        for sent in sentences(block.text):
            found = check_sentence(res, idx, sent, current)
            sent_explicit = {id(i): i for _s, _e, i in idx.explicit(clean(sent)[0])}
            named |= set(sent_explicit)
            if found is not None and len(named) == 1 and sent_explicit:
                current = Ctx(found, para_ctx.tables, para_ctx.status_class)
            elif len(named) > 1:
                current = para_ctx
        pseudo = None
        if is_label:
            if len(explicit) == 1:
                (only,) = explicit.values()
                pseudo = Ctx(only, frozenset({only.table_key} if only.table_key else ()), None)
            elif not explicit and lists_passing(text):
                pseudo = Ctx(None, para_ctx.tables, "pass")
    check_unmentioned(res, idx)
    return res.verification()


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
