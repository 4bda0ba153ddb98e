"""verify_fn rules, one at a time, and mutations of the deterministic report (watchdog.verify)."""

from __future__ import annotations

import re
from pathlib import Path

import hypothesis
import pytest
from hypothesis import strategies as st

from watchdog.findings import Finding, FindingsDoc, Summary
from watchdog.report import render_markdown
from watchdog.verify import BadItem, Verification, verify_fn

CORPUS = Path(__file__).parent / "verify_corpus"


def load(name: str) -> FindingsDoc:
    return FindingsDoc.load(CORPUS / f"{name}.json")


def doc_of(*findings: Finding, error: str | None = None) -> FindingsDoc:
    return FindingsDoc(database="sqlite://", started_at="2026-11-29T00:00:00Z", duration_s=0.1,
                       summary=Summary.of(list(findings)), findings=list(findings), error=error)


NOT_NULL = Finding(name="contacts.email.not_null", check="not_null", table="contacts", column="email", status="fail",
                   failing=37, total=2000, rate=0.0185)
UNIQUE = Finding(name="contacts.email.unique", check="unique", table="contacts", column="email", status="fail",
                 failing=19, total=2000, rate=0.0095, details={"duplicate_values": 8, "excess_rows": 11})
PASSING = Finding(name="companies.name.not_null", check="not_null", table="companies", column="name", status="pass",
                  failing=0, total=200, rate=0.0)
DOC = doc_of(NOT_NULL, UNIQUE, PASSING)
BOTH = "contacts.email.not_null and contacts.email.unique failed."


def bad_of(report: str, doc: FindingsDoc = DOC) -> list[BadItem]:
    return verify_fn(report, doc).bad


# ---- the API ------------------------------------------------------------------------------------

def test_contract_example() -> None:
    doc = load("library")
    result = verify_fn("# Report\n\n| Check | Status | Failing |\n|---|---|---|\n| books.isbn.not_null | fail | 7 |\n",
                       doc)
    assert isinstance(result, Verification) and result.passed is False
    first = result.bad[0]
    assert (first.finding, first.actual) == ("books.isbn.not_null", "2") and "7" in first.says
    assert "books.isbn.not_null" in first.message and " 7 " in first.message and " 2 " in first.message
    data = result.to_json_dict()
    assert set(data) == {"passed", "ok", "bad"} and data["passed"] is False
    assert all(set(b) == {"finding", "says", "actual", "message"} for b in data["bad"])
    assert {b["finding"] for b in data["bad"]} >= {"books.isbn.unique", "loans.loaned_at.freshness"}


def test_accepts_a_findings_dict() -> None:
    report = "# R\n\ncontacts.email.not_null failed with 37 nulls. contacts.email.unique failed: 19 rows."
    assert verify_fn(report, DOC.to_json_dict()).passed
    assert verify_fn(report, DOC).passed


def test_ok_lists_what_matched() -> None:
    result = verify_fn("contacts.email.not_null: 37 failing rows (1.85%). contacts.email.unique failed.", DOC)
    assert result.passed
    assert any("contacts.email.not_null" in s and "37" in s for s in result.ok)
    assert any("1.85%" in s for s in result.ok)


def test_message_is_one_sentence_with_claim_and_truth() -> None:
    (item,) = bad_of(f"{BOTH} contacts.email.not_null has 73 failing rows.")
    assert item.finding == "contacts.email.not_null" and item.actual == "37" and item.says.startswith("73")
    assert item.message.startswith("The report says contacts.email.not_null has 73")
    assert "37" in item.message and "2,000" in item.message and "1.85%" in item.message
    assert item.message.count(". ") == 0 and item.message.endswith(".")


# ---- numbers --------------------------------------------------------------------------------------

@pytest.mark.parametrize("sentence", [
    "contacts.email.not_null: 37 rows.",
    "contacts.email.not_null: 37 of 2,000 rows (1.85%).",
    "`contacts.email.not_null` — about 40 rows, roughly 2%.",
    "contacts\\.email\\.not\\_null has 37 nulls.",
    "37 contacts lack an email (contacts.email.not_null).",
    "contacts.email.not_null: 1,963 contacts have an email.",
    "contacts.email.not_null found thirty-seven missing emails.",
    "contacts.email.unique: 8 distinct duplicated values, 11 excess rows, 19 rows in all.",
    "contacts.email.not_null ran on 2026-11-29 at 06:00 (v1.2, run 3 of the night).",
    "contacts.email.not_null: see `SELECT 12345 FROM contacts` for the 37 rows.",
    "contacts.email.not_null: the top 5 domains are listed below; 37 rows fail.",
    "contacts.email.not_null: 37 rows, up from 30 last week.",
    "contacts.email.not_null: 37 rows; one contact, id 14, was created in 2019.",
    "contacts.email.not_null: 37 rows, roughly 1 in 50 contacts.",
])
def test_consistent_numbers_pass(sentence: str) -> None:
    assert bad_of(f"{BOTH}\n\n{sentence}") == []


@pytest.mark.parametrize("sentence, actual", [
    ("contacts.email.not_null: 73 rows.", "37"),
    ("contacts.email.not_null: 37 of 3,000 rows.", "2,000"),
    ("contacts.email.not_null: 37 out of 3,000 rows.", "2,000"),
    ("contacts.email.not_null: 37 rows (3.7%).", "1.85%"),
    ("contacts.email.not_null: about 60 rows.", "37"),
    ("contacts.email.not_null found no nulls.", "37"),
    ("contacts.email.not_null found thirty missing emails.", "37"),
    ("contacts.email.unique: 9 distinct duplicated values.", "8"),
    ("contacts.email.unique: 12 excess rows.", "11"),
])
def test_wrong_numbers_are_flagged(sentence: str, actual: str) -> None:
    items = bad_of(f"{BOTH}\n\n{sentence}")
    assert [(b.finding, b.actual) for b in items] == [(sentence.split()[0].rstrip(":"), actual)]


def test_table_headers_map_to_facts() -> None:
    table = ("| Check | Failing | Total | Rate |\n|---|---|---|---|\n"
             "| contacts.email.not_null | {f} | {t} | {r} |\n| contacts.email.unique | 19 | 2,000 | 0.95% |\n")
    assert bad_of(table.format(f="37", t="2,000", r="1.85%")) == []
    assert [b.actual for b in bad_of(table.format(f="2,000", t="2,000", r="1.85%"))] == ["37"]
    assert [b.actual for b in bad_of(table.format(f="37", t="37", r="1.85%"))] == ["2,000"]
    assert [b.actual for b in bad_of(table.format(f="37", t="2,000", r="18.5%"))] == ["1.85%"]


def test_numbers_in_a_sentence_naming_several_findings_follow_their_name() -> None:
    assert bad_of("contacts.email.not_null (37 rows) and contacts.email.unique (19 rows) failed.") == []
    items = bad_of("contacts.email.not_null (19 rows) and contacts.email.unique (37 rows) failed.")
    assert {(b.finding, b.actual) for b in items} == {("contacts.email.not_null", "37"),
                                                      ("contacts.email.unique", "19")}
    # "respectively" lists are ambiguous: left alone
    assert bad_of("contacts.email.not_null and contacts.email.unique fail with 19 and 37 rows.") == []


def test_section_context() -> None:
    report = f"{BOTH}\n\n## contacts.email.unique\n\nThe check found 91 duplicate rows.\n\n- 8 distinct values\n"
    assert [(b.finding, b.actual) for b in bad_of(report)] == [("contacts.email.unique", "19")]


# ---- statuses and coverage ---------------------------------------------------------------------

def test_missing_failed_check_is_bad() -> None:
    items = bad_of("contacts.email.not_null failed with 37 nulls.")
    assert [(b.finding, b.says) for b in items] == [("contacts.email.unique", "(not mentioned)")]
    assert "never mentions contacts.email.unique" in items[0].message


def test_loose_mention_counts() -> None:
    assert bad_of("contacts.email.not_null failed. In contacts, 19 rows share a duplicate email.") == []


def test_status_contradictions() -> None:
    table = "| Check | Status |\n|---|---|\n| contacts.email.not_null | {a} |\n| contacts.email.unique | FAIL |\n" \
            "| companies.name.not_null | {b} |\n"
    assert bad_of(table.format(a="❌ FAIL", b="✅ PASS")) == []
    assert [(b.finding, b.actual) for b in bad_of(table.format(a="PASS", b="PASS"))] == [
        ("contacts.email.not_null", "fail")]
    assert [(b.finding, b.actual) for b in bad_of(table.format(a="FAIL", b="FAIL"))] == [
        ("companies.name.not_null", "pass")]
    assert [b.actual for b in bad_of(f"{BOTH} contacts.email.unique passed.")] == ["fail"]
    assert bad_of(f"{BOTH} contacts.email.unique did not pass.") == []


@pytest.mark.parametrize("sentence, bad", [
    ("No issues were found.", True),
    ("All checks passed.", True),
    ("Everything passed.", True),
    ("Nothing failed.", True),
    ("No issues were found in the companies table.", False),
    ("If no issues are found next week, we close the ticket.", False),
    ("Not all checks passed.", False),
    ("All other checks passed.", False),
])
def test_no_issues_claims(sentence: str, bad: bool) -> None:
    items = bad_of(f"{BOTH} {sentence}")
    assert bool(items) is bad
    if bad:
        assert items[0].finding is None and items[0].actual == "2 failed, 0 warned, 0 errors"


def test_summary_counts() -> None:
    assert bad_of(f"{BOTH}\n\n**Result:** 2 failed, 0 warned, 1 passed, 0 errors (3 checks).") == []
    items = bad_of(f"{BOTH}\n\n**Result:** 3 failed, 0 warned, 0 passed, 0 errors (3 checks).")
    assert {b.actual for b in items} == {"2 failed", "1 passed"}
    assert [b.actual for b in bad_of(f"{BOTH} Of the 4 checks, 2 failed.")] == ["3 checks"]


def test_unknown_check_row() -> None:
    table = ("| Check | Status | Failing |\n|---|---|---|\n| contacts.email.not_null | FAIL | 37 |\n"
             "| contacts.email.unique | FAIL | 19 |\n| {name} | FAIL | 3 |\n")
    items = bad_of(table.format(name="`contacts.phone.not_null`"))
    assert [(b.finding, b.says, b.actual) for b in items] == [(None, "contacts.phone.not_null", "no such check")]
    assert [b.says for b in bad_of(table.format(name="`orphan_invoices`"))] == ["orphan_invoices"]
    assert bad_of(table.format(name="companies.name.not_null").replace("| FAIL | 3 |", "| PASS | 0 |")) == []


def test_scan_error_and_error_findings() -> None:
    broken = Finding(name="t.c.freshness", check="freshness", table="t", column="c", status="error",
                     error="no such column")
    doc = doc_of(broken, PASSING)
    assert verify_fn("companies.name.not_null passed; t.c.freshness could not run.", doc).passed
    report = "| Check | Status |\n|---|---|\n| t.c.freshness | ✅ |\n"
    assert [b.actual for b in verify_fn(report, doc).bad] == ["error"]
    assert verify_fn("All checks passed.", doc).bad


def test_empty_report_lists_every_problem() -> None:
    assert [b.finding for b in bad_of("")] == [None, "contacts.email.not_null", "contacts.email.unique"]
    assert bad_of("")[0].message == "The draft is empty: there is no report."


def test_no_findings() -> None:
    assert verify_fn("# Report\n\nNo issues found.", doc_of()).passed


# ---- the deterministic report, mutated ----------------------------------------------------------

_ROW = re.compile(r"^\| `(?P<name>[^`]+)` \| (?P<status>\w+) \| (?P<failing>[^|]+) \| (?P<total>[^|]+) "
                  r"\| (?P<measure>[^|]+) \|$")


def _mutations(name: str) -> list[tuple[str, str, str]]:
    """(mutated report, finding, what changed) for every figure and status of the template's table."""
    doc = load(name)
    lines = render_markdown(doc).split("\n")
    out = []
    for i, line in enumerate(lines):
        m = _ROW.match(line)
        if not m:
            continue
        for field in ("failing", "total", "measure"):
            cell = m.group(field).strip()
            num = re.search(r"\d[\d,]*(?:\.\d+)?", cell)
            if not num or cell.startswith("newest"):
                continue
            value = float(num.group().replace(",", "")) * 3 + 7
            text = f"{value:,.2f}" if "." in num.group() else f"{int(value):,}"
            start, end = m.span(field)
            new = line[:start] + f" {cell[:num.start()]}{text}{cell[num.end():]} " + line[end:]
            out.append(("\n".join(lines[:i] + [new] + lines[i + 1:]), m.group("name"), f"{field} {cell}"))
        status = m.group("status")
        flipped = {"PASS": "FAIL", "FAIL": "PASS", "WARN": "PASS", "ERROR": "PASS"}[status]
        new = line.replace(f"| {status} |", f"| {flipped} |", 1)
        out.append(("\n".join(lines[:i] + [new] + lines[i + 1:]), m.group("name"), f"status {status}"))
    return out


@pytest.mark.parametrize("name", ["demo", "beers", "library", "chinook"])
def test_every_mutation_of_the_template_table_is_flagged(name: str) -> None:
    doc = load(name)
    assert verify_fn(render_markdown(doc), doc).passed
    mutations = _mutations(name)
    assert len(mutations) >= len(doc.findings), "the template's table changed: update _ROW"
    missed = [what for report, finding, what in mutations
              if not any(b.finding == finding for b in verify_fn(report, doc).bad)]
    assert not missed


# ---- robustness -----------------------------------------------------------------------------------

def test_never_raises_on_arbitrary_markdown() -> None:
    pieces = st.sampled_from([
        "# ", "## ", "### ", "- ", "1. ", "  - ", "> ", "| ", " | ", "|---|---|\n", "```\n", "`", "**", "_", "\\",
        "\n", "\n\n", " ", "contacts.email.not_null", "contacts.email.unique", "companies.name.not_null", "x.y.unique",
        "37", "2,000", "1.85%", "about", "~", "45 days", "2026-11-29", "rows", "nulls", "duplicate", "passed",
        "failed", "FAIL", "PASS", "✅", "❌", "No issues found.", "All checks passed", "of", "(", ")", ":", ".",
        "three", "no", "1.2k", "<0.01%", "Failing", "Total", "Status", "Rate", "contacts", "email",
    ])
    texts = st.lists(pieces, max_size=60).map("".join)

    @hypothesis.settings(max_examples=300, deadline=None)
    @hypothesis.given(texts)
    def run(text: str) -> None:
        result = verify_fn(text, DOC)
        assert isinstance(result.passed, bool)
        data = result.to_json_dict()
        assert all(isinstance(b["message"], str) and b["message"] for b in data["bad"])

    run()


@pytest.mark.parametrize("name", ["demo", "beers", "library", "chinook"])
def test_template_with_banner_and_changes_passes(name: str) -> None:
    import inspect

    from watchdog.trends import compare

    doc = load(name)
    current = [f.to_json_dict() for f in doc.findings]
    previous = [dict(f, failing=(f["failing"] or 0) + 3, status="pass" if i % 3 == 0 else f["status"])
                for i, f in enumerate(current)]
    kwargs = {"banner": "Unverified LLM draft not delivered: 3 fix rounds failed. This is the deterministic report."}
    if "trends" in inspect.signature(render_markdown).parameters:
        kwargs["trends"] = compare(current, previous)
    result = verify_fn(render_markdown(doc, **kwargs), doc)
    assert result.passed, [b.message for b in result.bad]
