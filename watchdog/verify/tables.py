"""Check a GFM table of the report: rows naming a finding, rows naming a database table, key-value tables.

A header is mapped to a kind (:func:`_header_kind`): Failing/Violations/Nulls → failing; Total/Rows
checked → total; Rate/% → rate; Observed/Value/Count → any fact; Distinct/Groups → duplicate values;
Excess/Extra → excess rows; Status/Result → status; Threshold/Limit/Expected → never flagged;
#/Priority/Severity/Δ → ignored; Check/Name/Table → the name; other headers are read as prose.
Tables whose header is the database's column names hold sample rows and are not checked.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache

from watchdog.verify.consistency import check_numbers, compare
from watchdog.verify.diagnosis_tables import check_diagnosis_row
from watchdog.verify.facts import describe
from watchdog.verify.locate import Ctx, Index, IndexedFinding, Mention
from watchdog.verify.markdown import Code, clean
from watchdog.verify.model import Results
from watchdog.verify.numbers import Num, format_count
from watchdog.verify.prose import check_sentence
from watchdog.verify.status import (
    EMOJI,
    cell_status,
    check_unknown_names,
    claim_status,
    status_of_word,
)
from watchdog.verify.summary import check_summary_counts

__all__ = ["check_table"]

_HEADER_KINDS = [
    ("skip", re.compile(r"^(?:#|no\.?|n°|rank|priority|severity|level|step|id)$|severity|δ|∆|delta|change|diff|"
                        r"trend|\bvs\b|previous|prev\b|prior|last\s+(?:run|week|scan|time)|growth|before|after")),
    ("status", re.compile(r"status|result|outcome|verdict|state|pass\s*/\s*fail")),
    ("dup", re.compile(r"distinct|duplicate\s+values|duplicated\s+values|dup(?:licate)?\s+groups|groups")),
    ("excess", re.compile(r"excess|extra|beyond")),
    ("threshold", re.compile(r"threshold|toleran|limit|allowed|permitted|expected|bound|max_|min_|^max|^min|target")),
    ("observed", re.compile(r"observ|measure|value|age|newest|latest")),
    ("rate", re.compile(r"%|rate|percent|share|ratio|proportion|pct")),
    ("failing", re.compile(r"fail|violat|bad|invalid|nulls|orphan|affected|offending|duplicates|dupes|issues|"
                           r"problems|errors|missing|breach")),
    ("total", re.compile(r"total|checked|scanned|examined|population|denominator|out\s+of|table\s+rows|"
                         r"rows\s+(?:in|looked)|size")),
    ("generic", re.compile(r"^(?:rows|count|records|n|#\s*rows|number|figure|rows\s+\(\w+\))$|count")),
    ("prose", re.compile(r"detail|note|description|comment|summary|observation|explanation|impact|cause|fix|action|"
                         r"remediation|recommend|why|what|finding|issue|problem|evidence|example|sample")),
    ("name", re.compile(r"check|name|test|rule|expectation|assertion|table|column|field|metric|type")),
]


@lru_cache(maxsize=1024)
def _header_kind(header: str) -> str | None:
    """What a table column holds, from its header (None for an empty header)."""
    h = " ".join(header.lower().split())
    if not h:
        return None
    for kind, regex in _HEADER_KINDS:
        if regex.search(h):
            return kind
    return None


_SIMPLE_CELL = re.compile(r"^\s*(?P<approx>~|≈|about\s+|<\s*|>\s*)?(?P<num>\d{1,3}(?:,\d{3})+|\d+)(?:\.(?P<dec>\d+))?"
                          r"\s*(?P<pct>%)?\s*(?:rows?|records?)?\s*$")
_CELL_KINDS = {"failing": "failing_strict", "total": "total", "rate": "rate", "observed": "generic",
               "generic": "generic", "dup": "dup", "excess": "excess"}


def _simple_num(m: re.Match[str]) -> Num:
    """The number of a cell that is only a number."""
    raw = m.group("num") + (f".{m.group('dec')}" if m.group("dec") else "")
    approx_text = (m.group("approx") or "").strip()
    approx = {"": None, "~": "about", "≈": "about", "about": "about", "<": "under", ">": "over"}[approx_text]
    return Num(m.start("num"), m.end(), m.group().strip(), float(raw.replace(",", "")), len(m.group("dec") or ""),
               percent=bool(m.group("pct")), approx=approx, approx_text=approx_text)


def _cell_kind(header_kind: str, m: re.Match[str], item: IndexedFinding) -> str:
    """The kind of claim a number-only cell makes under a header of ``header_kind``."""
    if m.group("pct"):
        return "rate"
    return _CELL_KINDS[header_kind]


def check_table(res: Results, idx: Index, rows: list[list[str]], ctx: Ctx) -> None:
    """Check a table (``rows``: header row first) in context ``ctx``."""
    header = [clean(c)[0].strip() for c in rows[0]]
    kinds = [_header_kind(h) for h in header]
    cleaned_rows = [[clean(c) for c in r] for r in rows[1:]]
    # a checks table: some row names a real finding
    real = any(idx.explicit(t) for r in cleaned_rows for t, _c in r)
    if not real and _is_data_table(idx, header):
        return  # sample rows from the database: values, not claims
    table = _Table(header, kinds, next((k for k, kd in enumerate(kinds) if kd == "name"), None), real)
    for cells in cleaned_rows:
        _check_row(res, idx, table, cells, ctx)


@dataclass
class _Table:
    header: list[str]
    kinds: list[str | None]
    name_col: int | None
    real: bool

    def kind(self, k: int) -> str | None:
        return self.kinds[k] if k < len(self.kinds) else None


def _check_row(res: Results, idx: Index, table: _Table, cells: list[tuple[str, Code]], ctx: Ctx) -> None:
    texts = [t for t, _c in cells]
    low = " | ".join(texts).lower()
    per_cell = [idx.explicit(t) for t in texts]
    for ex in per_cell:
        for _s, _e, it in ex:
            res.mentioned.add(it.name)
    res.coverage_texts.append((low, ctx.tables))
    item, cell_of_name = _row_finding(per_cell)
    # unknown check names in the name column (or the first column)
    target = table.name_col if table.name_col is not None else 0
    if target < len(cells) and not per_cell[target] and (table.real or table.kind(0) == "name"):
        check_unknown_names(res, idx, texts[target], cells[target][1], whole_cell=True)
    if item is None and not any(per_cell) and ctx.finding is not None and check_diagnosis_row(res, ctx.finding,
                                                                                              texts):
        return  # a row about one segment or value of the section's check's diagnosis
    if item is None and not any(per_cell):
        item = _row_without_names(res, idx, table, cells, ctx)
    if item is None:
        return
    _row_statuses(res, item, table, cells, cell_of_name, ctx)
    _row_numbers(res, idx, item, table, cells, cell_of_name, per_cell, ctx)


def _row_finding(per_cell: list[list[Mention]]) -> tuple[IndexedFinding | None, int | None]:
    """The one finding named in the row's first name-bearing cell, and that cell."""
    for k, ex in enumerate(per_cell):
        distinct = {id(i): i for _s, _e, i in ex}
        if distinct:
            if len(distinct) == 1:
                (item,) = distinct.values()
                return item, k
            return None, None
    return None, None


def _row_without_names(res: Results, idx: Index, table: _Table, cells: list[tuple[str, Code]],
                       ctx: Ctx) -> IndexedFinding | None:
    """A row naming no finding exactly: a key-value row under a finding's heading, a loosely named finding, a
    database table's row, or summary counts."""
    texts = [t for t, _c in cells]
    if ctx.finding is not None and len(cells) == 2 and not re.search(r"\d", texts[0]):
        # a key-value table under a finding's heading: "| Failing rows | 37 |"
        _check_key_value(res, idx, texts[0], cells[1], ctx)
        return None
    loose = idx.loose(" | ".join(texts).lower(), ctx.tables)
    if len(loose) == 1:
        return loose[0]
    if loose or len(cells) < 2:
        return None
    table_key = next((t.strip().lower() for t in texts if t.strip().lower() in idx.by_table), None)
    if table_key is not None:
        _check_table_row(res, idx, table_key, table.header, table.kinds, cells)
    elif len(cells) == 2:
        check_summary_counts(res, idx, f"{texts[0]}: {texts[1]}", ())
    else:
        for t, c in cells:
            if t.strip():
                check_summary_counts(res, idx, t, c)
    return None


_COUNT_CELL = re.compile(r"^[~≈]?\s*\d[\d,.]*\s*(?:%|rows?|records?|values?|entries)?$", re.I)


def _row_statuses(res: Results, item: IndexedFinding, table: _Table, cells: list[tuple[str, Code]],
                  cell_of_name: int | None, ctx: Ctx) -> None:
    """Status cells (or cells that are only a status) of a row about ``item``."""
    status_cols = [k for k, kd in enumerate(table.kinds) if kd == "status"]
    for k, (t, _c) in enumerate(cells):
        kd = table.kind(k)
        if k == cell_of_name or k >= len(table.kinds) + 8 or kd == "skip":
            continue
        word = cell_status(t, whole=kd != "status")
        claim = status_of_word(word) if word and (kd == "status" or not status_cols) else None
        if word and claim:
            claim_status(res, item, claim, t.strip(), strict=True, emoji=word in EMOJI)
        elif kd == "status" and _COUNT_CELL.match(t.strip()):
            res.add_bad(item.name, t.strip(), item.status,
                        f"The row for {item.name} has {t.strip()!r} under Status, where its status "
                        f"({item.status.upper()}) belongs: the row's cells are shifted, so its numbers stand under "
                        f"the wrong headers.")
    if ctx.status_class == "pass" and not status_cols:
        claim_status(res, item, "pass", "listed under a passing heading", strict=False)


def _row_numbers(res: Results, idx: Index, item: IndexedFinding, table: _Table, cells: list[tuple[str, Code]],
                 cell_of_name: int | None, per_cell: list[list[Mention]], ctx: Ctx) -> None:
    """Each cell's numbers, read by the cell's column header."""
    for k, (t, c) in enumerate(cells):
        kd = table.kind(k)
        if not t.strip() or kd in ("status", "skip", "name") or k == cell_of_name:
            continue
        if kd in (None, "prose"):
            check_sentence(res, idx, "", Ctx(item, ctx.tables, None), cleaned=(t, c))
            continue
        head_text = table.header[k] if k < len(table.header) else ""
        simple = _SIMPLE_CELL.match(t)
        if simple and kd in _CELL_KINDS:
            compare(res, _simple_num(simple), _cell_kind(kd, simple, item), True, item, t, head_text)
            continue
        check_numbers(res, idx, t, c, per_cell[k], item, header_kind=kd, header=head_text)


def _check_table_row(res: Results, idx: Index, table_key: str, header: list[str], kinds: list[str | None],
                     cells: list[tuple[str, Code]]) -> None:
    """A row about a whole database table ("| Album | 6 | 347 | ✅ |"): its row count, checks and status."""
    items = idx.by_table[table_key]
    row_count = next((i for i in items if i.f.check == "row_count"), None)
    sizes = {float(v) for i in items for v in (i.f.total, i.f.observed if i.f.check == "row_count" else None)
             if v is not None}
    table = items[0].f.table
    for k, (t, _c) in enumerate(cells):
        head = header[k].lower() if k < len(header) else ""
        kd = kinds[k] if k < len(kinds) else None
        if kd == "status":
            word = cell_status(t, whole=False)
            claim = status_of_word(word) if word else None
            not_passing = [i for i in items if i.status != "pass"]
            if claim == "pass" and not_passing:
                first = not_passing[0]
                res.add_bad(first.name, f"{table}: {t.strip()}", first.status,
                            f"The report marks the table {table} as passing ({t.strip()}), but {first.name} "
                            f"has status {first.status.upper()}: {describe(first)}.")
            continue
        simple = _SIMPLE_CELL.match(t)
        if not simple or simple.group("pct"):
            continue
        num = _simple_num(simple)
        if re.fullmatch(r"(?:#\s*|number\s+of\s+)?checks?(?:\s+run)?", head):
            actual = float(len(items))
            if num.matches(actual):
                res.add_ok(f"{table}: {num.text} checks matches")
            else:
                res.add_bad(None, f"{table}: {num.text} checks", f"{len(items)} checks",
                            f"The report says the table {table} has {num.text} checks, but the findings have "
                            f"{len(items)}.")
        elif kd in ("total", "generic", "observed") and re.search(r"rows|records|total|size|count", head) \
                and sizes:
            if any(num.matches(v) for v in sizes):
                res.add_ok(f"{table}: {num.text} rows matches")
            else:
                rows = format_count(row_count.f.observed if row_count else max(sizes))
                res.add_bad(row_count.name if row_count else None, f"{table}: {num.text} rows", rows,
                            f"The report says the table {table} has {num.text} rows, but the findings show "
                            f"{rows}.")


def _check_key_value(res: Results, idx: Index, key: str, value: tuple[str, Code], ctx: Ctx) -> None:
    """A row of a two-column table under a finding's heading, read as "key: value"."""
    text, code = value
    shift = len(key) + 2
    line = f"{key}: {text}"
    status = cell_status(text, whole=True)
    if status and re.search(r"status|result|outcome|verdict", key, re.I) and ctx.finding is not None:
        claim = status_of_word(status)
        if claim:
            claim_status(res, ctx.finding, claim, text.strip(), strict=True, emoji=status in EMOJI)
        return
    check_sentence(res, idx, "", ctx, cleaned=(line, tuple((s + shift, e + shift) for s, e in code)))


def _is_data_table(idx: Index, header: list[str]) -> bool:
    """Column names of the database (sample rows), not a table about checks."""
    cols = [h for h in header if h]
    if not cols:
        return False
    known = sum(1 for h in cols if h.lower() in idx.column_words or re.fullmatch(r"[a-z][a-z0-9]*_[\w]+", h)
                or re.fullmatch(r"[a-z]+(?:[A-Z][a-z0-9]*)+|[A-Z][a-z0-9]+(?:[A-Z][a-z0-9]*)+", h))
    return known * 2 >= len(cols)
