"""Which finding a piece of the report speaks of: exact names, loose names, and the resolution of one unit.

:class:`Index` knows, for every finding, its name (matched in any case, with or without backticks or
escapes), its table's and column(s)' words and a word pattern for its check type ("null, missing,
empty" for ``not_null``, "duplicate, repeated" for ``unique``, ...), or, for a ``custom_sql`` check, its
name's words. :meth:`Index.explicit` finds exact names; :meth:`Index.loose` finds findings named by
table + column(s) + check word (column-level matches win over table-level ones).

:func:`resolve` decides which one finding a unit (sentence, cell, heading) is about: a finding named
in it wins over the context (section, list item, earlier sentence); several names make it ambiguous,
and so does a loose mention of another finding of the same level.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from functools import lru_cache

from watchdog.findings import Finding, FindingsDoc
from watchdog.verify.facts import Facts
from watchdog.verify.markdown import sentences
from watchdog.verify.model import Results

__all__ = ["CHECK_TYPES", "Ctx", "Index", "IndexedFinding", "Mention", "resolve", "without_names"]

CHECK_TYPES = ("not_null", "unique", "pattern", "accepted_values", "range", "foreign_key", "freshness",
               "row_count", "custom_sql", "row_condition")

_CHECK_WORDS = {
    "not_null": r"not[_ -]?null|non[_ -]?null|nulls?|missing|empty|blank|without|no\s+value|lack\w*|absent|unset|"
                r"present|presence|populated|filled|required|mandatory|completeness|complete|"
                r"not\s+set|not\s+filled|no\s+\w+\s+address|do(?:es)?\s+not\s+have|don['’]t\s+have",
    "unique": r"duplicat\w*|unique\w*|repeat\w*|more\s+than\s+once|shared?|same|distinct|dupes?",
    "pattern": r"pattern|format\w*|malformed|invalid|regex\w*|look\s+like|looks\s+like|well[- ]formed|"
               r"match\w*|valid|shape|syntax",
    "accepted_values": r"accepted[_ ]values|accepted|allowed|invalid|unexpected|unknown|not\s+in|not\s+one\s+of|"
                       r"permitted|valid|enum\w*|categor\w*|values?",
    "range": r"range|out[- ]of[- ]range|outside|negative|below|above|bounds?|implausible|invalid|too\s+(?:high|low|"
             r"large|small|big)|exceed\w*|between|minimum|maximum|greater|less|plausible|over|under",
    "foreign_key": r"orphan\w*|foreign[_ -]?keys?|fk|referen\w*|points?\s+to|pointing\s+to|no\s+matching|"
                   r"non-?existent|(?:does|do|did)\s+not\s+exist|(?:doesn|don|didn)['’]t\s+exist|dangling|unknown|"
                   r"link\w*|missing|not\s+found|broken|match\w*|exist\w*",
    "freshness": r"fresh\w*|stale\w*|old|older|age|aged|newest|latest|recent\w*|updated?|ago|last|since|outdated|"
                 r"up[- ]to[- ]date|out[- ]of[- ]date",
    "row_count": r"row[_ -]?counts?|rowcount|number\s+of\s+(?:rows|records)|rows|records|size|empty|entries",
    "row_condition": r"condition\w*|rule|violat\w*|invalid|fail\w*",
}
_CHECK_RE = {k: re.compile(rf"(?<![a-z0-9])(?:{v})(?![a-z0-9])") for k, v in _CHECK_WORDS.items()}
# to attribute numbers to a table-level check, plain "rows" is not enough
_STRICT_CHECK_RE = {
    "row_count": re.compile(r"(?<![a-z0-9])(?:row[_ -]?counts?|rowcount|number\s+of\s+(?:rows|records)|size|"
                            r"(?:has|have|had|contains|contained|holds|held)\s+(?:only\s+|just\s+|about\s+|~)?"
                            r"[\d,.]+k?\s+(?:rows|records)(?!\s+(?:with|where|that|whose|having|missing|lacking|"
                            r"without|in\s+which))|with\s+[\d,.]+k?\s+(?:rows|records)(?=\s*(?:[,.;)]|and\b|$)))"
                            r"(?![a-z0-9])"),
}


@lru_cache(maxsize=4096)
def _word_variants(name: str, *, strip_suffix: bool) -> frozenset[str]:
    base = name.strip().lower()
    camel = re.sub(r"(?<=[a-z0-9])(?=[A-Z])", " ", name.strip()).lower()
    forms = {base, base.replace("_", " "), base.replace("_", ""), camel, camel.replace("_", " ")}
    if strip_suffix:
        for f in list(forms):
            short = re.sub(r"(?:[ _]?(?:id|at|date|on|ts|time|timestamp|key|code))$", "", f).strip()
            if short and short != f and len(short) > 2:
                forms.add(short)
    out: set[str] = set()
    for f in forms:
        f = " ".join(f.split())
        if not f:
            continue
        out.add(f)
        if f.endswith("ies"):
            out.add(f[:-3] + "y")
        elif f.endswith("ses") or f.endswith("xes"):
            out.add(f[:-2])
        elif f.endswith("s") and not f.endswith("ss"):
            out.add(f[:-1])
        else:
            out.add(f + ("es" if f.endswith(("s", "x", "ch", "sh")) else "s"))
            if f.endswith("y") and f[-2:-1] not in "aeiou":
                out.add(f[:-1] + "ies")
    return frozenset(out)


@lru_cache(maxsize=2048)
def _words_re(variants: frozenset[str]) -> re.Pattern[str]:
    alts = sorted((re.escape(v).replace(r"\ ", r"[\s_-]+") for v in variants), key=len, reverse=True)
    return re.compile(rf"(?<![a-z0-9]){'(?:' + '|'.join(alts) + ')'}(?![a-z0-9])")


@dataclass
class IndexedFinding:
    """A finding with what the verifier needs about it."""

    f: Finding
    name: str
    table_key: str | None
    column_res: list[re.Pattern[str]]
    check_re: re.Pattern[str] | None
    phrase_re: re.Pattern[str] | None
    nouns: set[str]
    level: int  # 2 column-level, 1 table-level, 0 custom
    own_table_nouns: set[str] = field(default_factory=set)
    column_nouns: set[str] = field(default_factory=set)
    _facts: Facts | None = None

    @property
    def facts(self) -> Facts:
        if self._facts is None:
            self._facts = Facts.of(self.f)
        return self._facts

    @property
    def status(self) -> str:
        return self.f.status


class Index:
    """The findings, with patterns to find where the report names them exactly or loosely."""

    def __init__(self, doc: FindingsDoc) -> None:
        self.doc = doc
        self.items: list[IndexedFinding] = []
        self.by_name: dict[str, IndexedFinding] = {}
        self.table_res: dict[str, re.Pattern[str]] = {}
        self.nouns_by_table: dict[str, set[str]] = {}
        self._other_nouns: dict[str | None, set[str]] = {}
        self.by_table: dict[str, list[IndexedFinding]] = {}
        all_table_nouns: set[str] = set()
        for f in doc.findings:
            table_key = None
            nouns: set[str] = set()
            table_nouns: set[str] = set()
            if f.table:
                table_key = f.table.lower()
                short = f.table.split(".")[-1]
                variants = _word_variants(short, strip_suffix=False) | {table_key}
                self.table_res.setdefault(table_key, _words_re(frozenset(variants)))
                table_nouns = {v for v in variants if " " not in v}
                nouns |= table_nouns
                all_table_nouns |= nouns
                self.nouns_by_table.setdefault(table_key, set()).update(table_nouns)
            columns = f.columns or ([f.column] if f.column else [])
            column_res = []
            for c in columns:
                variants = _word_variants(c, strip_suffix=True)
                cv = frozenset(v for v in variants if v not in table_nouns) or variants
                column_res.append(_words_re(cv))
                nouns |= {v.split()[-1] for v in cv if v.split()[-1] not in ("id", "ids", "at", "on")}
            check_re = _CHECK_RE.get(f.check)
            phrase_re = None
            if f.check == "custom_sql" or not f.table:
                words = [w for w in re.split(r"[_\W]+", f.name.lower()) if w]
                if len(words) >= 2:
                    phrase_re = re.compile(r"(?<![a-z0-9])" + r"[\s_-]+".join(map(re.escape, words)) + r"(?![a-z0-9])")
            level = 2 if columns else (1 if f.table else 0)
            item = IndexedFinding(f, f.name, table_key, column_res, check_re, phrase_re, nouns, level, set(table_nouns),
                      nouns - table_nouns)
            self.items.append(item)
            self.by_name.setdefault(f.name.lower(), item)
            if table_key:
                self.by_table.setdefault(table_key, []).append(item)
        for item in self.items:
            if item.level == 0:
                item.nouns |= all_table_nouns
        names = sorted(self.by_name, key=len, reverse=True)
        self.name_re = (re.compile(r"(?<![\w.+$-])(?:" + "|".join(re.escape(n) for n in names) + r")(?![\w+$]|\.\w)",
                                   re.I) if names else None)
        # the suite's descriptions (rules, not findings) are masked wherever the report quotes them
        self.descriptions = sorted({sentence for f in doc.findings if f.description
                                    for sentence in sentences(" ".join(f.description.split())) if len(sentence) >= 12},
                                   key=len, reverse=True)
        self.column_words = {c.lower() for f in doc.findings for c in (f.columns or ([f.column] if f.column else []))}
        self.table_words = {f.table.lower() for f in doc.findings if f.table}
        # the data's own nouns (tables and columns, singular and plural): "patient 17" names a row, counts nothing
        entity = sorted({n for i in self.items for n in i.nouns if n.isalpha() and len(n) > 2}, key=len, reverse=True)
        self._entity_re = (re.compile(r"\b(?:" + "|".join(map(re.escape, entity)) + r")\s*(?:#|no\.)?\s*$")
                           if entity else None)
        self._explicit_cache: dict[str, list[Mention]] = {}
        self._tables_cache: dict[str, set[str]] = {}
        self._loose_cache: dict[tuple[str, frozenset[str], bool], list[IndexedFinding]] = {}
        self.phrase_items = [i for i in self.items if i.phrase_re is not None]

    def entity_before(self, before: str) -> bool:
        """Whether the text before a number ends with one of the data's nouns ("order ", "shipment #")."""
        return bool(self._entity_re is not None and self._entity_re.search(before))

    def names_loosely(self, item: IndexedFinding, low: str, ctx_tables: frozenset[str] = frozenset()) -> bool:
        """Whether ``low`` names ``item`` by table, column(s) and a word for its check (or its name as words)."""
        if item.phrase_re is not None:
            return bool(item.phrase_re.search(low))
        if item.table_key is None or item.check_re is None:
            return False
        return bool((item.table_key in ctx_tables or self.table_res[item.table_key].search(low))
                    and item.check_re.search(low)
                    and all(r.search(low) for r in item.column_res))

    def last_table(self, text: str, item: IndexedFinding) -> str | None:
        """The table named last in ``text`` (lowercase), ignoring words that are the finding's column."""
        best, best_pos = None, -1
        for t, r in self.table_res.items():
            for m in r.finditer(text):
                if m.start() <= best_pos:
                    continue
                if re.match(r"\s*(?:table|tbl)\b", text[m.end():m.end() + 8]) or not any(
                        cr.fullmatch(m.group()) for cr in item.column_res):
                    best, best_pos = t, m.start()
        return best

    def other_table_nouns(self, item: IndexedFinding) -> set[str]:
        hit = self._other_nouns.get(item.table_key)
        if hit is None:
            hit = {n for t, ns in self.nouns_by_table.items() if t != item.table_key for n in ns}
            self._other_nouns[item.table_key] = hit
        return hit

    def explicit(self, text: str) -> list[Mention]:
        if self.name_re is None:
            return []
        hit = self._explicit_cache.get(text)
        if hit is None:
            hit = [(m.start(), m.end(), self.by_name[m.group().lower()]) for m in self.name_re.finditer(text)]
            self._explicit_cache[text] = hit
        return hit

    def tables_in(self, low: str) -> set[str]:
        hit = self._tables_cache.get(low)
        if hit is None:
            hit = {t for t, r in self.table_res.items() if r.search(low)} if self.table_res else set()
            self._tables_cache[low] = hit
        return hit

    def loose(self, low: str, ctx_tables: frozenset[str] = frozenset(), *, strict: bool = True) -> list[IndexedFinding]:
        """Findings named loosely (table + column + a word for the check). ``strict`` (for attributing
        numbers) asks more of table-level checks than plain "rows"; coverage uses ``strict=False``."""
        key = (low, ctx_tables, strict)
        hit = self._loose_cache.get(key)
        if hit is None:
            hit = self._loose(low, ctx_tables, strict)
            self._loose_cache[key] = hit
        return hit

    def _loose(self, low: str, ctx_tables: frozenset[str], strict: bool) -> list[IndexedFinding]:
        found: list[IndexedFinding] = []
        tables = self.tables_in(low) | ctx_tables
        for t in tables:
            for item in self.by_table.get(t, ()):
                check_re = (_STRICT_CHECK_RE.get(item.f.check) if strict else None) or item.check_re
                if check_re is None or not check_re.search(low):
                    continue
                if all(r.search(low) for r in item.column_res):
                    found.append(item)
        phrased = [i for i in self.phrase_items if i.phrase_re is not None and i.phrase_re.search(low)]
        if phrased:  # every word of a custom check's name: more specific than a column and a check word
            return phrased
        if any(i.level == 2 for i in found):
            found = [i for i in found if i.level != 1]
        return found


Mention = tuple[int, int, IndexedFinding]
"""Where a finding is named exactly in a text: (start, end, finding)."""


@dataclass
class Ctx:
    """What the surrounding section, list item, paragraph or lead-in speaks of."""

    finding: IndexedFinding | None = None
    tables: frozenset[str] = frozenset()
    status_class: str | None = None  # "pass" when the section lists passing checks


def resolve(res: Results, idx: Index, text: str, ctx: Ctx) -> tuple[IndexedFinding | None, list[Mention], bool]:
    """The one finding a text is about (or None), its explicit mentions, and whether it is ambiguous."""
    explicit = idx.explicit(text)
    for _s, _e, item in explicit:
        res.mentioned.add(item.name)
    low = text.lower()
    res.coverage_texts.append((low, ctx.tables))
    distinct = {id(i): i for _s, _e, i in explicit}
    if len(distinct) == 1:
        (only,) = distinct.values()
        return only, explicit, False
    if len(distinct) > 1:
        return None, explicit, True
    loose = idx.loose(low, ctx.tables)
    if ctx.finding is not None:
        other = [i for i in idx.loose(low) if i is not ctx.finding and i.level >= ctx.finding.level]
        if other and ctx.finding not in idx.loose(low):
            return None, explicit, True
        return ctx.finding, explicit, False
    if len(loose) == 1:
        return loose[0], explicit, False
    return None, explicit, len(loose) > 1


def without_names(text: str, explicit: list[Mention]) -> str:
    """``text`` with the exact names blanked out."""
    for s, e, _i in sorted(explicit, reverse=True):
        text = text[:s] + " " + text[e:]
    return text
