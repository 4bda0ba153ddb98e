"""A ``unique`` check's rows in the duplicated groups: "9 rows in all", "across 9 rows", "appear 9 times".

A ``unique`` finding's ``failing`` is the number of rows whose value is shared with another row: every row of every
duplicated group, not only the surplus beyond the first of each (``details.excess_rows``). Prose often states it
without a failure word: "3 ISBNs are duplicated, 10 rows in all, 7 of them surplus", "3 ISBNs repeat across 10
rows", "the duplicated ISBNs cover 10 rows in total", "3 ISBNs appear 10 times". :func:`rows_of_groups` says whether a
number is worded so; such a number must equal ``failing`` (or ``total``, which "N rows in all" may also mean: a
correct number written naturally is never flagged).

It is conservative: the sentence must speak of duplication, the number must count rows (or the table's noun) with
an aggregate word after it ("in all", "altogether", "in total", "overall") or a covering verb before it ("across",
"cover", "span", "account for", "make up", "involving", "appear in"), or count "times" after a plural "appear/occur/
repeat" (one value that "appears 3 times" is one group, not all of them); a sentence that
sums over checks or groups ("together", "combined", "each", "per", "both") is left to the other rules.
"""

from __future__ import annotations

import re

__all__ = ["rows_of_groups"]

_DUP_CONTEXT = re.compile(
    r"\b(?:duplicat\w*|dupes?|repeat\w*|shar(?:e|es|ed|ing)|same|surplus|excess|extra|redundant|cop(?:y|ies)|"
    r"more\s+than\s+once|recurr?\w*|appear\w*|occur\w*|groups?|non-?unique)\b")
_AGGREGATE_AFTER = re.compile(r"\s*(?:in\s+all|altogether|in\s+total|overall)\b")
_COVERING_BEFORE = re.compile(
    r"\b(?:across|(?:appear|occur|recur|repeat)\s+in|spanning|spans?|cover(?:s|ed|ing)?|account(?:s|ed|ing)?\s+for|make\s+up|makes\s+up|making\s+up|"
    r"involving|involve[sd]?|totall?(?:ing|ed|s)?)\s+(?:the\s+|a\s+total\s+of\s+)?$")
# plural verbs only: "Bianca Petrov appears 3 times" is one value, "3 ISBNs appear 10 times" all the groups
_TIMES_BEFORE = re.compile(r"\b(?:appear|occur|repeat|recur|are\s+(?:used|listed|repeated)|show\s+up)\b"
                           r"[^.;:!?]{0,20}$")
_SUMMED = re.compile(r"\b(?:together|combined|sum|summed|each|per|every|both|all\s+checks|other\s+checks|"
                     r"checks|between)\b")
_SENTENCE_END = re.compile(r"(?:[.!?](?:\s|$)|\n)")


def rows_of_groups(low: str, start: int, end: int, after_words: list[str], noun_at: int, counts_rows: bool) -> bool:
    """Whether the number at ``low[start:end]`` (lower-cased, masked text) counts the rows of the duplicated groups.

    ``after_words``/``noun_at``: the words after the number and the position of its count noun (-1 when none);
    ``counts_rows``: that noun counts rows (rows, records, or the table's own noun).
    """
    cut = max(low.rfind(". ", 0, start), low.rfind("\n", 0, start), low.rfind("; ", 0, start))
    stop = _SENTENCE_END.search(low, end)
    sentence = low[cut + 1: stop.start() if stop else len(low)]
    if not _DUP_CONTEXT.search(sentence) or _SUMMED.search(sentence):
        return False
    before = low[cut + 1:start]
    if after_words[:1] == ["times"]:
        return bool(_TIMES_BEFORE.search(before))
    if noun_at < 0 or noun_at > 2 or not counts_rows:
        return False
    noun_end = low.find(after_words[noun_at], end) + len(after_words[noun_at])
    return bool(_AGGREGATE_AFTER.match(low, noun_end) or _COVERING_BEFORE.search(before))
