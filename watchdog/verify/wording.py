"""Wording rules: prose that says nothing of the data — the model's instructions or example copied into the report,
one sentence said again and again, a cause that only restates the check, the same line given for many checks.

They are the one place these rules live: :func:`~watchdog.verify.verify_fn` applies them to a report's sentences
and list items, and the report graph to the parts of a program-mode answer (summary, priorities, causes and fixes
per check), so ``watchdog verify`` and the graph reach the same verdict on the same draft. Every rule prefers a
false negative: a line is flagged only when its words come from the instructions, repeat word for word, or carry
nothing but the check's own name.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from functools import cache
from typing import Any

__all__ = ["ECHO_WORDS", "check_copied", "check_repeated", "check_unknown_in_prose", "copied_from", "norm", "repeated",
           "restates_check", "shared_lines", "told_texts"]

_WORD = re.compile(r"[a-z0-9']+")
#: how many words in a row make an echo (four is common English; five of our instructions is a copy)
ECHO_WORDS = 5


def norm(line: str) -> str:
    return " ".join(_WORD.findall(line.lower()))


def _shingles(text: str, n: int = ECHO_WORDS) -> set[tuple[str, ...]]:
    words = _WORD.findall(text.lower())
    return {tuple(words[i:i + n]) for i in range(len(words) - n + 1)}


@cache
def _told_shingles(told: str) -> frozenset[tuple[str, ...]]:
    return frozenset(_shingles(told))


@cache
def told_texts() -> tuple[str, str]:
    """(the instructions, the example) the report graph gives the model in program mode. Read from the graph's
    prompts (plain strings; the prompts import nothing of verify)."""
    from watchdog.graph import prompts

    return prompts.INSTRUCTIONS, prompts.EXAMPLE + "\n" + prompts.FORMER_EXAMPLES


def copied_from(text: str, told: str | None = None, example: str | None = None) -> str | None:
    """"the example" or "the instructions" when ``text`` repeats five words in a row of them, else None."""
    if told is None or example is None:
        default_told, default_example = told_texts()
        told = default_told if told is None else told
        example = default_example if example is None else example
    mine = _shingles(text)
    if not mine:
        return None
    if example and mine & _told_shingles(example):
        return "the example"
    if told and mine & _told_shingles(told):
        return "the instructions"
    return None


def repeated(sentences: Iterable[str], most: int = 3, words: int = 4) -> list[tuple[str, int]]:
    """Sentences of ``words`` or more words said ``most`` or more times (a small model repeats itself to the cap)."""
    count: dict[str, int] = {}
    first: dict[str, str] = {}
    for s in sentences:
        key = norm(s)
        if len(key.split()) >= words:
            count[key] = count.get(key, 0) + 1
            first.setdefault(key, s.strip())
    return [(first[k], n) for k, n in count.items() if n >= most]


_FILLER = {"the", "a", "an", "this", "that", "check", "checks", "test", "rule", "is", "was", "has", "have", "been",
           "failed", "fails", "failing", "failure", "not", "passed", "did", "does", "column", "table", "value",
           "values", "of", "in", "for", "on", "if", "to", "be", "it", "are", "there", "some", "data", "field",
           "ensure", "make", "sure", "verify", "whether", "and", "or", "with", "rows", "row", "records",
           "record", "cause", "causes", "fix", "fixes", "likely", "possible", "suggested", "issue", "problem",
           "by", "at", "should", "must", "all", "every", "so", "because"}


def restates_check(line: str, name_words: set[str]) -> bool:
    """The line carries only the check's own words ("Not null check failed.", "Check if the email is not null."):
    no cause and no fix is in it."""
    words = [w for w in _WORD.findall(line.lower().replace("_", " ").replace(".", " ")) if w not in _FILLER]
    return all(w in name_words or w.rstrip("s") in name_words for w in words)


def shared_lines(per_check: list[list[str]], most: int = 3) -> dict[str, int]:
    """Lines given word for word for ``most`` or more checks (a small model copies one cause to every check)."""
    count: dict[str, int] = {}
    for lines in per_check:
        for key in {norm(x) for x in lines if x.strip()}:
            count[key] = count.get(key, 0) + 1
    return {k: n for k, n in count.items() if n >= most}


# ---- the rules as verify_fn applies them to a report's units


_CHECK_NAME = re.compile(r"(?<![\w.,+$-])[A-Za-z_][\w$]*(?:\.[\w$]+)*\.(?:{types})(?![\w])")
_SUGGESTED = re.compile(r"\b(?:add|adding|added|new|create|creating|introduce|consider|define|defining|write|"
                        r"writing|set\s+up|schedule)\b[^.]{0,40}$", re.I)


def check_copied(res: Any, text: str, finding: str | None) -> None:
    """A sentence or list item that repeats five words in a row of the model's instructions or example."""
    source = copied_from(text)
    if source is None:
        return
    where = f" (said of {finding})" if finding else ""
    what = "copies the example given in the instructions" if source == "the example" else \
        "repeats the instructions given to the model"
    res.add_bad(finding, text.strip()[:200], "not about this data",
                f"The line {text.strip()[:100]!r}{where} {what}; it says nothing about this data.")


def check_repeated(res: Any, units: list[str], finding: str | None) -> None:
    """One paragraph or list saying the same sentence three or more times."""
    for sentence, times in repeated(units):
        res.add_bad(finding, sentence[:200], f"said {times} times",
                    f"The sentence {sentence[:100]!r} is said {times} times in one place; say it once.")


def check_unknown_in_prose(res: Any, idx: Any, text: str, types: tuple[str, ...]) -> None:
    """A sentence or list item naming a check that does not exist (``customer.email.not_null`` where the
    check is ``customers.email.not_null``); a check suggested as new ("add a ….not_null check") is left alone."""
    for m in _check_name_re(types).finditer(text):
        name = m.group()
        if name.lower() in idx.by_name or _SUGGESTED.search(text[:m.start()]):
            continue
        res.add_bad(None, name, "no such check",
                    f"The report names {name}, but no check of that name exists in the findings "
                    f"({len(idx.items)} checks); use a real check name.")


@cache
def _check_name_re(types: tuple[str, ...]) -> re.Pattern[str]:
    return re.compile(_CHECK_NAME.pattern.replace("{types}", "|".join(types)))



_HEADING = re.compile(r"^\s{0,3}#{1,6}\s+\S|^\S.*\n(?:=+|-+)[ \t]*$", re.M)


def check_is_report(res: Any, text: str, tables: int) -> None:
    """An answer that is empty, or that has no heading, no table and names no check (error text, a refusal), is
    not a report, whatever the findings are."""
    if any(b.actual == "no report" for b in res.bad):
        return  # said already (only a reasoning block)
    if not text.strip():
        res.add_bad(None, "(empty)", "no report", "The draft is empty: there is no report.")
    elif not _HEADING.search(text) and not tables and not res.mentioned:
        first = " ".join(text.split())[:80]
        res.add_bad(None, first, "no report", f"The draft is not a report: it has no heading, no table and names "
                                              f"no check (it begins {first!r}).")
