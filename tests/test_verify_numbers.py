"""Number extraction for the report verifier (watchdog.verify.numbers)."""

from __future__ import annotations

import pytest

from watchdog.report.escape import duration as format_duration
from watchdog.report.escape import percent as format_percent
from watchdog.verify.numbers import (
    MASK,
    extract_numbers,
    format_count,
    mask_non_numbers,
    parse_duration,
)


def nums(text: str) -> list[tuple[str, float]]:
    return [(n.text, n.value) for n in extract_numbers(text)]


@pytest.mark.parametrize("text, expected", [
    ("37 rows", [("37", 37)]),
    ("2,000 contacts", [("2,000", 2000)]),
    ("1,234,567 rows", [("1,234,567", 1234567)]),
    ("2\u202f410 rows", [("2\u202f410", 2410)]),
    ("rate 0.0185", [("0.0185", 0.0185)]),
    ("1.2k rows", [("1.2k", 1200)]),
    ("3M rows", [("3M", 3_000_000)]),
    ("1.5 million rows", [("1.5 million", 1_500_000)]),
    ("1.2m rows", [("1.2m", 1_200_000)]),
    ("three duplicate values", [("three", 3)]),
    ("thirty-seven contacts", [("thirty-seven", 37)]),
    ("a dozen rows", [("a dozen", 12)]),
    ("no nulls", [("no", 0)]),
    ("no duplicate values", [("no", 0)]),
])
def test_counts(text: str, expected: list[tuple[str, float]]) -> None:
    assert nums(text) == expected


def test_percentages_keep_their_precision() -> None:
    (a, b, c, d) = extract_numbers("3.08%, 3.1 %, 3 percent, 12 per cent")
    assert (a.value, a.decimals, a.percent) == (3.08, 2, True)
    assert (b.value, b.decimals, b.percent) == (3.1, 1, True)
    assert (c.value, c.decimals, c.percent) == (3, 0, True)
    assert d.percent and d.value == 12


@pytest.mark.parametrize("text, approx", [
    ("about 40", "about"), ("~40", "about"), ("≈ 40", "about"), ("roughly 40", "about"), ("nearly 40", "about"),
    ("almost 40", "about"), ("over 40", "over"), ("more than 40", "over"), ("at least 40", "over"), ("> 40", "over"),
    ("under 40", "under"), ("fewer than 40", "under"), ("less than 40", "under"), ("<40", "under"),
    ("at most 40", "under"), ("40", None),
])
def test_approximations(text: str, approx: str | None) -> None:
    (n,) = extract_numbers(text)
    assert n.approx == approx and n.value == 40


@pytest.mark.parametrize("text, seconds, unit", [
    ("45 days", 45 * 86400, 86400),
    ("45d 2h", 45 * 86400 + 7200, 3600),
    ("2h 0m", 7200, 60),
    ("1 day and 2 hours", 86400 + 7200, 3600),
    ("3,895,200 s", 3_895_200, 1),
    ("30d", 30 * 86400, 86400),
    ("90 minutes", 5400, 60),
])
def test_durations(text: str, seconds: float, unit: float) -> None:
    (n,) = extract_numbers(text)
    assert n.seconds == seconds and n.unit_seconds == unit


@pytest.mark.parametrize("text", [
    "on 2026-11-29", "at 2026-11-29T19:02:32Z", "at 06:00", "at 6:30 pm", "on 11/29/2026", "on Nov 29, 2026",
    "on 29 November 2026", "column user_id2", "version v1.2", "release 1.2.3", "ids T190232Z", "the 2nd row",
    "costs $1,200", "issue #12", "books.isbn.not_null", "see https://example.com/a/1", "reports/demo/2026/x",
    "mail x1@example.com", "2-3 rows",
])
def test_not_numbers(text: str) -> None:
    assert extract_numbers(text) == []


def test_years_are_marked() -> None:
    (year,) = extract_numbers("in 2024 the table grew")
    assert year.year
    (count,) = extract_numbers("2,024 rows")
    assert not count.year


def test_mask_keeps_offsets() -> None:
    text = "37 rows on 2026-11-29 in `t.c.not_null`"
    masked = mask_non_numbers(text)
    assert len(masked) == len(text) and MASK in masked and masked.startswith("37 rows on ")
    assert "2026" not in masked


@pytest.mark.parametrize("written, actual, ok", [
    ("37", 37, True), ("37", 38, False), ("about 40", 37, True), ("about 50", 37, False),
    ("nearly 40", 37, True), ("over 10", 11, True), ("over 10", 9, False), ("under 10", 5, True),
    ("under 10", 11, False), ("1.2k", 1190, True), ("1.2k", 1311, False), ("2k", 2410, True),
    ("2,400", 2410, True), ("2,000", 2010, True), ("40", 37, False), ("about 3", 2, True),
])
def test_matches_counts(written: str, actual: float, ok: bool) -> None:
    (n,) = extract_numbers(written)
    assert n.matches(actual) is ok


@pytest.mark.parametrize("written, rate, ok", [
    ("3.08%", 0.0308, True), ("3.1%", 0.0308, True), ("3%", 0.0308, True), ("about 3%", 0.0308, True),
    ("3.2%", 0.0308, False), ("4%", 0.0308, False), ("about 4%", 0.0308, False), ("1.85%", 0.0185, True),
    ("1.9%", 0.0185, True), ("2%", 0.0185, True), ("1.58%", 0.0185, False), ("0.38%", 0.00375, True),
    ("<0.01%", 0.00004, True), ("under 1%", 0.0016, True), ("over 50%", 0.544, True), ("over 60%", 0.544, False),
])
def test_matches_percent(written: str, rate: float, ok: bool) -> None:
    (n,) = extract_numbers(written)
    assert n.percent and n.matches(rate * 100) is ok


@pytest.mark.parametrize("written, seconds, ok", [
    ("45 days", 3_895_200, True), ("45d 2h", 3_895_200, True), ("46 days", 3_895_200, True),
    ("44 days", 3_895_200, False), ("about 6 weeks", 3_895_200, True), ("12 days", 3_895_200, False),
    ("2h 0m", 7200, True), ("3 hours", 7200, False),
])
def test_matches_durations(written: str, seconds: float, ok: bool) -> None:
    (n,) = extract_numbers(written)
    assert n.matches(seconds) is ok


def test_formatting_helpers() -> None:
    assert format_count(2000) == "2,000" and format_count(None) == "–" and format_count(2.5) == "2.5"
    assert format_percent(0.0185) == "1.85%" and format_percent(0) == "0%" and format_percent(0.00001) == "<0.01%"
    assert format_duration(3_895_200) == "45d 2h" and format_duration(7200) == "2h 0m" and format_duration(None) == "–"
    assert parse_duration("30d") == 2_592_000 and parse_duration("2h") == 7200 and parse_duration("soon") is None
