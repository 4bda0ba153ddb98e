"""Check the numbers and statuses a Markdown QA report states against the findings it was written from.

``verify_fn(report_markdown, findings) -> Verification`` is a pure, deterministic function (``re`` only,
a few milliseconds per report). It prefers false negatives: a number is bad only when it is clearly
attributed to one finding's count or rate and matches none of that finding's facts. Ambiguous numbers
are left alone, so a correct report written naturally passes.

**Unwrapping first** (:mod:`watchdog.verify.unwrap`, public as :func:`unwrap_report` so the graph
delivers the same text it verified): reasoning blocks (``<think>…</think>``, ``<thinking>``,
``<reasoning>``; an unclosed one hides everything after it), an echoed ``<report>…</report>`` wrapper,
and a code fence around the whole report (```` ```markdown ````, ```` ```md ````, a bare fence; only
when the fence holds a heading and none stands outside it; code blocks inside the report are kept) are
removed, with any chatter around the fence.

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

**Numbers** (:mod:`watchdog.verify.numbers`): integers with thousands separators, decimals,
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

A number under a Failing header for a check that counts no failing rows (``row_count``,
``freshness``) is bad unless it is 0 for a passing check; a fraction or percentage under a Rate header
for such a check is bad ("has no rate"); a whole number there is its observed value. A label naming
another kind of check's figure ("Duplicate values: 0" in a ``not_null`` section) claims nothing.

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
``details.excess_rows``; a ``unique`` check's rows worded as the rows of the duplicated groups ("10 rows in all",
"across 10 rows", "3 ISBNs appear 10 times") → failing (or total), :mod:`~watchdog.verify.group_rows`;
failure words (failing, null, missing, invalid, orphaned, duplicate, ...) →
failing (also accepts the duplicate figures and ``max_count``); "of N", "total:", "checked/scanned" →
total (or ``observed``); complements ("non-null", "valid", "passing", "remaining") and plain "rows" →
any fact.

**Consistent.** A claimed number is consistent when it equals one of the facts its kind allows —
``failing``, ``total`` (``observed`` too for a ``row_count``, whose observed value is its row count),
``observed``, ``total - failing``, ``details.duplicate_values``, ``details.excess_rows``, the size of
an accepted-values list, and for ``row_count`` the distance to a bound; parameters (``max_count``,
``min``, ``max``, ``max_rate``) excuse only numbers worded as thresholds — within the precision
written: ``1.2k`` = 1,200 ± 50; round numbers of 1,000 or more may be rounded (``2,400`` ± 50, at
most 5%); "about/~/roughly/nearly/almost N" allows ±10% (at least ±1); "over N" needs at least N, "under N" at
most N. A percentage p
written with k decimals is consistent when ``|rate*100 - p| <= 0.5*10^-k`` (rate 0.0308 is "3.08%",
"3.1%", "3%"), within 10% with an approximation word, or when it is ``1 - rate`` (the share that
passes), ``max_rate`` or a duplicate figure over total. A freshness age written as a duration is
consistent within one unit of its smallest part (floor or ceiling; 10% when approximate) of
``observed``, ``max_age`` or ``observed - max_age``; a wrong one is bad only when it is said to be the
age ("N days old", "N days ago", "newest … N days").

**Bad items** (each with ``finding``, ``says``, ``actual`` and a one-sentence ``message`` for the fix
prompt):

1. a count or rate clearly attributed to a finding that matches none of its facts;
2. a status contradicted: a status stated in the finding's own section or list item without naming it
   ("- **Status**: pass", "`pass`", a line that is only "PASS", "Status: PASS. …", "The check passed: …",
   "It failed …"; a Status label is strict like a Status cell); a table Status cell (or a cell that is
   only PASS/FAIL/WARN/ERROR/✅/❌/⚠️) that disagrees with the finding (PASS/✅ for fail/warn/error;
   FAIL for pass or warn; WARN for pass or fail; ⚠️/❌ for a pass without failing rows); "<name> passed/is
   passing/(PASS)/— PASS/✅ <name>"
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

7. a draft that was cut off: the fence around it or a reasoning block never closed, or its last line stops
   where no writer stops (a label with no value such as ``- **Status**:``, a heading with nothing under it,
   an unfinished table row, an open ``**`` or code span, a trailing comma, article, preposition or
   conjunction, a long last sentence with no end) — :mod:`watchdog.verify.truncation`.
8. a problem claimed in words, with no number, about a check that passed with 0 failing rows: "missing
   names", "Ensure all company records have a name" (``not_null``), "duplicate domains" (``unique``), outside any
   check's section, when the one check of that kind on a matching column passed and none on a matching column
   failed or warned — :mod:`watchdog.verify.problems`.

9. a claim about a check's diagnosis that the diagnosis does not hold: a segment's count or share ("15 of the 37
   come from csv_import" when it holds 21; "nine in ten", "most"), a concentration in a segment the diagnosis did
   not find ("most bad rows come from the mobile app"), an onset date ("since mid-December" when the first failing
   row is from 2026-11-14), an offending value's count, the number of different wrong values, the rows shared
   with another check — :mod:`watchdog.verify.diagnosis`; a table row naming a segment or offending value is held
   to its figures (``diagnosis_tables``); a likely cause naming a segment, value or date the diagnosis does not
   hold (``diagnosis_causes``, also :func:`~watchdog.verify.diagnosis_causes.check_causes` for a program-mode
   answer). Numbers there that equal a diagnosis figure are not read as the finding's own counts.

Each message names the check's own quantity and states only true facts: a ``row_count`` is said to
count rows, a ``freshness`` check's age is an age (never "failing rows"), a ``not_null`` check has no
duplicate figures.

``Verification.ok`` lists what was checked and matched ("contacts.email.not_null: 37 matches failing
rows"). ``Verification.passed`` is true when nothing is bad; ``to_json_dict()`` returns
``{"passed", "ok", "bad": [{"finding", "says", "actual", "message"}]}``.

**Modules.** :mod:`~watchdog.verify.walk` (``verify_fn``: the walk and its context),
:mod:`~watchdog.verify.markdown` (reading the report), :mod:`~watchdog.verify.locate`
(which finding a unit speaks of), :mod:`~watchdog.verify.prose` (one sentence or clause),
:mod:`~watchdog.verify.tables` (tables), :mod:`~watchdog.verify.numbers` (numbers in text),
:mod:`~watchdog.verify.claims` (which numbers are claims), :mod:`~watchdog.verify.facts` and
:mod:`~watchdog.verify.consistency` (is a claim consistent with the facts),
:mod:`~watchdog.verify.status` (statuses, unknown and unmentioned checks),
:mod:`~watchdog.verify.summary` ("no issues", summary counts), :mod:`~watchdog.verify.problems` (problems claimed
in words about passing checks), :mod:`~watchdog.verify.unwrap`
(fences, tags, reasoning), :mod:`~watchdog.verify.truncation` (cut-off drafts),
:mod:`~watchdog.verify.diagnosis` (claims about a diagnosis; ``diagnosis_facts``, ``diagnosis_dates``,
``diagnosis_values``, ``diagnosis_tables``, ``diagnosis_causes``),
:mod:`~watchdog.verify.model` (the result).
"""

from watchdog.verify.model import BadItem, Verification
from watchdog.verify.unwrap import unwrap_report
from watchdog.verify.walk import verify_fn

__all__ = ["BadItem", "Verification", "unwrap_report", "verify_fn"]
