"""Which numbers in a unit are claims about its finding, and of what kind.

:func:`find_claims` masks what is never a count (dates, names, code, unknown check names, the finding's
quoted description), extracts the numbers (:mod:`watchdog.verify.numbers`) and asks
:func:`claim` what each one says about the finding: a kind (``failing``, ``failing_strict``, ``total``,
``dup``, ``excess``, ``generic``, ``rate``, ``age``, ``threshold``, or a table header's kind) and
whether the claim is strong enough to be flagged when wrong. See the rules in
:mod:`watchdog.verify` ("Which numbers are claims", "What kind of count").
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, field

from watchdog.verify.group_rows import rows_of_groups
from watchdog.verify.locate import CHECK_TYPES, Index, IndexedFinding, Mention
from watchdog.verify.markdown import Code
from watchdog.verify.numbers import MASK, Num, extract_numbers, mask_non_numbers

__all__ = ["AFTER_STOP", "COUNT_NOUNS", "claim", "find_claims"]

COUNT_NOUNS = {
    "row", "rows", "record", "records", "entry", "entries", "value", "values", "null", "nulls", "duplicate",
    "duplicates", "orphan", "orphans", "violation", "violations", "failure", "failures", "case", "cases",
    "instance", "instances", "occurrence", "occurrences", "line", "lines", "item", "items", "id", "ids",
    "group", "groups", "reference", "references", "address", "addresses", "email", "emails", "dupes", "copies",
    "copy", "keys", "key",
}
_ROW_NOUNS = {"row", "rows", "record", "records", "entry", "entries", "line", "lines", "item", "items", "case", "cases",
              "instance", "instances", "occurrence", "occurrences"}
_COUNT_NOUN_RE = re.compile(r"\b(?:" + "|".join(sorted(COUNT_NOUNS)) + r")\b")
# a noun that belongs to one kind of check only: said of another check it is not about that finding
_TYPE_WORDS = {
    "null": {"not_null"}, "nulls": {"not_null"}, "blank": {"not_null"}, "blanks": {"not_null"},
    "duplicate": {"unique"}, "duplicates": {"unique"}, "duplicated": {"unique"}, "dupes": {"unique"},
    "orphan": {"foreign_key"}, "orphans": {"foreign_key"}, "orphaned": {"foreign_key"},
    "dangling": {"foreign_key"}, "unmatched": {"foreign_key"}, "malformed": {"pattern"},
    "negative": {"range"}, "out-of-range": {"range"},
}
_FAIL_WORDS = re.compile(
    r"\b(?:fail\w*|nulls?|missing|invalid|bad|orphan\w*|duplicat\w*|dupes?|violat\w*|malformed|broken|unmatched|"
    r"dangling|wrong|non-?conforming|unexpected|unknown|erroneous|problem\w*|affected|flagged|offending|"
    r"out-of-range|out\s+of\s+range|blank|empty|negative|implausible|lack\w*|without|breach\w*|stale|"
    r"no\s+matching|(?:do|does|did)\s+not|(?:don|doesn|didn)['’]t|ha(?:ve|s)\s+no|are\s+not|is\s+not|"
    r"outside|exceed\w*|too\s+\w+|issues?|errors?|mismatch\w*|repeat\w*|shared)\b")
_COMPLEMENT = re.compile(
    r"\b(?:non-?null|not\s+null|valid|passing|pass|passed|good|clean|correct|ok|fine|remaining|rest|conforming|"
    r"populated|present|healthy|unique|well-formed|ha(?:ve|s)\s+(?:an?|the)\b|with\s+(?:an?|the)\s+(?!missing|"
    r"null|invalid|bad|wrong)|matching\s+(?!no)|in\s+range|within)\b")
_TOTAL_WORDS = re.compile(
    r"\b(?:total|checked|scanned|examined|looked\s+at|evaluated|tested|inspected|in\s+all|altogether|"
    r"in\s+the\s+table|overall)\b")
_THRESHOLD_WORDS = re.compile(
    r"\b(?:toleran\w*|tolerat\w*|allowed|allowance|permitted|permissible|limit\w*|threshold\w*|maximum|minimum|"
    r"max|min|expected|expect|required|budget|cap|acceptable|accepted|bound\w*|at\s+most|at\s+least|"
    r"up\s+to|no\s+more\s+than|target|ceiling|floor|average|median|mean|benchmark|typical|industry|baseline|goal|"
    r"norm|sla|slo|kpi)\b")
_DUP_WORDS = re.compile(
    r"\b(?:distinct|different|unique)\b.*\b(?:duplicat\w*|repeat\w*|values?\s+(?:that\s+)?(?:appear|occur)\w*|"
    r"shared|recurring)\b|\b(?:duplicat\w*|repeat\w*)\s+(?:groups?|sets?|keys?)\b|\bgroups?\b|"
    r"\b(?:values?|keys?|emails?|names?|addresses)\s+(?:that\s+)?(?:repeat|recur|appear\s+more|occur\s+more|"
    r"are\s+(?:shared|duplicated|repeated))")
_EXCESS_WORDS = re.compile(
    r"\b(?:excess|extra|redundant|surplus|superfluous|beyond\s+the\s+first|to\s+(?:remove|delete|drop)|"
    r"removable|spare|additional\s+cop\w*)\b")
_SKIP_BEFORE = re.compile(
    r"(?:\b(?:sample|sampled|samples|example|examples|e\.g\.|i\.e\.|such\s+as|like|including|first|top|last|"
    r"showing|shows|show|shown|listed|list|row|line|id|ids|page|step|version|number|no\.|rank|priority|"
    r"phase|tier|level|item|figure|table|section|chapter|issue|ticket|pr|check|rule|query|column|index|"
    r"position|attempt|round|week|day|days|month|year|quarter|batch|run|scan|report|v|rows|records|lines|entries)"
    r"\s*(?:#|no\.)?\s*)$"
    r"|\b(?:rows?|ids?|records?|lines?|entries|numbers?|#)\s*\d[\d,]*(?:\s*(?:,|and|or|&)\s*\d[\d,]*)*"
    r"\s*(?:,|and|or|&)\s*$")
_SKIP_AFTER_WORDS = {"sample", "samples", "sampled", "example", "examples", "shown", "listed", "below",
                     "following", "times", "checks", "check", "tests", "test", "tables", "table", "columns",
                     "column", "suites", "queries", "characters", "chars", "digits", "bytes", "pages",
                     "minutes", "hours", "seconds"}
_RELATIVE = re.compile(
    r"\b(?:up|down|increase\w*|decrease\w*|change\w*|delta|growth|grew|drop\w*|dropped|rise|rose|improv\w*|"
    r"worse|better|previous\w*|prior|last\s+(?:week|month|run|scan|time)|yesterday|compared|versus|vs\.?|"
    r"more|fewer|less|times\s+(?:more|less|fewer|as|higher|lower|larger|smaller|the)|twice|double|triple|half)\b")
_AGGREGATE = re.compile(
    r"\b(?:overall|combined|altogether|together|in\s+all|sum|summed|across\s+(?:all\s+|the\s+|these\s+|"
    r"those\s+|\d+\s+)?(?:\w+\s+)?checks|all\s+checks|other\s+checks|each|per\s+check|every\s+check)\b")
_AGE_WORDS = re.compile(r"\b(?:old|ago|age|aged|stale|newest|latest|most\s+recent|last\s+(?:updated|update|"
                        r"activity|change|value|row|record)|since)\b")
_NUMBERISH = re.compile(r"\d|\b(?:no|zero|two|three|four|five|six|seven|eight|nine|ten|eleven|twelve|\w+teen|twenty|"
                        r"thirty|forty|fifty|sixty|seventy|eighty|ninety|dozen|hundred)\b", re.I)
_UNKNOWN_IN_TEXT = re.compile(rf"(?<![\w.+])[A-Za-z_][\w$]*(?:\.[\w$+]+)*\.(?:{'|'.join(CHECK_TYPES)})(?![\w+]|\.\w)")

AFTER_STOP = re.compile(r"[.;:!?()\[\]|\n" + MASK + r"]|,\s|\d|\s(?:but|and|or|while|whereas|although|though|because|"
                         r"since|which|so|yet|than)\s")
_WORD = re.compile(r"[a-z][\w'’-]*")
_LABEL = re.compile(r"([a-z][a-z' /()_-]{0,40}?)\s*[:=]\s*$")
_OF_BEFORE = re.compile(r"(?:\bout\s+of|\bof|/|\bamong|\bacross|\ball)\s*(?:the\s+|all\s+|a\s+total\s+of\s+)?$")
_QUOTED = re.compile(r"\"[^\"\n]{1,80}\"|“[^”\n]{1,80}”|(?<![\w])'[^'\n]{1,60}'(?![\w])")
_REMOVE_BEFORE = re.compile(r"\b(?:remove|removes|removing|removed|delete|deletes|deleting|drop|dropping|eliminate|"
                            r"eliminating|merge\s+away|collapse|collapsing)\s+(?:\w+\s+)?$")
_PARTIAL = re.compile(
    r"\b(?:(?:each|per|one|single|particular|specific|worst|largest|biggest|smallest|top|first|this|that)\s+"
    r"(?:[\w-]+\s+)?(?:group|value|address|email|name|company|id|contact|key|cluster|offender|isbn|domain|duplicate)s?"
    r"|example|examples|instance|sample|samples|e\.g\.|such\s+as|for\s+instance)\b")
_SHARE_OF_OTHERS = re.compile(r"\bof\s+(?:all\s+|the\s+|total\s+)+(?:[\w-]+\s+){0,2}(?:failures|issues|problems|"
                              r"errors|violations|failing\s+rows|bad\s+rows)\b")
_OTHER_BASE = re.compile(r"\b(?:fail\w*|issues?|problems?|errors?|checks?|violations?|duplicates?|nulls?|bad|affected|"
                         r"them|those|these|it|revenue|amount|value|sales|deals?\s+value)\b")
_AFTER_NAME = re.compile(rf"{MASK}[`*_\s]*(?:[:(—–=-]|\bis|\bwas|\bare|\bequals|\breturned|\breports?|\bshows?|"
                         rf"\bfound|\bcounts?|\bhas|\bhave|\bat|\bwith|\bconfirms?|\bgives?|\bof)?[\s:(]*$")
_NOT_A_COUNT_ADJ = re.compile(r"\w+est|main|major|key|top|other|separate|new|previous|next|first|second|third|same|"
                              r"such|more|fewer|few|many|several|remaining|biggest|largest|smallest")


def find_claims(idx: Index, text: str, code: Code, explicit: list[Mention], item: IndexedFinding,
                header_kind: str | None = None) -> tuple[str, list[tuple[Num, str, bool]]]:
    """The masked text and, for each number that claims something about ``item``: (number, kind, strong)."""
    if not _NUMBERISH.search(text):
        return text, []
    masked = _masked(idx, text, code, explicit)
    literals = [(s, e) for s, e in code if not _is_name_literal(idx, text[s:e])]
    literals += [(m.start(), m.end()) for m in _QUOTED.finditer(text)]
    names_at = [e for _s, e, _i in explicit]
    claims = []
    for num in extract_numbers(masked, masked=True):
        kind, strong = claim(idx, masked, num, item, header_kind, literals, names_at, plain=text)
        if kind is not None:
            claims.append((num, kind, strong))
    return masked, claims


def _masked(idx: Index, text: str, code: Code, explicit: list[Mention]) -> str:
    """``text`` with everything that is never a claimed count blanked out (offsets kept)."""
    chars = list(mask_non_numbers(text))
    for s, e in code:
        chars[s:e] = MASK * (e - s)
    for s, e, _i in explicit:
        chars[s:e] = MASK * (e - s)
    for m in _UNKNOWN_IN_TEXT.finditer(text):
        chars[m.start():m.end()] = MASK * (m.end() - m.start())
    masked = "".join(chars)
    for d in idx.descriptions:
        pos = masked.find(d)
        while pos >= 0:
            masked = masked[:pos] + MASK * len(d) + masked[pos + len(d):]
            pos = masked.find(d, pos + len(d))
    return masked


def _is_name_literal(idx: Index, literal: str) -> bool:
    """Whether a code span is a finding, table or column name (not a value)."""
    low = literal.strip().lower()
    return (low in idx.by_name or low in idx.table_words or low in idx.column_words
            or low.split(".")[-1] in idx.column_words)


def _other_type_word(text: str, check: str) -> bool:
    """Whether ``text`` uses a noun that belongs to another kind of check ("duplicates" of a not_null check)."""
    if check in ("custom_sql", "row_condition"):
        return False
    return any((owners := _TYPE_WORDS.get(w)) is not None and check not in owners for w in _WORD.findall(text))


@dataclass
class _Site:
    """Where a number sits: the words before and after it, its clause, the count noun after it, a label."""

    idx: Index
    item: IndexedFinding
    num: Num
    masked: str
    plain: str
    header_kind: str | None
    literals: Sequence[tuple[int, int]]
    names_at: Sequence[int]
    low: str = ""
    before_full: str = ""
    before: str = ""
    after_words: list[str] = field(default_factory=list)
    clause_start: int = 0
    clause_before: str = ""
    noun_at: int = -1
    adjectives: list[str] = field(default_factory=list)
    phrase: str = ""
    near: str = ""
    label: str = ""

    def __post_init__(self) -> None:
        num = self.num
        self.low = low = self.masked.lower()
        before_full = low[:num.start]
        if num.approx_text:
            cut = before_full.rstrip()
            if cut.endswith(num.approx_text):
                before_full = cut[: len(cut) - len(num.approx_text)]
        self.before_full = before_full
        self.before = before_full[-60:]
        after_seg = AFTER_STOP.split(low[num.end:num.end + 80], maxsplit=1)[0]
        self.after_words = after = _WORD.findall(after_seg)[:7]
        self.clause_start = max(before_full.rfind(ch) for ch in (".", ";", "!", "?", ",", "—", "(")) + 1
        self.clause_before = before_full[self.clause_start:]
        # a noun after the number (at most two adjectives before it)
        self.noun_at = next((k for k, w in enumerate(after[:3]) if w in COUNT_NOUNS or w in self.item.nouns), -1)
        n = self.noun_at
        self.adjectives = after[:n] if n > 0 else []
        self.phrase = " ".join(after[: (n + 1 + 4) if n >= 0 else 4])
        self.near = " ".join(after[: n + 2] if n >= 0 else after[:2])
        lm = _LABEL.search(self.before)
        if lm:
            self.label = re.split(r"[.;,(]\s*", lm.group(1))[-1].strip()

    @property
    def head(self) -> str:
        return self.after_words[self.noun_at] if self.noun_at >= 0 else ""


Verdict = tuple[str | None, bool]
_NO_CLAIM: Verdict = (None, False)


def claim(idx: Index, masked: str, num: Num, item: IndexedFinding, header_kind: str | None,
          literals: Sequence[tuple[int, int]] = (), names_at: Sequence[int] = (),
          plain: str = "") -> Verdict:
    """What ``num`` claims about ``item``: (kind, strong) or (None, False) when it claims nothing. The rules
    below run in order; the first one with an answer decides."""
    site = _Site(idx, item, num, masked, plain, header_kind, literals, names_at)
    for rule in _RULES:
        verdict = rule(site)
        if verdict is not None:
            return verdict
    return _NO_CLAIM


def _duration(site: _Site) -> Verdict | None:
    """A duration is an age, and only a freshness check has one."""
    if not site.num.is_duration:
        return None
    if site.item.f.check != "freshness":
        return _NO_CLAIM
    window = site.before[-40:] + " " + " ".join(site.after_words[:4])
    return "age", bool(_AGE_WORDS.search(window))


def _group_rows(site: _Site) -> Verdict | None:
    """A ``unique`` check's rows in the duplicated groups: "10 rows in all", "across 10 rows", "appear 10 times"."""
    num, item = site.num, site.item
    if (item.f.check != "unique" or num.percent or (num.word and num.value <= 1) or len(site.names_at) > 1
            or _SKIP_BEFORE.search(site.before) or _RELATIVE.search(site.clause_before[-30:])
            or any(s >= site.clause_start and e <= num.start for s, e in site.literals)
            or _PARTIAL.search(site.before_full[max(site.before_full.rfind(". "), site.before_full.rfind("\n")) + 1:])):
        return None
    counts_rows = site.head in _ROW_NOUNS or site.head in item.own_table_nouns
    if rows_of_groups(site.low, num.start, num.end, site.after_words, site.noun_at, counts_rows):
        return "group_rows", True
    return None


def _not_a_count(site: _Site) -> Verdict | None:
    """A list number, a sample, a value in code or quotes, a change or an aggregate."""
    num, after = site.num, site.after_words
    if (_SKIP_BEFORE.search(site.before) or site.idx.entity_before(site.before)) and not num.percent:
        return _NO_CLAIM  # "row 12", "order 1017", "patient 17": an identifier, not a count
    if after and after[0] in _SKIP_AFTER_WORDS:
        return _NO_CLAIM
    if any(s >= site.clause_start and e <= num.start for s, e in site.literals):
        return _NO_CLAIM  # about a value ("`x@y` appears in 3 rows"), not the finding
    rel_after = after[:3]
    if re.match(r"[^.;:!?\d]*\b(?:more|less|fewer)\s+than\s+\d", site.low[num.end:num.end + 40]):
        rel_after = [w for w in rel_after if w not in ("more", "less", "fewer")]  # "more than 7 days": an approx
    if _RELATIVE.search(site.clause_before[-30:] + " " + " ".join(rel_after)) or _AGGREGATE.search(
            site.clause_before + " " + " ".join(after)):
        return _NO_CLAIM
    if any(_NOT_A_COUNT_ADJ.fullmatch(w) for w in site.adjectives):
        return _NO_CLAIM
    cut = site.before_full.rstrip()
    if num.approx in ("over", "under") and cut.endswith(MASK) and len(cut) not in site.names_at:
        return _NO_CLAIM  # a value compared with a column in code: "`price` over 100"
    if re.search(r"(?:\d|\bone)\s+in\s+(?:every\s+|each\s+)?$", site.before) or (after[:1] == ["in"] and re.match(
            r"\s*in\s+\d", site.low[num.end:num.end + 8])):
        return _NO_CLAIM  # a ratio: "1 in 50 contacts"
    return None


def _not_this_finding(site: _Site) -> Verdict | None:
    """Rows of another table, distinct values of a non-unique check, one group or example, another check's noun."""
    item, f = site.item, site.item.f
    if site.noun_at >= 0:
        head_noun = site.head
        if item.table_key and head_noun in site.idx.other_table_nouns(item) and head_noun not in item.own_table_nouns:
            return _NO_CLAIM  # "the companies table has 200 rows" said next to a contacts check
        if (f.check != "unique" and head_noun in item.column_nouns and head_noun not in _ROW_NOUNS
                and re.search(r"\b(?:distinct|different|unique|separate)\b", " ".join(site.adjectives))):
            return _NO_CLAIM  # distinct values of a non-unique check are not among the facts
    before_full = site.before_full
    sentence_before = before_full[max(before_full.rfind(". "), before_full.rfind("\n")) + 1:]
    if _PARTIAL.search(sentence_before) or _SHARE_OF_OTHERS.search(sentence_before):
        return _NO_CLAIM  # about one group, value or example, or a share of all failures
    if item.table_key:
        plain_before = (site.plain or site.masked)[len(before_full) - len(sentence_before):site.num.start].lower()
        last = site.idx.last_table(plain_before, item)
        if last is not None and last != item.table_key:
            return _NO_CLAIM  # the nearest table named before the number is another table
    n = site.noun_at
    if _other_type_word(" ".join(site.after_words[: n + 1 if n >= 0 else 3]), f.check):
        return _NO_CLAIM
    if site.label and _other_type_word(site.label, f.check):
        return _NO_CLAIM  # "Duplicate values: 0" said of a not_null check: a figure of another kind of check
    return None


def _percent_or_threshold(site: _Site) -> Verdict | None:
    """A percentage is the rate unless worded as a threshold or a share of something else; a number worded as a
    threshold is one; a number word needs a count noun."""
    num, after = site.num, site.after_words
    threshold_near = bool(_THRESHOLD_WORDS.search(site.clause_before[-28:]))
    if num.percent:
        if threshold_near or _THRESHOLD_WORDS.search(site.near + " " + site.label):
            return "threshold", False
        if after[:1] == ["of"] and _OTHER_BASE.search(" ".join(after[1:5])):
            return _NO_CLAIM  # "26% of all contact failures": a share of something else
        return "rate", True
    if threshold_near or site.header_kind == "threshold":
        return "threshold", False
    if num.word and (num.text.lower() == "one" or site.noun_at < 0
                     or re.search(r"\b(?:no|every|each|any|only)\s*$", site.before)):
        return _NO_CLAIM
    return None


def _whole_or_part(site: _Site) -> Verdict | None:
    """"of 2,000" is the total; "37 of 2,000 contacts have no email": the part, as the rest of the sentence says."""
    num, after, low = site.num, site.after_words, site.low
    of_m = _OF_BEFORE.search(site.before)
    if of_m and of_m.group().strip() == "/" and site.noun_at != 0 and site.header_kind is None:
        of_m = None  # "8/10" is a score unless a count noun follows ("37/2,000 rows")
    if of_m and (site.noun_at == 0 or not after or site.header_kind is not None):
        return ("threshold", False) if _THRESHOLD_WORDS.search(site.near) else ("total", True)
    if ((after[:1] == ["of"] or after[:2] == ["out", "of"]) and site.header_kind is None
            and re.match(r"\s*(?:out\s+)?of\s+(?:the\s+|all\s+)?(?:~|about\s+)?\d", low[num.end:num.end + 24])):
        rest = re.sub(r"\([^)]*\)", " ", low[num.end:num.end + 140])
        rest = re.split(r"[.;:!?\n]|,\s|\s(?:but|while|whereas)\s", rest, maxsplit=1)[0]
        if _THRESHOLD_WORDS.search(rest):
            return "threshold", False
        if _COMPLEMENT.search(rest):
            return ("generic" if _FAIL_WORDS.search(rest) else "passing"), True
        return ("failing" if _FAIL_WORDS.search(rest) else "generic"), True
    return None


def _under_header(site: _Site) -> Verdict | None:
    """A number in a table cell under a mapped header is what the header says (or what its noun says)."""
    kind = site.header_kind
    if kind is None or kind in ("prose", "name"):
        return None
    if site.noun_at >= 0 and site.head not in _ROW_NOUNS and _DUP_WORDS.search(site.phrase):
        return "dup", True
    if site.noun_at >= 0 and _EXCESS_WORDS.search(site.phrase):
        return "excess", True
    return ("failing_strict" if kind == "failing" else kind), True


def _worded(site: _Site) -> Verdict | None:
    """A number with a count noun, a label, a failure verb, after the name or after "returned": what kind."""
    after, label, item = site.after_words, site.label, site.item
    head = site.head
    if site.noun_at >= 0:
        source = site.phrase
    elif label and (_COUNT_NOUN_RE.search(label) or _FAIL_WORDS.search(label) or _TOTAL_WORDS.search(label)
                    or "total" in label or _EXCESS_WORDS.search(label) or _DUP_WORDS.search(label)
                    or any(n in label.split() for n in item.nouns)):
        if re.search(r"\btotal\b", label) and not _FAIL_WORDS.search(label):
            return "total", True
        source = label
        head = next((w for w in _WORD.findall(label) if w in COUNT_NOUNS or w in item.nouns), "")
    elif after and _FAIL_WORDS.search(" ".join(after[:3])) and not site.num.word:
        source = " ".join(after[:4])
    else:
        return _unworded(site)
    if site.num.word and site.num.text.lower() == "no":
        # "no rows with `isbn` failed": the rest of the clause says what kind (the tokenizer saw a failure word)
        source += " " + re.split(r"[.;:!?]", site.low[site.num.end:site.num.end + 80], maxsplit=1)[0]
    if _THRESHOLD_WORDS.search(site.near if source is site.phrase else source):
        return "threshold", False
    return _kind_of(site, source, head), True


def _unworded(site: _Site) -> Verdict:
    """A number with no noun or label: a total when "checked", any fact right after the name or "returned"."""
    after, num = site.after_words, site.num
    if after and after[0] in ("checked", "scanned", "examined", "evaluated", "tested", "inspected"):
        return "total", True
    if any(0 <= num.start - e <= 30 and _AFTER_NAME.fullmatch(site.masked[e - 1:num.start]) for e in site.names_at):
        return "generic", True  # "contacts.email.pattern (8)", "won_deals_without_amount: 6", "X is 25"
    if re.search(r"\b(?:returned|returns|returning|counted|counts|reported|reports|found)\s*$", site.before) and (
            not after or site.noun_at >= 0):
        return "generic", True  # "the query returned 6"
    return _NO_CLAIM


def _kind_of(site: _Site, source: str, head: str) -> str:
    """What kind of count the words ``source`` (around a count noun ``head``) describe."""
    if _REMOVE_BEFORE.search(site.clause_before):
        return "excess"
    if head not in _ROW_NOUNS and _DUP_WORDS.search(source):
        return "dup"
    if _EXCESS_WORDS.search(source):
        return "excess"
    if site.item.f.check == "freshness" and head in _ROW_NOUNS:
        # a freshness check counts no failing rows; the only rows it counts are the rows it looked at
        return "failing_strict" if _FAIL_WORDS.search(source) else "total"
    if _COMPLEMENT.search(source):
        return "generic"
    if _TOTAL_WORDS.search(source):
        return "total"
    if _FAIL_WORDS.search(source):
        # "3 rows failed" counts rows: not the distinct duplicated values, and not of a check without failing rows
        return "failing_strict" if head in _ROW_NOUNS and site.item.f.check != "custom_sql" else "failing"
    return "generic"


_RULES = (_duration, _group_rows, _not_a_count, _not_this_finding, _percent_or_threshold, _whole_or_part, _under_header,
          _worded)
