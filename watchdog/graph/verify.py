"""Check the numbers and statuses a Markdown QA report states against the findings it was written from.

``verify_fn(report_markdown, findings) -> Verification`` is a pure, deterministic function (``re`` only,
a few milliseconds per report). It prefers false negatives: a number is bad only when it is clearly
attributed to one finding's count or rate and matches none of that finding's facts. Ambiguous numbers
are left alone, so a correct report written naturally passes.

**Reading the report.** The Markdown is read as headings (ATX and setext), paragraphs (split into
sentences), list items (with continuation lines and nesting), block quotes and GFM tables. Fenced
code blocks and HTML comments are dropped; Markdown escapes (``not\\_null``), emphasis, HTML tags and
link targets are removed; inline code keeps its text for names but never yields numbers.

**Where the report speaks of a finding.**

- *Named*: the finding's name, any case, with or without backticks or escapes
  (``contacts.email.not_null``, ``contacts\\.email\\.not\\_null``).
- *Loosely named*: the finding's table, its column(s) and a word for its check, e.g. "null, missing,
  empty, present" (not_null), "duplicate, unique, repeated" (unique), "orphan, foreign key, does not
  exist" (foreign_key), "pattern, format, malformed, invalid" (pattern), "accepted, allowed, unexpected
  values" (accepted_values), "range, negative, outside" (range), "fresh, stale, old, newest, recent"
  (freshness), "row count, number of rows, has N rows" (row_count); a ``custom_sql`` check by its
  name or the name's words ("won deals without amount"). Column-level matches win over table-level
  ones; more than one match is ambiguous.
- *Context*: a heading naming one finding covers its section (until a heading of the same or a
  higher level); a list item naming one finding covers its sentences and nested items; a paragraph
  sentence naming one finding covers the paragraph's later sentences; a bold line or a line ending in
  ":" that names one finding covers the list or table right after it; a two-column table under a
  finding's heading is read as "key: value" lines. A finding named in the sentence itself always wins
  over context; a sentence that also loosely names another finding of the same level is ambiguous.
- *Several findings in one sentence*: the sentence is cut into clauses (at ``;``, ``:``, ``, ``, dashes,
  "and/but/while/or", never inside parentheses); a clause naming one finding is checked for it; in a
  clause naming several, a number belongs to the name it follows; a clause that only lists names
  ("A and B fail with 37 and 19 rows") makes what follows ambiguous; a clause naming none may name one
  loosely.
- *Table rows*: the finding named in the row's first name-bearing cell (or loosely by the row); a row
  naming a database table (``| Album | 6 | 347 | ✅ |``) is checked against that table's row count,
  its number of checks and the statuses of its checks.

**Numbers** (:mod:`watchdog.graph.numbers`): integers with thousands separators, decimals,
percentages, ``k``/``M``/``million``, durations (``45 days``, ``45d 2h``, ``3,895,200 s``), small
number words ("three", "twenty-one", "a dozen"; "no nulls" = 0), each with its approximation
(about/around/~/≈/roughly/nearly/almost; over/more than/at least/>; under/less than/fewer than/at
most/<). Never claims: dates, times, years (1900-2100 written bare, unless they match a fact),
identifiers and numbers inside names or code, money, ``#12``, versions, ranges ``2-3``, list and
heading numbering (``1.``, ``2.1``), durations except for freshness, "one", ratios ("1 in 50").

**Which numbers are claims.** In a unit attributed to one finding, a number is a claim when:

- it is a percentage → the rate (unless it is a threshold, "5% tolerance", or a share of something
  else, "26% of all failures");
- it is followed, after at most two adjectives, by a count noun (rows, records, values, entries, nulls,
  duplicates, orphans, violations, failures, copies, the table's or the column's noun), or by a verb of
  failure ("37 lack an email", "37 are null");
- it follows a label ("Failing rows: 37", "Total: 2,000", "Distinct duplicated values: 8"), the name
  itself ("contacts.email.pattern (8)", "Genre.row_count is 25") or "returned/found/reports";
- it follows "of/out of/across/all" ("37 of 2,000 rows": 2,000 is the total; 37 is what the rest of
  the sentence says it is);
- it sits in a table cell under a mapped header: Failing/Failures/Violations/Nulls/Missing → failing;
  Total/Rows checked/Scanned → total; Rate/%/Percent/Share → rate (a bare 0.0185 is a fraction, 1.85
  percent points); Observed/Value/Rows/Count → any fact; Distinct/Duplicate values/Groups →
  duplicate_values; Excess/Extra → excess_rows; Status/Result → status; Threshold/Tolerance/Limit/
  Allowed/Expected → never flagged; #/Priority/Severity → ignored; other headers are read as prose.

Numbers are left alone when: the words around them are about a threshold (tolerance, limit, allowed,
expected, minimum, maximum, target, average, benchmark, ...); about a change (up/down/increase/
previous/last week/compared/twice); an aggregate (overall, combined, across checks, each); one group,
value or example (sample, e.g., such as, the worst group, one address); another table (the nearest
table named before the number is not the finding's); a quoted or code value in the same clause
("`x@y` appears in 3 rows"); a count noun of another check type ("nulls" said of a ``unique`` check);
distinct values of a non-``unique`` check ("4 distinct company ids"); sample rows (tables whose header
is the database's column names); the finding's own description when quoted.

**What kind of count.** "distinct/different … duplicated/repeated values", "groups" →
``details.duplicate_values``; "excess/extra/redundant/beyond the first", "would remove N" →
``details.excess_rows``; failure words (failing, null, missing, invalid, orphaned, duplicate, ...) →
failing (also accepts the duplicate figures and ``max_count``); "of N", "total:", "checked/scanned" →
total (or ``observed``); complements ("non-null", "valid", "passing", "remaining") and plain "rows" →
any fact.

**Consistent.** A claimed number is consistent when it equals one of the facts its kind allows —
``failing``, ``total``, ``observed``, ``total - failing``, ``details.duplicate_values``,
``details.excess_rows``, ``max_count``, ``min``, ``max``, the size of an accepted-values list, and
for ``row_count`` the distance to a bound — within the precision written: ``1.2k`` = 1,200 ± 50;
round numbers of 1,000 or more may be rounded (``2,400`` ± 50, at most 5%); "about/~/roughly/nearly/
almost N" allows ±10% (at least ±1); "over N" needs at least N, "under N" at most N. A percentage p
written with k decimals is consistent when ``|rate*100 - p| <= 0.5*10^-k`` (rate 0.0308 is "3.08%",
"3.1%", "3%"), within 10% with an approximation word, or when it is ``1 - rate`` (the share that
passes), ``max_rate`` or a duplicate figure over total. A freshness age written as a duration is
consistent within one unit of its smallest part (floor or ceiling; 10% when approximate) of
``observed``, ``max_age`` or ``observed - max_age``; a wrong one is bad only when it is said to be the
age ("N days old", "N days ago", "newest … N days").

**Bad items** (each with ``finding``, ``says``, ``actual`` and a one-sentence ``message`` for the fix
prompt):

1. a count or rate clearly attributed to a finding that matches none of its facts;
2. a status contradicted: a table Status cell (or a cell that is only PASS/FAIL/WARN/ERROR/✅/❌/⚠️)
   that disagrees with the finding (PASS/✅ for fail/warn/error; FAIL for pass or warn; WARN for pass
   or fail; ⚠️/❌ for a pass without failing rows); "<name> passed/is passing/(PASS)/— PASS/✅ <name>"
   for a finding that did not pass, "<name> failed/(FAIL)/(WARN)" for one that passed; a finding
   listed under a heading, lead-in or list ending in ":" like "Passed checks" / "**Passed:**"; a
   database table marked ✅/PASS while one of its checks did not pass;
3. "no issues found", "all checks passed", "every check passed", "everything passed", "the data is
   clean", "nothing failed", "no checks failed" (not negated, conditional, or about "these/other/
   remaining" checks) while a check in scope failed or warned — the scope is the findings or tables
   the sentence names, else the section's table, else the whole report ("nothing failed" and "no
   failures" only count failures and errors);
4. summary counts that disagree with the findings' summary: "8 failed, 2 warned, 10 passed, 0 errors",
   "3 checks failed", "(20 checks)", "8 of 20 checks", "Failed: 8" (failures may include errors or
   warnings; per-table counts are accepted when the sentence names a table; "the other 9 checks" is a
   part and is left alone);
5. a failed or warned finding the report never names, exactly or loosely;
6. a table row or heading naming a check that does not exist: ``table.column.check`` with a known
   check type, or a backticked identifier in the name column of a table that lists real checks.

``Verification.ok`` lists what was checked and matched ("contacts.email.not_null: 37 matches failing
rows"). ``Verification.passed`` is true when nothing is bad; ``to_json_dict()`` returns
``{"passed", "ok", "bad": [{"finding", "says", "actual", "message"}]}``.
"""

from __future__ import annotations

import html
import re
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Any

from pydantic import BaseModel, Field

from watchdog.findings import Finding, FindingsDoc
from watchdog.graph.numbers import (
    MASK,
    Num,
    extract_numbers,
    format_count,
    format_duration,
    format_percent,
    mask_non_numbers,
    parse_duration,
)

__all__ = ["BadItem", "Verification", "verify_fn"]


class BadItem(BaseModel):
    """One thing the report gets wrong."""

    finding: str | None = Field(default=None, description="the finding's name; null for report-level items")
    says: str = Field(description="what the report claims, as written")
    actual: str = Field(description="the true value, as text")
    message: str = Field(description="one sentence for the fix prompt")


class Verification(BaseModel):
    """The result of :func:`verify_fn`."""

    ok: list[str] = Field(default_factory=list)
    bad: list[BadItem] = Field(default_factory=list)

    @property
    def passed(self) -> bool:
        return not self.bad

    def to_json_dict(self) -> dict[str, Any]:
        return {"passed": self.passed, "ok": list(self.ok), "bad": [item.model_dump() for item in self.bad]}


# --------------------------------------------------------------------------------------------------
# Words
# --------------------------------------------------------------------------------------------------

CHECK_TYPES = ("not_null", "unique", "pattern", "accepted_values", "range", "foreign_key", "freshness",
               "row_count", "custom_sql", "row_condition")

_CHECK_WORDS = {
    "not_null": r"not[_ -]?null|non[_ -]?null|nulls?|missing|empty|blank|without|no\s+value|lack\w*|absent|unset|"
                r"present|presence|populated|filled|required|mandatory|completeness|complete|"
                r"not\s+set|not\s+filled|no\s+\w+\s+address",
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

_COUNT_NOUNS = {
    "row", "rows", "record", "records", "entry", "entries", "value", "values", "null", "nulls", "duplicate",
    "duplicates", "orphan", "orphans", "violation", "violations", "failure", "failures", "case", "cases",
    "instance", "instances", "occurrence", "occurrences", "line", "lines", "item", "items", "id", "ids",
    "group", "groups", "reference", "references", "address", "addresses", "email", "emails", "dupes", "copies",
    "copy", "keys", "key",
}
_ROW_NOUNS = {"row", "rows", "record", "records", "entry", "entries", "line", "lines", "item", "items", "case", "cases",
              "instance", "instances", "occurrence", "occurrences"}
_COUNT_NOUN_RE = re.compile(r"\b(?:" + "|".join(sorted(_COUNT_NOUNS)) + r")\b")
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
    r"position|attempt|round|week|day|days|month|year|quarter|batch|run|scan|report|v|rows|records|lines|entries|"
    r"contact|customer|user|book|deal|order|invoice|account)\s*(?:#|no\.)?\s*)$"
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

_STATUS_WORDS = {
    "pass": r"pass|passed|passes|passing|ok|okay|green|success|succeeded|healthy|clean|good|✅|✔️|✔|☑️|🟢",
    "fail": r"fail|failed|fails|failing|failure|✗|✘|❌|🔴|red|broken|critical",
    "warn": r"warn|warning|warnings|warned|⚠️|⚠|🟡|🟠|yellow|amber",
    "error": r"error|errored|erroring|errors|💥|not\s+run|could\s+not\s+run",
}
_STATUS_CELL = {k: re.compile(rf"^(?:{v})$", re.I) for k, v in _STATUS_WORDS.items()}
_STATUS_ANY = re.compile("|".join(rf"(?P<{k}>(?<![\w])(?:{v})(?![\w]))" for k, v in _STATUS_WORDS.items()), re.I)
_EMOJI = {"✅": "pass", "✔️": "pass", "✔": "pass", "☑️": "pass", "🟢": "pass", "❌": "fail", "✗": "fail",
          "✘": "fail", "🔴": "fail", "⚠️": "warn", "⚠": "warn", "🟡": "warn", "🟠": "warn", "💥": "error"}

_NAME_AFTER_STATUS = re.compile(
    r"^[\s`*_\"'”’)\]]*(?:"
    r"(?:\(\s*(?:status\s*:?\s*)?|[:—–-]\s*|,\s*)(?P<mark>pass(?:ed|es|ing)?|ok|fail(?:ed|s|ing|ure)?|warn(?:ed|ing)?|"
    r"error(?:ed)?|✅|❌|⚠️|⚠)(?![\w])"
    r"|(?:\s+check)?\s+(?:(?:has|have|had)\s+|(?:is|was|are|were)\s+(?:now\s+|still\s+|currently\s+)?)?"
    r"(?:also\s+)?(?P<verb>passed|passes|passing|succeeded|failed|fails|failing|warned|warns|warning|errored|"
    r"ok|fine|clean|healthy)\b"
    r"|\s*(?P<emoji>✅|❌|⚠️|⚠))",
    re.I)
_NAME_BEFORE_STATUS = re.compile(r"(?P<emoji>✅|❌|⚠️|⚠|🟢|🔴|🟡)\s*[`*_\s]*$|"
                                 r"\b(?P<label>pass(?:ed)?|fail(?:ed)?|warn(?:ing)?|error)\s*[:—–-]\s*[`*_\s]*$", re.I)
_NEGATION = re.compile(r"\b(?:not|n['’]t|never|no\s+longer|would\s+have|could\s+have|to)\s*$", re.I)
_PASS_HEADING = re.compile(r"(?<![\w])(?:pass(?:ed|ing|es)?|healthy|clean|ok|succeeded|green|✅)(?![\w])", re.I)
_PROBLEM_HEADING = re.compile(
    r"(?<![\w])(?:fail\w*|warn\w*|error\w*|issues?|problems?|attention|not|n['’]t|but|except|❌|⚠️|⚠|"
    r"tolerated|with)(?![\w])", re.I)
_LEAD_IN = re.compile(r"^\W*(?P<label>passed|passing|passes|ok|healthy|clean|green|✅|failed|failing|fails|❌)"
                      r"(?:\s+checks?)?\s*(?:\(\s*\d+\s*\))?\s*[:—–-]", re.I)

_NO_ISSUES = re.compile(
    r"(?P<all>\bno\s+(?:data[- ]quality\s+)?(?:issues|problems|anomalies)\s+(?:(?:were|was|have\s+been|has\s+been)\s+)?"
    r"(?:found|detected|reported|identified|observed|seen)\b"
    r"|\ball\s+(?:\d+\s+|of\s+the\s+|the\s+)?checks\s+(?:have\s+)?(?:passed|pass|succeeded|are\s+(?:passing|green))\b"
    r"|\bevery\s+check\s+(?:has\s+)?(?:passed|passes|succeeded)\b"
    r"|\beverything\s+(?:passed|passes|looks\s+(?:good|clean|fine))\b"
    r"|\b(?:the\s+)?(?:data(?:base)?|dataset)\s+(?:is|looks)\s+(?:clean|healthy|perfect|in\s+good\s+shape)\b"
    r"|\bno\s+(?:data[- ]quality\s+)?(?:issues|problems)\b\s*(?:[.!]|$))"
    r"|(?P<fail>\bno\s+(?:checks?\s+)?(?:failures|failed)\s+(?:(?:were|was)\s+)?(?:found|detected|reported)\b"
    r"|\bnothing\s+failed\b|\bno\s+checks?\s+failed\b|\bzero\s+failures\b|\bno\s+failing\s+checks\b)",
    re.I)
_NO_ISSUES_SKIP = re.compile(
    r"\b(?:if|once|until|unless|whether|when|would|could|should|might|not\s+all|except|but|apart|aside|"
    r"other\s+than|besides|these|those|remaining|other|rest|following|listed|below|above|here|this|that|"
    r"below|previous|last\s+(?:week|run|scan|time)|yesterday|expected|goal|target)\b", re.I)

_SUMMARY_NUM = (r"(?P<n>\d{1,3}(?:,\d{3})*|\d+|zero|no|one|two|three|four|five|six|seven|eight|nine|ten|eleven|"
                r"twelve|thirteen|fourteen|fifteen|sixteen|seventeen|eighteen|nineteen|twenty)")
_SUMMARY_RES = [
    re.compile(rf"(?<![\w.,]){_SUMMARY_NUM}\s+(?P<w>failed|warned|passed|errored|errors?|failures|warnings)"
               r"(?!\s*(?:rows?|records?|values?|with|on|in|for|because|due|to|the|at|and\s+\d+\s+(?:rows|records)))",
               re.I),
    re.compile(rf"(?<![\w.,]){_SUMMARY_NUM}\s+(?:of\s+(?:the\s+)?(?P<m>\d+)\s+)?(?:checks?|tests?)\s+"
               r"(?:have\s+|has\s+)?"
               r"(?:(?:were|are|is|was)\s+)?(?P<w>failed|failing|passed|passing|warned|warning|errored|erroring|"
               r"in\s+error|raised\s+(?:a\s+)?warnings?|could\s+not\s+run)\b", re.I),
    re.compile(rf"(?<![\w.,]){_SUMMARY_NUM}\s+(?P<w>failing|failed|passing|passed|warning|warned|erroring|errored)"
               r"\s+checks?\b", re.I),
    re.compile(rf"(?:\(|\bof\s+(?:the\s+)?|\ball\s+|\bran\s+|\btotal\s+of\s+){_SUMMARY_NUM}\s+(?P<w>checks)\b", re.I),
    re.compile(r"(?<![\w])(?P<w>failed|failures|failing|passed|passing|warned|warnings?|errors?|errored|"
               r"checks(?:\s+run)?|total\s+checks)\s*[:=]\s*(?P<n>\d{1,3}(?:,\d{3})*|\d+)(?![\w.,%]|,\d)", re.I),
]
_SUMMARY_SCOPED = re.compile(r"\b(?:other|remaining|rest\s+of\s+the|these|those|further|additional|another|"
                             r"last|first|previous|more|only|every|each)\s*$", re.I)
_SUMMARY_WORDNUM = {"zero": 0, "no": 0, "one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6, "seven": 7,
                    "eight": 8, "nine": 9, "ten": 10, "eleven": 11, "twelve": 12, "thirteen": 13, "fourteen": 14,
                    "fifteen": 15, "sixteen": 16, "seventeen": 17, "eighteen": 18, "nineteen": 19, "twenty": 20}

_NUMBERISH = re.compile(r"\d|\b(?:no|zero|two|three|four|five|six|seven|eight|nine|ten|eleven|twelve|\w+teen|twenty|"
                        r"thirty|forty|fifty|sixty|seventy|eighty|ninety|dozen|hundred)\b", re.I)
_UNKNOWN_NAME = re.compile(rf"^[A-Za-z_][\w$]*(?:\.[\w$+]+)*\.(?:{'|'.join(CHECK_TYPES)})$")
_UNKNOWN_IN_TEXT = re.compile(rf"(?<![\w.+])[A-Za-z_][\w$]*(?:\.[\w$+]+)*\.(?:{'|'.join(CHECK_TYPES)})(?![\w+]|\.\w)")
_IDENTIFIER = re.compile(r"^[A-Za-z_][\w$]*(?:[.+][\w$]+)*$")

# --------------------------------------------------------------------------------------------------
# Markdown: inline cleaning and blocks
# --------------------------------------------------------------------------------------------------

_INLINE = re.compile(
    r"(?P<esc>\\[!-/:-@\[-`{-~])|(?P<code>`+)|(?P<link>\]\((?:[^()\s]|\([^()\s]*\))*(?:\s+\"[^\"]*\")?\))"
    r"|(?P<tag></?[A-Za-z][\w-]*(?:\s[^<>]*)?/?>)|(?P<ent>&(?:#\d+|#x[0-9A-Fa-f]+|[A-Za-z]+);)"
    r"|(?P<emph>\*+|~~|(?<![A-Za-z0-9\\])_+|_+(?![A-Za-z0-9]))")


@lru_cache(maxsize=4096)
def _clean(raw: str) -> tuple[str, tuple[tuple[int, int], ...]]:
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
class _Block:
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


def _blocks(markdown: str) -> list[_Block]:
    text = _COMMENT.sub(lambda m: "\n" * m.group().count("\n"), markdown.replace("\r\n", "\n").replace("\r", "\n"))
    lines = text.split("\n")
    blocks: list[_Block] = []
    fence: str | None = None
    para: list[str] = []
    item: _Block | None = None
    i = 0

    def flush_para() -> None:
        nonlocal para
        if para:
            blocks.append(_Block("para", i - len(para), " ".join(s.strip() for s in para)))
            para = []

    while i < len(lines):
        line = lines[i]
        while _QUOTE.match(line):
            line = _QUOTE.sub("", line, count=1)
        if fence is not None:
            if re.match(rf"^\s*{re.escape(fence[0])}{{{len(fence)},}}\s*$", line):
                fence = None
            i += 1
            continue
        fm = _FENCE.match(line)
        if fm:
            flush_para()
            item = None
            fence = fm.group(1)
            i += 1
            continue
        if not line.strip():
            flush_para()
            i += 1
            if item is not None and i < len(lines) and lines[i].strip() and not lines[i].startswith((" ", "\t")):
                item = None
            continue
        hm = _HEADING.match(line)
        if hm:
            flush_para()
            item = None
            blocks.append(_Block("heading", i, hm.group(2) or "", len(hm.group(1))))
            i += 1
            continue
        if (para and len(para) == 1 and item is None and re.match(r"^\s{0,3}(?:=+|-{2,})\s*$", line)
                and "|" not in para[0]):
            blocks.append(_Block("heading", i - 1, para[0].strip(), 1 if "=" in line else 2))
            para = []
            i += 1
            continue
        if "|" in line and i + 1 < len(lines) and _TABLE_SEP.match(lines[i + 1]) and "|" in lines[i + 1] + line:
            flush_para()
            item = None
            rows = [_split_row(line)]
            i += 2
            while i < len(lines) and lines[i].strip() and "|" in lines[i]:
                rows.append(_split_row(_QUOTE.sub("", lines[i])))
                i += 1
            blocks.append(_Block("table", i, rows=rows))
            continue
        if _HR.match(line):
            flush_para()
            item = None
            blocks.append(_Block("break", i))
            i += 1
            continue
        im = _ITEM.match(line)
        if im:
            flush_para()
            indent = len(im.group(1).expandtabs(4))
            item = _Block("item", i, im.group(3), indent)
            blocks.append(item)
            i += 1
            continue
        if item is not None and (line.startswith((" ", "\t")) or not para):
            item.text += " " + line.strip()
            i += 1
            continue
        para.append(line)
        i += 1
    flush_para()
    return blocks


def _sentences(text: str) -> list[str]:
    out: list[str] = []
    start = 0
    for m in _SENTENCE_END.finditer(text):
        if _ABBREV.search(text[max(0, m.start() - 8):m.start()]):
            continue
        out.append(text[start:m.start()])
        start = m.end()
    out.append(text[start:])
    return [s for s in (x.strip() for x in out) if s]


_CLAUSE_OR_PAREN = re.compile(r"[()\[\]]|;|:\s|\s[—–]\s|,\s|\s(?:and|but|while|whereas|whilst|or)\s")
_AFTER_STOP = re.compile(r"[.;:!?()\[\]|\n" + MASK + r"]|,\s|\d|\s(?:but|and|or|while|whereas|although|though|because|"
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


# --------------------------------------------------------------------------------------------------
# The findings index
# --------------------------------------------------------------------------------------------------


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
class _F:
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
    _facts: Any = None

    @property
    def facts(self) -> _Facts:
        if self._facts is None:
            self._facts = _Facts.of(self.f)
        return self._facts

    @property
    def status(self) -> str:
        return self.f.status


class _Index:
    def __init__(self, doc: FindingsDoc) -> None:
        self.doc = doc
        self.items: list[_F] = []
        self.by_name: dict[str, _F] = {}
        self.table_res: dict[str, re.Pattern[str]] = {}
        self.nouns_by_table: dict[str, set[str]] = {}
        self._other_nouns: dict[str | None, set[str]] = {}
        self.by_table: dict[str, list[_F]] = {}
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
                cv = _word_variants(c, strip_suffix=True)
                cv = {v for v in cv if v not in table_nouns} or cv
                column_res.append(_words_re(frozenset(cv)))
                nouns |= {v.split()[-1] for v in cv if v.split()[-1] not in ("id", "ids", "at", "on")}
            check_re = _CHECK_RE.get(f.check)
            phrase_re = None
            if f.check == "custom_sql" or not f.table:
                words = [w for w in re.split(r"[_\W]+", f.name.lower()) if w]
                if len(words) >= 2:
                    phrase_re = re.compile(r"(?<![a-z0-9])" + r"[\s_-]+".join(map(re.escape, words)) + r"(?![a-z0-9])")
            level = 2 if columns else (1 if f.table else 0)
            item = _F(f, f.name, table_key, column_res, check_re, phrase_re, nouns, level, set(table_nouns),
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
                                    for sentence in _sentences(" ".join(f.description.split())) if len(sentence) >= 12},
                                   key=len, reverse=True)
        self.column_words = {c.lower() for f in doc.findings for c in (f.columns or ([f.column] if f.column else []))}
        self.table_words = {f.table.lower() for f in doc.findings if f.table}
        self._explicit_cache: dict[str, list[tuple[int, int, _F]]] = {}
        self._tables_cache: dict[str, set[str]] = {}
        self._loose_cache: dict[tuple[str, frozenset[str], bool], list[_F]] = {}
        self.phrase_items = [i for i in self.items if i.phrase_re is not None]

    def names_loosely(self, item: _F, low: str, ctx_tables: frozenset[str] = frozenset()) -> bool:
        """Whether ``low`` names ``item`` by table, column(s) and a word for its check (or its name as words)."""
        if item.phrase_re is not None:
            return bool(item.phrase_re.search(low))
        if item.table_key is None or item.check_re is None:
            return False
        return bool((item.table_key in ctx_tables or self.table_res[item.table_key].search(low))
                    and item.check_re.search(low)
                    and all(r.search(low) for r in item.column_res))

    def last_table(self, text: str, item: _F) -> str | None:
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

    def other_table_nouns(self, item: _F) -> set[str]:
        hit = self._other_nouns.get(item.table_key)
        if hit is None:
            hit = {n for t, ns in self.nouns_by_table.items() if t != item.table_key for n in ns}
            self._other_nouns[item.table_key] = hit
        return hit

    def explicit(self, text: str) -> list[tuple[int, int, _F]]:
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

    def loose(self, low: str, ctx_tables: frozenset[str] = frozenset(), *, strict: bool = True) -> list[_F]:
        """Findings named loosely (table + column + a word for the check). ``strict`` (for attributing
        numbers) asks more of table-level checks than plain "rows"; coverage uses ``strict=False``."""
        key = (low, ctx_tables, strict)
        hit = self._loose_cache.get(key)
        if hit is None:
            hit = self._loose(low, ctx_tables, strict)
            self._loose_cache[key] = hit
        return hit

    def _loose(self, low: str, ctx_tables: frozenset[str], strict: bool) -> list[_F]:
        found: list[_F] = []
        tables = self.tables_in(low) | ctx_tables
        for t in tables:
            for item in self.by_table.get(t, ()):
                check_re = (_STRICT_CHECK_RE.get(item.f.check) if strict else None) or item.check_re
                if check_re is None or not check_re.search(low):
                    continue
                if all(r.search(low) for r in item.column_res):
                    found.append(item)
        for item in self.phrase_items:
            if item.phrase_re is not None and item.phrase_re.search(low):
                found.append(item)
        if any(i.level == 2 for i in found):
            found = [i for i in found if i.level != 1]
        return found


# --------------------------------------------------------------------------------------------------
# Facts
# --------------------------------------------------------------------------------------------------


def _num(value: Any) -> float | None:
    if isinstance(value, bool) or value is None:
        return None
    if isinstance(value, (int, float)):
        return float(value)
    try:
        return float(str(value))
    except ValueError:
        return None


@dataclass
class _Facts:
    failing: float | None
    total: float | None
    observed: float | None
    dup: float | None
    excess: float | None
    rate: float | None
    params: list[float]
    max_rate: float | None
    max_age: float | None
    derived: list[float]

    @classmethod
    def of(cls, f: Finding) -> _Facts:
        p = f.params or {}
        params = [v for v in (_num(p.get("max_count")), _num(p.get("min")), _num(p.get("max"))) if v is not None]
        if isinstance(p.get("values"), list):
            params.append(float(len(p["values"])))
        max_age = parse_duration(p["max_age"]) if p.get("max_age") is not None else None
        derived: list[float] = []
        failing, total, observed = _num(f.failing), _num(f.total), _num(f.observed)
        if failing is not None and total is not None:
            derived.append(total - failing)
        if f.check == "row_count" and observed is not None:
            for bound in (_num(p.get("min")), _num(p.get("max"))):
                if bound is not None:
                    derived.append(abs(observed - bound))
        rate = f.rate
        if rate is None and failing is not None and total:
            rate = failing / total
        return cls(failing, total, observed, _num(f.details.get("duplicate_values")),
                   _num(f.details.get("excess_rows")), rate, params, _num(p.get("max_rate")), max_age, derived)

    def values(self, kind: str) -> list[float]:
        counts = [v for v in (self.failing, self.total, self.observed, self.dup, self.excess) if v is not None]
        if kind == "failing_strict":
            return [self.failing] if self.failing is not None else self.values("generic")
        if kind == "failing":
            if self.failing is None:
                return self.values("generic")
            out = [v for v in (self.failing, self.dup, self.excess) if v is not None]
            out += [v for v in (_first(self.params),) if v is not None]
            if self.total is not None and self.total == self.failing:
                out.append(self.total)
            return out
        if kind == "dup":
            return [self.dup] if self.dup is not None else self.values("failing")
        if kind == "excess":
            return [self.excess] if self.excess is not None else self.values("failing")
        if kind == "total":
            out = [v for v in (self.total, self.observed) if v is not None]
            if not out:
                return []
            if self.failing is not None and self.failing == self.total:
                out.append(self.failing)
            return out
        if kind == "generic":
            return counts + self.params + self.derived
        if kind == "rate":
            if self.rate is None:
                return []
            out = [self.rate * 100, (1 - self.rate) * 100]
            if self.max_rate is not None:
                out.append(self.max_rate * 100)
            for v in (self.dup, self.excess):
                if v is not None and self.total:
                    out.append(v / self.total * 100)
            return out
        if kind == "age":
            out = [v for v in (self.observed, self.max_age) if v is not None]
            if self.observed is not None and self.max_age is not None:
                out.append(self.observed - self.max_age)
            return out
        return []


def _first(values: list[float]) -> float | None:
    return values[0] if values else None


def _describe(item: _F) -> str:
    """The finding's facts in words, for messages (no parentheses: they go inside one)."""
    f = item.f
    if f.status == "error":
        return f"it could not run: {(f.error or 'error').strip()[:160]}"
    if f.check == "custom_sql":
        return f"the query returned {format_count(f.failing)}"
    if f.check == "row_count":
        bounds = []
        if f.params.get("min") is not None:
            bounds.append(f"at least {format_count(_num(f.params['min']))}")
        if f.params.get("max") is not None:
            bounds.append(f"at most {format_count(_num(f.params['max']))}")
        return f"{format_count(f.observed)} rows, expected {' and '.join(bounds) or 'at least 1'}"
    if f.check == "freshness":
        if f.observed is None:
            return "no value at all"
        allowed = f", allowed {f.params['max_age']}" if f.params.get("max_age") is not None else ""
        return f"the newest value is {format_duration(f.observed)} old, {format_count(f.observed)} s{allowed}"
    text = _counts(item)
    if f.details.get("duplicate_values") is not None:
        text += (f", {format_count(f.details['duplicate_values'])} distinct duplicated values, "
                 f"{format_count(f.details.get('excess_rows'))} rows beyond the first of each")
    return text


def _counts(item: _F) -> str:
    f = item.f
    if f.total is None:
        return f"{format_count(f.failing)} failing"
    return f"{format_count(f.failing)} failing of {format_count(f.total)} rows, {format_percent(f.rate)}"


def _actual(item: _F, kind: str) -> str:
    f = item.f
    facts = item.facts
    if kind in ("failing", "failing_strict"):
        return format_count(f.failing if f.failing is not None else f.observed)
    if kind == "dup":
        return format_count(facts.dup if facts.dup is not None else f.failing)
    if kind == "excess":
        return format_count(facts.excess if facts.excess is not None else f.failing)
    if kind == "total":
        return format_count(f.total if f.total is not None else f.observed)
    if kind == "rate":
        return format_percent(facts.rate)
    if kind == "age":
        return format_duration(f.observed)
    # generic: the count a reader most likely means
    if f.failing is not None:
        return format_count(f.failing)
    return format_count(f.observed if f.observed is not None else f.total)


# --------------------------------------------------------------------------------------------------
# The checker
# --------------------------------------------------------------------------------------------------

_KIND_WORDS = {"failing": "failing rows", "failing_strict": "failing rows", "dup": "distinct duplicated values",
               "excess": "rows beyond the first of each duplicate group", "total": "rows looked at",
               "generic": "rows", "rate": "a rate", "age": "an age"}
_OK_WORDS = {"failing": "failing", "failing_strict": "failing", "dup": "duplicate_values", "excess": "excess_rows",
             "total": "total", "generic": "a fact", "rate": "the rate", "age": "the age", "threshold": "a threshold"}
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
    raw = m.group("num") + (f".{m.group('dec')}" if m.group("dec") else "")
    approx_text = (m.group("approx") or "").strip()
    approx = {"": None, "~": "about", "≈": "about", "about": "about", "<": "under", ">": "over"}[approx_text]
    return Num(m.start("num"), m.end(), m.group().strip(), float(raw.replace(",", "")), len(m.group("dec") or ""),
               percent=bool(m.group("pct")), approx=approx, approx_text=approx_text)


def _cell_kind(header_kind: str, m: re.Match[str], item: _F) -> str:
    if m.group("pct"):
        return "rate"
    kind = _CELL_KINDS[header_kind]
    if kind == "failing_strict" and item.f.failing is None:
        return "generic"
    return kind


@dataclass
class _Ctx:
    finding: _F | None = None
    tables: frozenset[str] = frozenset()
    status_class: str | None = None  # "pass" when the section lists passing checks


class _Checker:
    def __init__(self, idx: _Index) -> None:
        self.idx = idx
        self.ok: list[str] = []
        self.bad: list[BadItem] = []
        self.mentioned: set[str] = set()
        # lower-case unit texts with their context tables: loose mentions of findings not named exactly
        self.coverage_texts: list[tuple[str, frozenset[str]]] = []
        self._seen_bad: set[tuple[str | None, str, str]] = set()
        self._seen_ok: set[str] = set()

    # ---- results -------------------------------------------------------------------------------
    def add_ok(self, text: str) -> None:
        if text not in self._seen_ok:
            self._seen_ok.add(text)
            self.ok.append(text)

    def add_bad(self, finding: str | None, says: str, actual: str, message: str) -> None:
        key = (finding, says, actual)
        if key not in self._seen_bad:
            self._seen_bad.add(key)
            self.bad.append(BadItem(finding=finding, says=says, actual=actual, message=message))

    # ---- resolution ----------------------------------------------------------------------------
    def resolve(self, text: str, ctx: _Ctx) -> tuple[_F | None, list[tuple[int, int, _F]], bool]:
        """The one finding a text is about (or None), its explicit mentions, and whether it is ambiguous."""
        explicit = self.idx.explicit(text)
        for _s, _e, item in explicit:
            self.mentioned.add(item.name)
        low = text.lower()
        self.coverage_texts.append((low, ctx.tables))
        distinct = {id(i): i for _s, _e, i in explicit}
        if len(distinct) == 1:
            (only,) = distinct.values()
            return only, explicit, False
        if len(distinct) > 1:
            return None, explicit, True
        loose = self.idx.loose(low, ctx.tables)
        if ctx.finding is not None:
            other = [i for i in self.idx.loose(low) if i is not ctx.finding and i.level >= ctx.finding.level]
            if other and ctx.finding not in self.idx.loose(low):
                return None, explicit, True
            return ctx.finding, explicit, False
        if len(loose) == 1:
            return loose[0], explicit, False
        return None, explicit, len(loose) > 1

    def heading_ctx(self, text: str, parent: _Ctx) -> _Ctx:
        explicit = {id(i): i for _s, _e, i in self.idx.explicit(text)}
        low = text.lower()
        tables = self.idx.tables_in(low)
        if len(explicit) == 1:
            (only,) = explicit.values()
            return _Ctx(only, frozenset({only.table_key} if only.table_key else ()), None)
        if explicit:
            return _Ctx(None, frozenset(), None)
        loose = self.idx.loose(low, parent.tables)
        if len(loose) == 1:
            return _Ctx(loose[0], frozenset({loose[0].table_key} if loose[0].table_key else ()), None)
        status = None
        if _PASS_HEADING.search(text) and not _PROBLEM_HEADING.search(text):
            status = "pass"
        if len(tables) == 1 and not loose:
            return _Ctx(None, frozenset(tables), status)
        if loose or tables:
            return _Ctx(None, frozenset(), status)
        return _Ctx(parent.finding, parent.tables, status or parent.status_class)

    # ---- units ---------------------------------------------------------------------------------
    def sentence(self, raw_text: str, ctx: _Ctx, *,
                 cleaned: tuple[str, tuple[tuple[int, int], ...]] | None = None) -> _F | None:
        text, code = cleaned if cleaned is not None else _clean(raw_text)
        item, explicit, ambiguous = self.resolve(text, ctx)
        self.status_claims(text, explicit, ctx)
        self.no_issues(text, item, ctx, explicit)
        if item is None and not ambiguous and ctx.finding is None:
            self.summary_counts(text, code)
        if ambiguous:
            self.clauses(text, code, explicit, ctx)
            return None
        if item is not None:
            self.numbers(text, code, explicit, item)
        return item

    def clauses(self, text: str, code: tuple[tuple[int, int], ...], explicit: list[tuple[int, int, _F]],
                ctx: _Ctx) -> None:
        """A sentence about several findings: check clause by clause, numbers after the name they follow."""
        bounds = [0]
        depth = 0
        for m in _CLAUSE_OR_PAREN.finditer(text):
            tok = m.group()
            if tok in "([":
                depth += 1
            elif tok in ")]":
                depth = max(0, depth - 1)
            elif depth == 0:
                bounds.append(m.end())
        bounds.append(len(text))
        tables = frozenset(self.idx.tables_in(text.lower())) | ctx.tables
        listing = False  # the previous clause only listed names: what follows is "respectively"
        for a, b in zip(bounds, bounds[1:]):
            seg = text[a:b]
            inside = [(s - a, e - a, i) for s, e, i in explicit if s >= a and e <= b]
            sub_code = tuple((max(s - a, 0), min(e, b) - a) for s, e in code if e > a and s < b)
            distinct = {id(i): i for _s, _e, i in inside}
            rest = self._without_names(seg, inside)
            if distinct and not re.search(r"[^\W\d_]{3,}|\d", re.sub(r"\b(?:and|or|the|checks?|as|well)\b", "",
                                                                         rest, flags=re.I)):
                listing = True
                continue
            if listing and distinct:
                continue
            if len(distinct) == 1:
                (item,) = distinct.values()
                self.numbers(seg, sub_code, inside, item)
            elif len(distinct) > 1:
                for k, (s, e, item) in enumerate(inside):
                    end = inside[k + 1][0] if k + 1 < len(inside) else len(seg)
                    if inside[k + 1:] and inside[k + 1][2] is item:
                        continue
                    piece = seg[s:end]
                    pc = tuple((max(cs - s, 0), min(ce, end) - s) for cs, ce in sub_code if ce > s and cs < end)
                    self.numbers(piece, pc, [(0, e - s, item)], item)
            elif not listing:
                loose = self.idx.loose(seg.lower(), tables)
                if len(loose) == 1:
                    self.numbers(seg, sub_code, [], loose[0])

    # ---- numbers -------------------------------------------------------------------------------
    def masked(self, text: str, code: tuple[tuple[int, int], ...], explicit: list[tuple[int, int, _F]]) -> str:
        chars = list(mask_non_numbers(text))
        for s, e in code:
            chars[s:e] = MASK * (e - s)
        for s, e, _i in explicit:
            chars[s:e] = MASK * (e - s)
        for m in _UNKNOWN_IN_TEXT.finditer(text):
            chars[m.start():m.end()] = MASK * (m.end() - m.start())
        masked = "".join(chars)
        for d in self.idx.descriptions:
            pos = masked.find(d)
            while pos >= 0:
                masked = masked[:pos] + MASK * len(d) + masked[pos + len(d):]
                pos = masked.find(d, pos + len(d))
        return masked

    def numbers(self, text: str, code: tuple[tuple[int, int], ...], explicit: list[tuple[int, int, _F]], item: _F,
                *, header_kind: str | None = None, header: str = "") -> None:
        if not _NUMBERISH.search(text):
            return
        masked = self.masked(text, code, explicit)
        literals = [(s, e) for s, e in code if not self.is_name_literal(text[s:e])]
        literals += [(m.start(), m.end()) for m in _QUOTED.finditer(text)]
        names_at = [e for _s, e, _i in explicit]
        for num in extract_numbers(masked, masked=True):
            kind, strong = self.claim(masked, num, item, header_kind, literals, names_at, plain=text)
            if kind is None:
                continue
            self.compare(num, kind, strong, item, masked, header)

    def is_name_literal(self, literal: str) -> bool:
        low = literal.strip().lower()
        return (low in self.idx.by_name or low in self.idx.table_words or low in self.idx.column_words
                or low.split(".")[-1] in self.idx.column_words)

    def claim(self, masked: str, num: Num, item: _F, header_kind: str | None,
              literals: list[tuple[int, int]] = (), names_at: list[int] = (),  # type: ignore[assignment]
              plain: str = "") -> tuple[str | None, bool]:
        """What ``num`` claims about ``item``: (kind, strong) or (None, False) when it claims nothing."""
        low = masked.lower()
        before_full = low[:num.start]
        if num.approx_text:
            cut = before_full.rstrip()
            if cut.endswith(num.approx_text):
                before_full = cut[: len(cut) - len(num.approx_text)]
        before = before_full[-60:]
        after_seg = _AFTER_STOP.split(low[num.end:num.end + 80], maxsplit=1)[0]
        after_words = _WORD.findall(after_seg)[:7]
        f = item.f
        clause_start = max(before_full.rfind(ch) for ch in (".", ";", "!", "?", ",", "—", "(")) + 1
        clause_before = before_full[clause_start:]
        if num.is_duration:
            if f.check != "freshness":
                return None, False
            window = before[-40:] + " " + " ".join(after_words[:4])
            return "age", bool(_AGE_WORDS.search(window))
        if _SKIP_BEFORE.search(before) and not num.percent:
            return None, False
        if after_words and after_words[0] in _SKIP_AFTER_WORDS:
            return None, False
        if any(s >= clause_start and e <= num.start for s, e in literals):
            return None, False  # about a value ("`x@y` appears in 3 rows"), not the finding
        if _RELATIVE.search(clause_before[-30:] + " " + " ".join(after_words[:3])) or _AGGREGATE.search(
                clause_before + " " + " ".join(after_words)):
            return None, False
        # a noun after the number (at most two adjectives before it)
        noun_at = -1
        for k, w in enumerate(after_words[:3]):
            if w in _COUNT_NOUNS or w in item.nouns:
                noun_at = k
                break
        adjectives = after_words[:noun_at] if noun_at > 0 else []
        if any(_NOT_A_COUNT_ADJ.fullmatch(w) for w in adjectives):
            return None, False
        if re.search(r"(?:\d|\bone)\s+in\s+(?:every\s+|each\s+)?$", before) or (after_words[:1] == ["in"] and re.match(
                r"\s*in\s+\d", low[num.end:num.end + 8])):
            return None, False  # a ratio: "1 in 50 contacts"
        if noun_at >= 0:
            head_noun = after_words[noun_at]
            if (item.table_key and head_noun in self.idx.other_table_nouns(item)
                    and head_noun not in item.own_table_nouns):
                return None, False  # "the companies table has 200 rows" said next to a contacts check
            if (f.check != "unique" and head_noun in item.column_nouns and head_noun not in _ROW_NOUNS
                    and re.search(r"\b(?:distinct|different|unique|separate)\b", " ".join(adjectives))):
                return None, False  # distinct values of a non-unique check are not among the facts
        sentence_before = before_full[max(before_full.rfind(". "), before_full.rfind("\n")) + 1:]
        if _PARTIAL.search(sentence_before) or _SHARE_OF_OTHERS.search(sentence_before):
            return None, False  # about one group, value or example, or a share of all failures
        if item.table_key:
            plain_before = (plain or masked)[len(before_full) - len(sentence_before):num.start].lower()
            last = self.idx.last_table(plain_before, item)
            if last is not None and last != item.table_key:
                return None, False  # the nearest table named before the number is another table
        phrase = " ".join(after_words[: (noun_at + 1 + 4) if noun_at >= 0 else 4])
        near = " ".join(after_words[: noun_at + 2] if noun_at >= 0 else after_words[:2])
        for w in after_words[: noun_at + 1 if noun_at >= 0 else 3]:
            owners = _TYPE_WORDS.get(w)
            if owners and f.check not in owners and f.check not in ("custom_sql", "row_condition"):
                return None, False
        label = ""
        lm = _LABEL.search(before)
        if lm:
            label = re.split(r"[.;,(]\s*", lm.group(1))[-1].strip()
        threshold_near = bool(_THRESHOLD_WORDS.search(clause_before[-28:]))
        if num.percent:
            if threshold_near or _THRESHOLD_WORDS.search(near + " " + label):
                return "threshold", False
            if after_words[:1] == ["of"] and _OTHER_BASE.search(" ".join(after_words[1:5])):
                return None, False  # "26% of all contact failures": a share of something else
            return "rate", True
        if threshold_near or header_kind == "threshold":
            return "threshold", False
        if num.word:
            if num.text.lower() == "one":
                return None, False
            if noun_at < 0 or re.search(r"\b(?:no|every|each|any|only)\s*$", before):
                return None, False
        head = after_words[noun_at] if noun_at >= 0 else ""
        of_m = _OF_BEFORE.search(before)
        if of_m and of_m.group().strip() == "/" and noun_at != 0 and header_kind is None:
            of_m = None  # "8/10" is a score unless a count noun follows ("37/2,000 rows")
        if of_m and (noun_at == 0 or not after_words or header_kind is not None):
            if _THRESHOLD_WORDS.search(near):
                return "threshold", False
            return "total", True
        if (after_words[:1] == ["of"] and not num.percent and header_kind is None
                and re.match(r"\s*(?:out\s+)?of\s+(?:the\s+|all\s+)?(?:~|about\s+)?\d", low[num.end:num.end + 24])):
            # "37 of 2,000 contacts (1.85%) have no email": the part; what it is comes after the whole
            rest = re.sub(r"\([^)]*\)", " ", low[num.end:num.end + 140])
            rest = re.split(r"[.;:!?\n]|,\s|\s(?:but|while|whereas)\s", rest, maxsplit=1)[0]
            if _THRESHOLD_WORDS.search(rest):
                return "threshold", False
            if _COMPLEMENT.search(rest):
                return "generic", True
            return ("failing" if _FAIL_WORDS.search(rest) else "generic"), True
        if header_kind is not None and header_kind not in ("prose", "name"):
            if noun_at >= 0 and head not in _ROW_NOUNS and _DUP_WORDS.search(phrase):
                return "dup", True
            if noun_at >= 0 and _EXCESS_WORDS.search(phrase):
                return "excess", True
            if header_kind == "failing":
                return ("failing_strict" if f.failing is not None else "generic"), True
            return header_kind, True
        source = None
        if noun_at >= 0:
            source = phrase
        elif label and (_COUNT_NOUN_RE.search(label) or _FAIL_WORDS.search(label) or "total" in label
                        or _TOTAL_WORDS.search(label) or _EXCESS_WORDS.search(label) or _DUP_WORDS.search(label)
                        or any(n in label.split() for n in item.nouns)):
            source = label
            words = _WORD.findall(label)
            head = next((w for w in words if w in _COUNT_NOUNS or w in item.nouns), "")
            if re.search(r"\btotal\b", label) and not _FAIL_WORDS.search(label):
                return "total", True
        elif after_words and _FAIL_WORDS.search(" ".join(after_words[:3])) and not num.word:
            source = " ".join(after_words[:4])
        elif after_words and after_words[0] in ("checked", "scanned", "examined", "evaluated", "tested", "inspected"):
            return "total", True
        elif names_at and any(0 <= num.start - e <= 30 for e in names_at) and _AFTER_NAME.search(
                masked[max(0, num.start - 30):num.start]):
            return "generic", True  # "contacts.email.pattern (8)", "won_deals_without_amount: 6", "X is 25"
        elif re.search(r"\b(?:returned|returns|returning|counted|counts|reported|reports|found)\s*$", before) and (
                not after_words or noun_at >= 0):
            return "generic", True  # "the query returned 6"
        if source is None:
            return None, False
        if _THRESHOLD_WORDS.search(near if source is phrase else source):
            return "threshold", False
        if _REMOVE_BEFORE.search(clause_before):
            return "excess", True
        if head not in _ROW_NOUNS and _DUP_WORDS.search(source):
            return "dup", True
        if _EXCESS_WORDS.search(source):
            return "excess", True
        if _COMPLEMENT.search(source):
            return "generic", True
        if _TOTAL_WORDS.search(source):
            return "total", True
        if _FAIL_WORDS.search(source):
            return "failing", True
        return "generic", True
    def compare(self, num: Num, kind: str, strong: bool, item: _F, masked: str, header: str) -> None:
        facts = item.facts
        if kind == "threshold":
            values = facts.values("generic") + ([facts.max_rate * 100] if facts.max_rate is not None else [])
            if num.percent:
                values = [facts.max_rate * 100] if facts.max_rate is not None else []
            if any(num.matches(v) for v in values):
                self.add_ok(f"{item.name}: {num.describe()} matches a threshold")
            return
        if kind == "rate" and not num.percent:
            # a bare number under a rate header: a fraction (0.0185) or percent points (1.85)
            if num.value <= 1 and num.decimals >= 2 and "%" not in header and "percent" not in header.lower():
                num = Num(num.start, num.end, num.text, num.value * 100, max(num.decimals - 2, 0), percent=True,
                          approx=num.approx, approx_text=num.approx_text)
            else:
                num = Num(num.start, num.end, num.text, num.value, num.decimals, percent=True, approx=num.approx,
                          approx_text=num.approx_text)
        if num.percent and kind != "rate":
            kind = "rate"
        if kind == "observed":
            kind = "generic"
        values = facts.values(kind)
        if not values:
            return
        if any(num.matches(v) for v in values):
            self.add_ok(f"{item.name}: {num.describe()} matches {_OK_WORDS.get(kind, kind)}")
            return
        if num.year or not strong:
            return
        if kind == "age" and (num.approx in ("over", "under")):
            return
        says = self.says(masked, num, header, item)
        actual = _actual(item, kind)
        column = f' (column "{header}")' if header else ""
        bare = re.sub(r"\s*(?:rows?|records?)$", "", num.describe())
        if kind == "rate":
            message = (f"The report says {item.name} has a rate of {num.describe()}{column}, but the findings show "
                       f"{actual} ({_counts(item)}).")
        elif kind == "age":
            message = (f"The report says the newest value of {item.name} is {num.describe()} old{column}, but the "
                       f"findings show {actual} ({format_count(item.f.observed)} s).")
        elif kind == "total":
            claimed = f'"{says}"' if ":" in says else f"{bare} rows"
            message = (f"The report says {item.name} looked at {claimed}{column}, but the findings show "
                       f"{actual} rows ({_describe(item)}).")
        else:
            label = _KIND_WORDS.get(kind, "rows")
            if kind == "generic":
                label = "failing rows" if item.f.failing is not None else "rows"
            claimed = f"{bare} {label}" if header else (f'"{says}"' if ":" in says else says)
            message = (f"The report says {item.name} has {claimed}{column}, but the findings show {actual} "
                       f"{label} ({_describe(item)}).")
        self.add_bad(item.name, says, actual, message)

    @staticmethod
    def says(masked: str, num: Num, header: str, item: _F) -> str:
        """What the report claims, as written: "39 contacts", "Distinct duplicated values: 5", "7 (Failing)"."""
        if header:
            return f"{num.describe()} ({header})"
        words = re.findall(r"[A-Za-z][\w'’-]*", _AFTER_STOP.split(masked[num.end:num.end + 60], maxsplit=1)[0])
        nouns = [k for k, w in enumerate(words[:4]) if w.lower() in _COUNT_NOUNS or w.lower() in item.nouns]
        if nouns:
            end = nouns[0]
            while end + 1 in nouns:
                end += 1
            return f"{num.describe()} {' '.join(words[:end + 1])}"
        label = re.search(r"(?:^|[.;!?(\n]|\s[-—–]\s)\s*([A-Za-z][A-Za-z' /_-]{0,40}?)\s*:\s*$",
                          masked[max(0, num.start - 45):num.start])
        if label and len(label.group(1).split()) <= 5:
            return f"{label.group(1).strip()}: {num.describe()}"
        return num.describe()

    # ---- statuses ------------------------------------------------------------------------------
    def claim_status(self, item: _F, claim: str, says: str, *, strict: bool, emoji: bool = False) -> None:
        actual = item.status
        f = item.f
        bad = False
        if claim == "pass":
            bad = actual != "pass"
        elif claim == "fail":
            bad = actual == "pass" and not (emoji and (f.failing or 0) > 0)
            if strict and not emoji and actual == "warn":
                bad = True
        elif claim == "warn":
            bad = actual == "pass" and not (emoji and (f.failing or 0) > 0)
            if strict and not emoji and actual == "fail":
                bad = True
        elif claim == "error":
            bad = actual == "pass"
        if bad:
            word = {"pass": "passing", "fail": "failed", "warn": "a warning", "error": "an error"}[claim]
            self.add_bad(item.name, says, actual,
                         f"The report calls {item.name} {word} ({says}), but its status is {actual.upper()}: "
                         f"{_describe(item)}.")
        else:
            self.add_ok(f"{item.name}: status {says} matches {actual}")

    def status_claims(self, text: str, explicit: list[tuple[int, int, _F]], ctx: _Ctx) -> None:
        distinct = {id(i): i for _s, _e, i in explicit}
        lead = _LEAD_IN.match(text)
        if lead and distinct:
            label = lead.group("label").lower()
            passing = ("passed", "passing", "passes", "ok", "healthy", "clean", "green", "✅")
            claim = "pass" if label in passing else "fail"
            for item in distinct.values():
                self.claim_status(item, claim, lead.group("label"), strict=False, emoji=claim == "fail")
            return
        for s, e, item in explicit:
            m = _NAME_AFTER_STATUS.match(text[e:e + 60])
            if m:
                word = (m.group("mark") or m.group("verb") or m.group("emoji") or "").lower()
                if _NEGATION.search(text[e:e + m.start(m.lastgroup or 0)] if m.lastgroup else ""):
                    continue
                claim = self.status_of_word(word)
                if claim:
                    self.claim_status(item, claim, word, strict=False, emoji=word in _EMOJI)
                    continue
            b = _NAME_BEFORE_STATUS.search(text[max(0, s - 12):s])
            if b:
                word = (b.group("emoji") or b.group("label") or "").lower()
                claim = self.status_of_word(word)
                if claim:
                    self.claim_status(item, claim, word, strict=False, emoji=word in _EMOJI)
        if ctx.status_class == "pass" and len(distinct) == 1 and not _STATUS_ANY.search(
                self._without_names(text, explicit)):
            (item,) = distinct.values()
            self.claim_status(item, "pass", "listed under a passing heading", strict=False)

    @staticmethod
    def _without_names(text: str, explicit: list[tuple[int, int, _F]]) -> str:
        for s, e, _i in sorted(explicit, reverse=True):
            text = text[:s] + " " + text[e:]
        return text

    @staticmethod
    def status_of_word(word: str) -> str | None:
        word = word.strip().lower()
        if word in _EMOJI:
            return _EMOJI[word]
        if word.startswith("pass") or word in ("ok", "succeeded", "fine", "clean", "healthy"):
            return "pass"
        if word.startswith("fail"):
            return "fail"
        if word.startswith("warn"):
            return "warn"
        if word.startswith("error"):
            return "error"
        return None

    def no_issues(self, text: str, item: _F | None, ctx: _Ctx, explicit: list[tuple[int, int, _F]]) -> None:
        m = _NO_ISSUES.search(text)
        if not m:
            return
        head = text[:m.start()]
        if _NO_ISSUES_SKIP.search(head) or _NO_ISSUES_SKIP.search(text[m.end():m.end() + 40]):
            return
        if re.search(r"\b(?:not|n['’]t|never|hardly)\s*$", head, re.I):
            return
        if ctx.status_class == "pass":
            return
        scope: list[_F]
        distinct = {id(i): i for _s, _e, i in explicit}
        tables = self.idx.tables_in(text.lower())
        if distinct:
            scope = list(distinct.values())
        elif item is not None:
            scope = [item]
        elif tables:
            scope = [i for t in tables for i in self.idx.by_table.get(t, ())]
        elif ctx.tables:
            scope = [i for t in ctx.tables for i in self.idx.by_table.get(t, ())]
        else:
            scope = list(self.idx.items)
        statuses = ("fail", "error") if m.group("fail") else ("fail", "warn", "error")
        wrong = [i for i in scope if i.status in statuses]
        phrase = m.group().strip()
        if not wrong and not (scope is self.idx.items and self.idx.doc.error):
            self.add_ok(f'"{phrase}" matches the findings')
            return
        count = {st: sum(1 for i in scope if i.status == st) for st in ("fail", "warn", "error")}
        actual = f"{count['fail']} failed, {count['warn']} warned, {count['error']} errors"
        names = ", ".join(f"{i.name} ({i.status})" for i in wrong[:6]) + (" …" if len(wrong) > 6 else "")
        if not wrong:
            names = f"the scan could not complete ({self.idx.doc.error})"
        self.add_bad(None, phrase, actual,
                     f'The report says "{phrase}", but {len(wrong)} check(s) did not pass: {names}.')

    def summary_counts(self, text: str, code: tuple[tuple[int, int], ...]) -> None:
        masked = list(text)
        for s, e in code:
            masked[s:e] = MASK * (e - s)
        plain = "".join(masked)
        low = plain.lower()
        if not re.search(r"\bchecks?\b|\btests?\b", low) and len(re.findall(
                r"\b\d+\s+(?:failed|warned|passed|errors?|errored)\b", low)) < 2 and not _SUMMARY_RES[-1].search(plain):
            return
        s = self.idx.doc.summary
        tables = self.idx.tables_in(low)
        per_table = {
            t: {st: sum(1 for i in self.idx.by_table.get(t, ()) if i.status == st)
                for st in ("pass", "fail", "warn", "error")}
            for t in tables}
        seen: set[int] = set()
        for regex in _SUMMARY_RES:
            for m in regex.finditer(plain):
                if m.start("n") in seen:
                    continue
                seen.add(m.start("n"))
                if _SUMMARY_SCOPED.search(plain[max(0, m.start("n") - 30):m.start("n")]):
                    continue  # "the other 9 checks passed": a part, not the summary
                raw_n = m.group("n").lower()
                if raw_n == "no" and m.group("w").lower().startswith("fail"):
                    continue  # "no checks failed" is a no-issues claim, checked once by no_issues()
                n = _SUMMARY_WORDNUM.get(raw_n)
                if n is None:
                    n = int(raw_n.replace(",", ""))
                w = m.group("w").lower()
                if w.startswith("fail") or w.startswith("broken"):
                    allowed = {s.failed, s.failed + s.errors, s.failed + s.warned, s.failed + s.warned + s.errors}
                    allowed |= {c["fail"] + c["error"] for c in per_table.values()}
                    allowed |= {c["fail"] for c in per_table.values()}
                    label = "failed"
                elif w.startswith("pass") or w == "green":
                    allowed = {s.passed} | {c["pass"] for c in per_table.values()}
                    label = "passed"
                elif w.startswith("warn") or "warning" in w:
                    allowed = {s.warned} | {c["warn"] for c in per_table.values()}
                    label = "warned"
                elif w.startswith("error") or "error" in w or "could not" in w:
                    allowed = {s.errors} | {c["error"] for c in per_table.values()}
                    label = "errors"
                elif "checks" in w:
                    allowed = {s.checks} | {sum(c.values()) for c in per_table.values()}
                    label = "checks"
                else:
                    continue
                if m.groupdict().get("m"):
                    total = int(m.group("m"))
                    if total not in {s.checks} | {sum(c.values()) for c in per_table.values()}:
                        self._summary_bad(f"{total} checks", "checks", s)
                if n in allowed:
                    self.add_ok(f"summary: {m.group().strip()} matches")
                else:
                    self._summary_bad(m.group().strip(), label, s)

    def _summary_bad(self, says: str, label: str, s: Any) -> None:
        actual = {"failed": f"{s.failed} failed", "passed": f"{s.passed} passed", "warned": f"{s.warned} warned",
                  "errors": f"{s.errors} errors", "checks": f"{s.checks} checks"}[label]
        self.add_bad(None, says, actual,
                     f'The report says "{says}", but the findings show {s.failed} failed, {s.warned} warned, '
                     f"{s.passed} passed and {s.errors} errors ({s.checks} checks).")

    # ---- names that do not exist ---------------------------------------------------------------
    def unknown_names(self, text: str, code: tuple[tuple[int, int], ...], *, table_row: bool,
                      whole_cell: bool = False) -> None:
        if not table_row:
            return
        stripped = text.strip()
        candidates = []
        if _UNKNOWN_NAME.match(stripped):
            candidates.append(stripped)
        elif whole_cell and code and len(code) == 1 and code[0][0] == text.find(stripped) and \
                code[0][1] - code[0][0] == len(stripped) and _IDENTIFIER.match(stripped):
            low = stripped.lower()
            if low not in self.idx.table_words and low not in self.idx.column_words and "." not in low[:0]:
                parts = low.split(".")
                if not (len(parts) == 2 and parts[0] in self.idx.table_words and parts[1] in self.idx.column_words) \
                        and low not in {t.split(".")[-1] for t in self.idx.table_words}:
                    candidates.append(stripped)
        for name in candidates:
            if name.lower() in self.idx.by_name:
                continue
            self.add_bad(None, name, "no such check",
                         f"The report has a row for {name}, but no check of that name exists in the findings "
                         f"({len(self.idx.items)} checks); remove it or use a real check name.")

    # ---- tables --------------------------------------------------------------------------------
    def table(self, rows: list[list[str]], ctx: _Ctx) -> None:
        header = [_clean(c)[0].strip() for c in rows[0]]
        kinds = [_header_kind(h) for h in header]
        name_col = next((k for k, kd in enumerate(kinds) if kd == "name"), None)
        body = rows[1:]
        cleaned_rows = [[_clean(c) for c in r] for r in body]
        # a checks table: some row names a real finding
        real = any(self.idx.explicit(t) for r in cleaned_rows for t, _c in r)
        if not real and self.data_table(header):
            return  # sample rows from the database: values, not claims
        for r, cells in zip(body, cleaned_rows):
            texts = [t for t, _c in cells]
            row_text = " | ".join(texts)
            per_cell = [self.idx.explicit(t) for t in texts]
            for k, ex in enumerate(per_cell):
                for _s, _e, it in ex:
                    self.mentioned.add(it.name)
            low = row_text.lower()
            self.coverage_texts.append((low, ctx.tables))
            item: _F | None = None
            cell_of_name = None
            for k, ex in enumerate(per_cell):
                distinct = {id(i): i for _s, _e, i in ex}
                if distinct:
                    if len(distinct) == 1:
                        (item,) = distinct.values()
                        cell_of_name = k
                    break
            # unknown check names in the name column (or the first column)
            target = name_col if name_col is not None else 0
            if target < len(cells) and not per_cell[target] and (real or (kinds and kinds[0] == "name")):
                self.unknown_names(texts[target], cells[target][1], table_row=True, whole_cell=True)
            if item is None and not any(per_cell):
                loose = self.idx.loose(low, ctx.tables)
                if ctx.finding is not None and len(cells) == 2 and not re.search(r"\d", texts[0]):
                    # a key-value table under a finding's heading: "| Failing rows | 37 |"
                    self.key_value(texts[0], cells[1], ctx)
                    continue
                if len(loose) == 1:
                    item = loose[0]
                elif not loose and len(cells) >= 2:
                    table_key = next((t.strip().lower() for t, _c in cells
                                      if t.strip().lower() in self.idx.by_table), None)
                    if table_key is not None:
                        self.table_row(table_key, header, kinds, cells)
                        continue
                    if len(cells) == 2:
                        self.summary_counts(f"{texts[0]}: {texts[1]}", ())
                    else:
                        for t, c in cells:
                            if t.strip():
                                self.summary_counts(t, c)
                    continue
            if item is None:
                continue
            # statuses
            status_cols = [k for k, kd in enumerate(kinds) if kd == "status"]
            for k, (t, _c) in enumerate(cells):
                if k == cell_of_name or k >= len(kinds) + 8:
                    continue
                kd = kinds[k] if k < len(kinds) else None
                if kd == "skip":
                    continue
                word = self.cell_status(t, whole=kd != "status")
                if word and (kd == "status" or not status_cols):
                    claim = self.status_of_word(word)
                    if claim:
                        self.claim_status(item, claim, t.strip(), strict=True, emoji=word in _EMOJI)
            if ctx.status_class == "pass" and not status_cols:
                self.claim_status(item, "pass", "listed under a passing heading", strict=False)
            # numbers
            for k, (t, c) in enumerate(cells):
                if not t.strip():
                    continue
                kd = kinds[k] if k < len(kinds) else None
                if kd in ("status", "skip", "name") or k == cell_of_name:
                    continue
                ex = per_cell[k]
                if kd in (None, "prose"):
                    sub_ctx = _Ctx(item, ctx.tables, None)
                    self.sentence("", sub_ctx, cleaned=(t, c))
                    continue
                head_text = header[k] if k < len(header) else ""
                simple = _SIMPLE_CELL.match(t)
                if simple and kd in _CELL_KINDS:
                    self.compare(_simple_num(simple), _cell_kind(kd, simple, item), True, item, t, head_text)
                    continue
                self.numbers(t, c, ex, item, header_kind=kd, header=head_text)

    def table_row(self, table_key: str, header: list[str], kinds: list[str | None],
                  cells: list[tuple[str, tuple[tuple[int, int], ...]]]) -> None:
        """A row about a whole database table ("| Album | 6 | 347 | ✅ |"): its row count, checks and status."""
        items = self.idx.by_table[table_key]
        row_count = next((i for i in items if i.f.check == "row_count"), None)
        sizes = {float(v) for i in items for v in (i.f.total, i.f.observed if i.f.check == "row_count" else None)
                 if v is not None}
        table = items[0].f.table
        for k, (t, _c) in enumerate(cells):
            head = header[k].lower() if k < len(header) else ""
            kd = kinds[k] if k < len(kinds) else None
            if kd == "status":
                word = self.cell_status(t, whole=False)
                claim = self.status_of_word(word) if word else None
                not_passing = [i for i in items if i.status != "pass"]
                if claim == "pass" and not_passing:
                    first = not_passing[0]
                    self.add_bad(first.name, f"{table}: {t.strip()}", first.status,
                                 f"The report marks the table {table} as passing ({t.strip()}), but {first.name} "
                                 f"has status {first.status.upper()}: {_describe(first)}.")
                continue
            simple = _SIMPLE_CELL.match(t)
            if not simple or simple.group("pct"):
                continue
            num = _simple_num(simple)
            if re.fullmatch(r"(?:#\s*|number\s+of\s+)?checks?(?:\s+run)?", head):
                actual = float(len(items))
                if num.matches(actual):
                    self.add_ok(f"{table}: {num.text} checks matches")
                else:
                    self.add_bad(None, f"{table}: {num.text} checks", f"{len(items)} checks",
                                 f"The report says the table {table} has {num.text} checks, but the findings have "
                                 f"{len(items)}.")
            elif kd in ("total", "generic", "observed") and re.search(r"rows|records|total|size|count", head) \
                    and sizes:
                if any(num.matches(v) for v in sizes):
                    self.add_ok(f"{table}: {num.text} rows matches")
                else:
                    actual = format_count(row_count.f.observed if row_count else max(sizes))
                    self.add_bad(row_count.name if row_count else None, f"{table}: {num.text} rows", actual,
                                 f"The report says the table {table} has {num.text} rows, but the findings show "
                                 f"{actual}.")

    def key_value(self, key: str, value: tuple[str, tuple[tuple[int, int], ...]], ctx: _Ctx) -> None:
        text, code = value
        shift = len(key) + 2
        line = f"{key}: {text}"
        status = self.cell_status(text, whole=True)
        if status and re.search(r"status|result|outcome|verdict", key, re.I) and ctx.finding is not None:
            claim = self.status_of_word(status)
            if claim:
                self.claim_status(ctx.finding, claim, text.strip(), strict=True, emoji=status in _EMOJI)
            return
        self.sentence("", ctx, cleaned=(line, tuple((s + shift, e + shift) for s, e in code)))

    def data_table(self, header: list[str]) -> bool:
        """Column names of the database (sample rows), not a table about checks."""
        cols = [h for h in header if h]
        if not cols:
            return False
        known = sum(1 for h in cols if h.lower() in self.idx.column_words or re.fullmatch(r"[a-z][a-z0-9]*_[\w]+", h)
                    or re.fullmatch(r"[a-z]+(?:[A-Z][a-z0-9]*)+|[A-Z][a-z0-9]+(?:[A-Z][a-z0-9]*)+", h))
        return known * 2 >= len(cols)

    @staticmethod
    def cell_status(text: str, *, whole: bool) -> str | None:
        t = " ".join(text.replace("*", "").split()).strip().lower()
        if not t:
            return None
        if whole:
            parts = t.split()
            if len(parts) > 2:
                return None
            for p in parts:
                if p in _EMOJI:
                    continue
                if not any(r.match(p) for r in _STATUS_CELL.values()) or p in ("good", "red", "green", "clean",
                                                                                  "critical", "yellow", "amber"):
                    return None
        words = [m.group() for m in _STATUS_ANY.finditer(t)]
        if not words:
            return None
        textual = [w for w in words if w not in _EMOJI]
        return (textual or words)[0]


# --------------------------------------------------------------------------------------------------
# The walk
# --------------------------------------------------------------------------------------------------


def verify_fn(report_markdown: str, findings: FindingsDoc | dict[str, Any]) -> Verification:
    """Check the report's numbers and statuses against the findings (see the module docstring)."""
    doc = findings if isinstance(findings, FindingsDoc) else FindingsDoc.model_validate(findings)
    idx = _Index(doc)
    checker = _Checker(idx)
    blocks = _blocks(report_markdown or "")
    headings: list[tuple[int, _Ctx]] = []
    items: list[tuple[int, _Ctx]] = []
    pseudo: _Ctx | None = None

    def section() -> _Ctx:
        return headings[-1][1] if headings else _Ctx()

    for bi, block in enumerate(blocks):
        if block.kind == "heading":
            text = re.sub(r"^\s*(?:\d{1,3}(?:\.\d{1,3})*[.)]?|[A-Z][.)])\s+", "", block.text)
            while headings and headings[-1][0] >= block.level:
                headings.pop()
            parent = section()
            cleaned = _clean(text)
            ctx = checker.heading_ctx(cleaned[0], parent)
            checker.unknown_names(cleaned[0].strip(), cleaned[1], table_row=True,
                                  whole_cell=False)
            checker.sentence("", _Ctx(ctx.finding, ctx.tables, None), cleaned=cleaned)
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
            checker.table(block.rows, base)
            continue
        if block.kind == "item":
            while items and items[-1][0] >= block.level:
                items.pop()
            parent_ctx = items[-1][1] if items else base
            cleaned = _clean(block.text)
            explicit = {id(i): i for _s, _e, i in idx.explicit(cleaned[0])}
            if len(explicit) == 1:
                (only,) = explicit.values()
                own = _Ctx(only, frozenset({only.table_key} if only.table_key else ()), None)
            elif explicit:
                own = _Ctx(None, parent_ctx.tables, None)
            else:
                loose = idx.loose(cleaned[0].lower(), parent_ctx.tables)
                own = (_Ctx(loose[0], parent_ctx.tables, None) if len(loose) == 1 and parent_ctx.finding is None
                       else _Ctx(parent_ctx.finding, parent_ctx.tables, parent_ctx.status_class))
            for sent in _sentences(block.text):
                checker.sentence(sent, _Ctx(own.finding, own.tables, parent_ctx.status_class))
            item_ctx = own
            if not explicit and own.finding is None:
                head = cleaned[0].strip()
                if head.endswith(":") and _PASS_HEADING.search(head) and not _PROBLEM_HEADING.search(head):
                    item_ctx = _Ctx(None, own.tables, "pass")
            items.append((block.level, item_ctx))
            continue
        # paragraph
        items = []
        cleaned = _clean(block.text)
        text = cleaned[0].strip()
        explicit = {id(i): i for _s, _e, i in idx.explicit(text)}
        is_label = (re.fullmatch(r"\*\*[^*]+\*\*:?", block.text.strip()) is not None or text.endswith(":")) and \
            len(text) < 160
        para_ctx = base if pseudo is None else section()
        current = para_ctx
        named: set[int] = set()
        for sent in _sentences(block.text):
            found = checker.sentence(sent, current)
            sent_explicit = {id(i): i for _s, _e, i in idx.explicit(_clean(sent)[0])}
            named |= set(sent_explicit)
            if found is not None and len(named) == 1 and sent_explicit:
                current = _Ctx(found, para_ctx.tables, para_ctx.status_class)
            elif len(named) > 1:
                current = para_ctx
        pseudo = None
        if is_label:
            if len(explicit) == 1:
                (only,) = explicit.values()
                pseudo = _Ctx(only, frozenset({only.table_key} if only.table_key else ()), None)
            elif not explicit and _PASS_HEADING.search(text) and not _PROBLEM_HEADING.search(text):
                pseudo = _Ctx(None, para_ctx.tables, "pass")
    # failed or warned findings the report never names
    for item in idx.items:
        if item.status in ("fail", "warn") and item.name not in checker.mentioned and not any(
                idx.names_loosely(item, low, tables) for low, tables in checker.coverage_texts):
            checker.add_bad(item.name, "(not mentioned)", f"{item.status}: {_describe(item)}",
                            f"The report never mentions {item.name}, which "
                            f"{'failed' if item.status == 'fail' else 'warned'}: {_describe(item)}.")
    return Verification(ok=checker.ok, bad=checker.bad)
