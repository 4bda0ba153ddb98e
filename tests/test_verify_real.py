"""verify_fn on real drafts of small local models (tests/verify_corpus/real.yaml, raw outputs in real/).

Every draft is a model's raw answer, saved byte for byte: Qwen2.5-Coder 0.5B and 1.5B instruct (GGUF,
served on loopback by xllamacpp) given watchdog's own specialist prompt for the library findings and for a
Chinook audit (tests/verify_corpus/chinook_audit.json). Each is labelled by hand: every bad item verify
must report (finding, the true value) and why. The tests assert no false alarm, every labelled item
detected and attributed, nothing else reported, and that every message states true facts.
"""

from __future__ import annotations

import re
from functools import cache, lru_cache
from pathlib import Path
from typing import Any

import pytest
import yaml

from watchdog.findings import FindingsDoc
from watchdog.graph.asks import missing_prose
from watchdog.graph.compose import assemble, parse_prose
from watchdog.report.escape import duration, percent
from watchdog.verify import BadItem, verify_fn
from watchdog.verify.numbers import format_count
from watchdog.verify.unwrap import unwrap

CORPUS = Path(__file__).parent / "verify_corpus"


@cache
def findings(name: str) -> FindingsDoc:
    return FindingsDoc.load(CORPUS / name)


@lru_cache(maxsize=1)
def drafts() -> tuple[dict[str, Any], ...]:
    return tuple(yaml.safe_load((CORPUS / "real.yaml").read_text(encoding="utf-8"))["drafts"])


def path_of(draft: dict[str, Any]) -> Path:
    return CORPUS / "real" / f"{draft['id']}{'.json' if draft.get('table') == 'program' else '.md'}"


def text_of(draft: dict[str, Any]) -> str:
    """The draft verify reads: the model's report, or (``table: program``) the report the program assembles
    around the model's JSON prose, as the graph does."""
    raw = path_of(draft).read_text(encoding="utf-8")
    if draft.get("table") != "program":
        return raw
    prose, problem = parse_prose(raw)
    assert prose is not None, problem
    return assemble(findings(draft["findings"]), prose)


def by_id(draft_id: str) -> dict[str, Any]:
    return next(d for d in drafts() if d["id"] == draft_id)


def bad_of(draft: dict[str, Any]) -> list[BadItem]:
    return verify_fn(text_of(draft), findings(draft["findings"])).bad


def show(bad: list[BadItem]) -> str:
    return "\n".join(f"  {b.finding} | {b.says} | {b.actual}" for b in bad)


# ---- the corpus as a whole ---------------------------------------------------------------------------

def test_real_corpus_size_and_shapes() -> None:
    all_drafts = drafts()
    assert len(all_drafts) >= 40
    assert len({d["id"] for d in all_drafts}) == len(all_drafts)
    models = {d["model"] for d in all_drafts}
    assert len(models) >= 2, models
    shapes = {s for d in all_drafts for s in d["shapes"]}
    assert {"fence", "think", "report-tag", "status-lines", "bullets", "truncated", "table"} <= shapes, shapes
    for d in all_drafts:
        assert path_of(d).is_file(), d["id"]
    assert {d.get("table", "model") for d in all_drafts} == {"model", "program"}


@pytest.mark.parametrize("draft", drafts(), ids=lambda d: d["id"])
def test_real_draft(draft: dict[str, Any]) -> None:
    """0 false alarms, every labelled item detected and attributed to its finding, nothing else. A program-mode
    draft (JSON prose) is also checked for what its prose lacks (causes, fixes, a summary of its own), or, when it
    is not the JSON asked for, for the reason the graph gives."""
    if draft.get("table") == "program":
        prose, problem = parse_prose(path_of(draft).read_text(encoding="utf-8"))
        if draft["expect"] == "unparsed":
            assert prose is None and problem == draft["parse_error"]
            return
        assert prose is not None, problem
        names = [f.name for f in findings(draft["findings"]).findings if f.status in ("fail", "warn", "error")]
        lacks = [f"{part}: {'causes' if 'causes' in why else 'fixes' if 'fixes' in why else 'empty or echoed'}"
                 for part, why in missing_prose(prose, names)]
        copied = [b for b in bad_of(draft) if b.actual == "not about this data"]  # verify's wording rule
        for b in copied:
            entry = prose.by_name().get(b.finding or "")
            kind = ("causes" if entry and any(b.says in x for x in entry.causes) else
                    "fixes" if entry and any(b.says in x for x in entry.fixes) else None)
            lacks.append(f"checks.{b.finding}: {kind}" if kind else "summary: empty or echoed")
        assert set(lacks) == set(draft.get("prose_missing", [])), lacks
    bad = [b for b in bad_of(draft) if draft.get("table") != "program" or b.actual != "not about this data"]
    expect = [] if draft["expect"] == "pass" else draft["expect"]
    unmatched = list(bad)
    for exp in expect:
        hit = next((b for b in unmatched if b.finding == exp["finding"] and str(exp["actual"]) in b.actual), None)
        assert hit is not None, f"missed {exp} ({exp.get('why', '')}); verify said:\n{show(bad)}"
        unmatched.remove(hit)
    assert not unmatched, "false alarm(s):\n" + "\n".join(b.message for b in unmatched)


def test_truncation_matches_the_finish_reason() -> None:
    """Each draft the server cut at the token limit is reported as cut off (unless its label says the cut fell
    on a clean boundary), and no draft the model finished is."""
    for d in drafts():
        if d["expect"] == "unparsed":  # program mode: a cut JSON answer is "incomplete", nothing is assembled
            assert d["finish_reason"] != "length" or "incomplete" in d["parse_error"], d["id"]
            continue
        flagged = any(b.actual in ("the report is cut off", "no report") for b in bad_of(d))
        if d["finish_reason"] == "length" and not d.get("clean_cut"):
            assert flagged, f"{d['id']}: cut at the token limit but not flagged"
        if d["finish_reason"] == "stop":
            assert not any(b.actual == "the report is cut off" for b in bad_of(d)), f"{d['id']}: finished but flagged"


def _true_facts(doc: FindingsDoc, name: str) -> set[str]:
    f = next(x for x in doc.findings if x.name == name)
    values = {format_count(v) for v in (f.failing, f.total, f.observed) if v is not None}
    if f.failing is not None and f.total is not None:
        values.add(format_count(f.total - f.failing))  # the rows that pass
    values |= {format_count(v) for v in f.details.values() if isinstance(v, (int, float))}
    if f.rate is not None or (f.failing is not None and f.total):
        values.add(percent(f.rate if f.rate is not None else (f.failing or 0) / (f.total or 1)))
    if f.check == "freshness" and f.observed is not None:
        values.add(duration(f.observed))
    return values


def test_messages_state_true_facts() -> None:
    """Every bad item's true value is one of its finding's facts, and no message calls an age, a row count or a
    threshold "failing rows" of a check that counts none."""
    checked = 0
    for d in drafts():
        if d["expect"] == "unparsed":
            continue
        doc = findings(d["findings"])
        for b in bad_of(d):
            if b.finding is None or b.says == "(not mentioned)" or b.actual == "not about this data":
                continue  # wording items: what they copied, not a number
            f = next(x for x in doc.findings if x.name == b.finding)
            assert b.finding in b.message
            fixed = {"no rate", "no total", "no failing-row count", "fail", "warn", "pass", "error"}
            assert b.actual in fixed or b.actual in _true_facts(doc, b.finding), (d["id"], b)
            if f.failing is None:
                assert not re.search(r"findings show [\d,]+ failing rows", b.message), (d["id"], b.message)
            checked += 1
    assert checked >= 10


# ---- each rule of issue 10, on a real draft --------------------------------------------------------

def _edited(draft_id: str, *edits: tuple[str, str]) -> str:
    """A real draft with small edits (each must apply)."""
    text = text_of(by_id(draft_id))
    for old, new in edits:
        assert old in text, f"{draft_id} no longer contains {old!r}"
        text = text.replace(old, new, 1)
    return text


def test_fenced_draft_is_read_and_unwrapped() -> None:
    """A report inside ```markdown is verified as Markdown (its table cells are checked) and unwrapped for
    delivery."""
    from watchdog.verify import unwrap_report

    raw = text_of(by_id("q05-library-fenced-t0.6-s101"))
    assert raw.startswith("```markdown")
    report = unwrap_report(raw)
    assert report.startswith("# Data-quality report") and "```" not in report
    bad = verify_fn(raw, findings("library.json")).bad
    assert any(b.finding == "loans.loaned_at.freshness" and b.says == "300 (Failing)" for b in bad)
    # the same draft with the wrong cells put right passes: nothing else in the fence was missed
    fixed = _edited("q05-library-fenced-t0.6-s101",
                    ("| books.row_count | pass | 1250 | 1250 | 1.000 |",
                     "| books.row_count | pass | – | 1250 | – |"),
                    ("| loans.loaned_at.freshness | fail | 300 | 300 |",
                     "| loans.loaned_at.freshness | fail | – | 300 |"),
                    ("| authors.row_count | warn | 40 | 40 | 0.0 |", "| authors.row_count | warn | – | 40 | – |"),
                    ("| books_priced_over_100 | pass | 0 | 300 |", "| books_priced_over_100 | pass | 0 | – |"))
    assert verify_fn(fixed, findings("library.json")).passed, show(verify_fn(fixed, findings("library.json")).bad)


def test_unclosed_fence_is_a_cut() -> None:
    raw = text_of(by_id("q15-chinook_audit-fenced-t0.7-s2"))
    assert unwrap(raw).unclosed_fence
    cut = [b for b in verify_fn(raw, findings("chinook_audit.json")).bad if b.actual == "the report is cut off"]
    assert cut and "never closed" in cut[0].message


def test_reasoning_only_draft_has_no_report() -> None:
    for draft_id in ("q05-library-think-t0.7-s3", "q05-library-think-t0.8-s102"):
        raw = text_of(by_id(draft_id))
        assert raw.startswith("<think>") and unwrap(raw).text == ""
        bad = verify_fn(raw, findings("library.json")).bad
        assert any(b.actual == "no report" for b in bad)
        # the checks it reasoned about are not "mentioned" by the reasoning
        assert {b.finding for b in bad if b.says == "(not mentioned)"} >= {"books.isbn.not_null", "books.isbn.unique"}


def test_status_line_in_its_own_section() -> None:
    """'- **Status**: `fail`' under ### `books.isbn.not_null` is checked: right as written, flagged as pass."""
    draft = "q05-library-plain-t0.3-s100"
    assert not [b for b in bad_of(by_id(draft)) if b.finding == "books.isbn.not_null"]
    for said in ("`pass`", "PASS", "pass. No null ISBNs"):
        wrong = _edited(draft, ("- **Status**: `fail`", f"- **Status**: {said}"))
        bad = [b for b in verify_fn(wrong, findings("library.json")).bad if b.finding == "books.isbn.not_null"]
        assert len(bad) == 1 and bad[0].actual == "fail" and "2 failing of 1,250" in bad[0].message, show(bad)
    passed = _edited(draft, ("- **Status**: `fail`\n- **Severity**: `fail`\n- **Failing**: 2",
                             "- The check passed: no null ISBNs.\n- **Failing**: 2"))
    bad = [b for b in verify_fn(passed, findings("library.json")).bad if b.finding == "books.isbn.not_null"]
    assert [b.actual for b in bad] == ["fail"], show(bad)


def test_threshold_does_not_vouch_for_a_count() -> None:
    """books.price.range has min 0 and 3 failing rows: 'Failing: 0' is wrong, 'min 0' is a threshold."""
    draft = "q05-library-plain-t0.3-s100"
    section = "\n\n### `books.price.range`\n- **Status**: `warn`\n- **Failing**: {n}\n- **Minimum**: 0\n"
    heading = "\n### `books.published_year.range`"
    base = _edited(draft, (heading, section.format(n=3) + heading))
    assert not [b for b in verify_fn(base, findings("library.json")).bad if b.finding == "books.price.range"]
    wrong = base.replace("- **Failing**: 3", "- **Failing**: 0")
    bad = [b for b in verify_fn(wrong, findings("library.json")).bad if b.finding == "books.price.range"]
    assert [(b.actual, b.says) for b in bad] == [("3", "Failing: 0")], show(bad)


def test_cells_are_read_by_their_column() -> None:
    """In the fenced draft: an age under Rate is the freshness check's observed value (right), its row count
    under Failing is wrong, and a row_count's rate is wrong; each message says what the check really has."""
    bad = {(b.finding, b.says): b for b in bad_of(by_id("q05-library-fenced-t0.6-s101"))}
    fresh = bad[("loans.loaned_at.freshness", "300 (Failing)")]
    assert "counts no failing rows" in fresh.message and "9d 0h" in fresh.message
    assert ("loans.loaned_at.freshness", "777602 (Rate)") not in bad
    assert bad[("books.row_count", "1.000 (Rate)")].actual == "no rate"
    assert bad[("books_priced_over_100", "300 (Total)")].actual == "no total"


def test_row_words_count_rows() -> None:
    """'3 rows failed' for books.isbn.unique is wrong (3 is the distinct duplicated values, 10 rows failed);
    '300 rows failed' for a freshness check is wrong (300 is its row count); 'No rows … failed' is zero."""
    bad = {b.finding: b for b in bad_of(by_id("q05-library-bullets-t1.0-s103"))}
    assert bad["books.isbn.unique"].actual == "10" and "10 failing rows" in bad["books.isbn.unique"].message
    assert bad["loans.loaned_at.freshness"].actual == "no failing-row count"
    assert bad["books.isbn.not_null"].actual == "2"
    assert "books.price.range" not in bad and "books_priced_over_100" not in bad


def test_cut_drafts_name_where_they_stop() -> None:
    expected = {"q15-chinook_audit-plain-t0.3-s1": "label with no value",
                "q15-chinook_audit-tagged-t0.7-s5": "heading",
                "q15-chinook_audit-plain-t0.6-s12": "bold text",
                "q05-library-plain-t0.3-s100": "code span"}
    for draft_id, reason in expected.items():
        cut = [b for b in bad_of(by_id(draft_id)) if b.actual == "the report is cut off"]
        assert cut and reason in cut[0].message, (draft_id, [b.message for b in cut])


def test_closed_reasoning_and_echoed_tag_are_removed() -> None:
    """Real reasoning (draft s102) closed with </think> before a real fenced report (s106), inside an echoed
    <report> tag: verify sees exactly what it sees in the bare report."""
    reasoning = text_of(by_id("q05-library-think-t0.8-s102"))
    report = text_of(by_id("q05-library-fenced-t0.8-s106"))
    wrapped = f"{reasoning}\n</think>\n<report>\nHere is the report:\n\n{report}\n</report>\n"
    doc = findings("library.json")
    assert unwrap(wrapped).text == unwrap(report).text
    assert [b.model_dump() for b in verify_fn(wrapped, doc).bad] == [b.model_dump() for b in verify_fn(report, doc).bad]
