"""One regex dialect on every database (issue 11): a corpus of patterns runs as ``pattern`` checks on
SQLite, PostgreSQL and MariaDB over the same values, and every pattern fails the same rows everywhere.

A few patterns also carry a count worked out by hand from VALUES, so "the same everywhere" cannot be
"the same wrong answer everywhere".
"""

from __future__ import annotations

import re
import warnings
from pathlib import Path

import pytest
import yaml

from tests.dbs import KINDS, create_database
from watchdog.sandbox import Sandbox
from watchdog.scan import regex
from watchdog.scan.scanner import scan
from watchdog.scan.suites import SuiteError, load_suites

VALUES = [
    "cat", "Cat", "concat", "cat food", "the cat.", "bobcat", "cat_1", "CAT", "a\ncat",  # 0-8
    "2024-01-31", "31/01/2024", "٣٤", "12", "1 2", "x\n", "x", "tab\there", "back\\slash",  # 9-17
    "[bracket]", "a-b", "a.b", "é", "naïve", "Ölfeld", "", "  ", "^caret$", "ab", "abab", "aab",  # 18-29
    "user@example.com", "user@@example", "A1-23", "a1-23",  # 30-33
]
# (pattern, failing rows by hand or None: then only "equal on every database" is asserted)
CORPUS: list[tuple[str, int | None]] = [
    (r"\bcat\b", len(VALUES) - 4),  # cat, cat food, the cat., a\ncat (not concat, bobcat, cat_1, Cat, CAT)
    (r"\ycat\y", len(VALUES) - 4),  # PostgreSQL's spelling of the same
    (r"\mcat", len(VALUES) - 5),  # + cat_1
    (r"cat\M", len(VALUES) - 6),  # cat, concat, cat food, the cat., bobcat, a\ncat
    (r"\Bcat", len(VALUES) - 2),  # concat, bobcat
    (r"^[[:alpha:]]+$", len(VALUES) - 8),  # cat Cat concat bobcat CAT x ab abab aab: 9 ... see below
    (r"^[[:digit:]]+$", len(VALUES) - 1),  # 12 (not the Arabic-Indic digits)
    (r"^\d+$", len(VALUES) - 1),
    (r"\d{4}-\d{2}-\d{2}", len(VALUES) - 1),
    (r"^[[:upper:]]", None), (r"[[:punct:]]", None), (r"[[:space:]]", None), (r"^[[:alnum:]_]+$", None),
    (r"\s", None), (r"\S", None), (r"\w+", None), (r"\W", None), (r"\D", None),
    (r"x$", len(VALUES) - 1),  # only "x": "x\n" does not end with x
    (r"^x", len(VALUES) - 2),  # x and x\n
    (r"a.cat", len(VALUES) - 1),  # "a\ncat": the dot matches a newline
    (r"^cat$", len(VALUES) - 1),
    (r"(?i)^cat$", len(VALUES) - 3),  # cat Cat CAT
    (r"(?i)[a-c]at", None), (r"[^a-z]", None), (r"[]]", len(VALUES) - 1), (r"[\]\[]", len(VALUES) - 1),
    (r"\\", len(VALUES) - 1), (r"\t", len(VALUES) - 1), (r"\n", len(VALUES) - 2), (r"[\n\t]", len(VALUES) - 3),
    (r"\.", len(VALUES) - 3),  # the cat., a.b, user@example.com
    (r"a-b", len(VALUES) - 1), (r"[a\-]b", None), (r"[-a]b", None), (r"\^caret\$", len(VALUES) - 1),
    (r"^(ab)+$", len(VALUES) - 2), (r"^(?:ab){2}$", len(VALUES) - 1), (r"^a{2}b$", len(VALUES) - 1),
    (r"^a{1,2}b", None), (r"ab?", None), (r"a+?b", None), (r"cat|dog", None), (r"^$", len(VALUES) - 1),
    (r"^\s+$", len(VALUES) - 1), (r"é|ï|Ö", len(VALUES) - 3), (r"[à-ÿ]", None), (r"\x41", None),
    (r"\u00e9", len(VALUES) - 1), (r"^[^@\s]+@[^@\s]+\.[a-z]{2,}$", len(VALUES) - 1),
    (r"^[A-Z]\d-\d{2}$", len(VALUES) - 1), (r"(?=.*\d)(?=.*-)", None), (r"^(?!cat)", None),
    (r"(?P<word>cat)", None), (r"[[:xdigit:]]{2}", None), (r"[[:cntrl:]]", len(VALUES) - 3),
]
REFUSED = [
    (r"(a)\1", "back-references"), (r"(?<=a)b", "lookbehind"), (r"a{256}", "above 255"), (r"a*+", "possessive"),
    (r"(?>a)", "atomic"), (r"a(?i)b", "(?i) is supported only at the very start"), (r"[[=a=]]", "[[=x=]]"),
    (r"[\W]", "inside brackets"), (r"\q", "not a supported escape"), (r"[[:foo:]]", "unknown POSIX class"),
    (r"(", "missing ')'"), (r")", "unbalanced ')'"), (r"[a", "missing ']'"), (r"*a", "nothing to repeat"),
    (r"a{2", "repeat count"), (r"[z-a]", "reversed"), ("\\", "lone backslash"),
]


def _by_hand_alpha() -> int:
    return sum(1 for v in VALUES if v and all(c.isascii() and c.isalpha() for c in v))


@pytest.fixture(scope="module")
def counts(tmp_path_factory: pytest.TempPathFactory) -> dict[str, dict[str, int | None]]:
    """failing count per pattern, per database."""
    tmp_path = tmp_path_factory.mktemp("regex")
    checks = [{"pattern": {"column": "v", "regex": p, "name": f"p{i}"}} for i, (p, _) in enumerate(CORPUS)]
    suite = tmp_path / "regex.yaml"
    suite.write_text(yaml.safe_dump({"tables": {"words": checks}}, allow_unicode=True), encoding="utf-8")
    [loaded] = load_suites([suite])
    out: dict[str, dict[str, int | None]] = {}
    for kind in KINDS:
        db = create_database(kind, Path(tmp_path))
        try:
            db.create_table("words", {"id": "int", "v": "text"}, list(enumerate(VALUES)))
            with Sandbox(db.url) as box:
                doc = scan(box, loaded.checks, sample=0)
            errors = {f.name: f.error for f in doc.findings if f.status == "error"}
            assert not errors, (kind, errors)
            out[kind] = {f.name: f.failing for f in doc.findings}
        finally:
            db.close()
    return out


def test_every_pattern_fails_the_same_rows_on_every_database(counts):
    differ = {CORPUS[int(name[1:])][0]: {kind: counts[kind][name] for kind in KINDS}
              for name in counts["sqlite"] if len({counts[kind][name] for kind in KINDS}) > 1}
    assert differ == {}


def test_counts_worked_out_by_hand(counts):
    expected = {f"p{i}": n for i, (_, n) in enumerate(CORPUS) if n is not None}
    expected["p5"] = len(VALUES) - _by_hand_alpha()
    for kind in KINDS:
        got = {name: counts[kind][name] for name in expected}
        wrong = {CORPUS[int(n[1:])][0]: (got[n], expected[n]) for n in expected if got[n] != expected[n]}
        assert wrong == {}, kind


@pytest.mark.parametrize("pattern, message", REFUSED, ids=[p for p, _ in REFUSED])
def test_what_cannot_mean_the_same_everywhere_is_a_suite_error(tmp_path, pattern, message):
    suite = tmp_path / "s.yaml"
    suite.write_text(yaml.safe_dump({"tables": {"t": [{"pattern": {"column": "v", "regex": pattern}}]}}))
    with pytest.raises(SuiteError) as caught:
        load_suites([suite])
    [problem] = caught.value.problems
    assert problem.line is not None and "regex" in problem.message and message in problem.message


@pytest.mark.parametrize("pattern", [p for p, _ in CORPUS])
def test_python_form_compiles_without_warnings(pattern):
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # the old code printed a raw FutureWarning for [[:alpha:]]
        re.compile(regex.translate(pattern, "python"))
