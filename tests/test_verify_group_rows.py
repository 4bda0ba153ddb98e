"""verify_fn: a unique check's rows of the duplicated groups, worded without a failure word."""

from __future__ import annotations

import pytest

from watchdog.findings import Finding, FindingsDoc, Summary
from watchdog.verify import verify_fn

# 3 duplicated emails over 9 rows: 6 of them beyond the first of each group
UNIQUE = Finding(name="customers.email.unique", check="unique", table="customers", column="email", status="fail",
                 failing=9, total=600_000, rate=9 / 600_000, details={"duplicate_values": 3, "excess_rows": 6})
ONE_VALUE = "Anna Berg"
DOC = FindingsDoc(database="sqlite://", started_at="2026-11-29T00:00:00Z", duration_s=0.1,
                  summary=Summary.of([UNIQUE]), findings=[UNIQUE])


def bad(sentence: str) -> list[str]:
    report = f"# Customers\n\n- `customers.email.unique` failed: {sentence}\n"
    return [b.actual for b in verify_fn(report, DOC).bad]


@pytest.mark.parametrize("sentence", [
    "3 emails are duplicated, 9 rows in all, 6 of them surplus.",
    "3 emails are duplicated, 600,000 rows in all.",  # "in all" may mean the table: never flagged
    "the 3 duplicated emails repeat across 9 customers.",
    "the duplicated emails cover 9 rows in total; 6 are extra copies.",
    "3 emails appear 9 times.",
    "3 emails appear in 9 rows.",
    f"{ONE_VALUE} appears 4 times.",  # one value's group, not all of them
    "3 emails are shared, and with the phone duplicates together they cover 15 rows in all.",  # summed
    "the duplicates grew from 4 rows in all last week to 9 now.",  # a change
])
def test_correct_wordings_pass(sentence: str) -> None:
    assert bad(sentence) == []


@pytest.mark.parametrize("sentence", [
    "3 emails are duplicated, 12 rows in all, 6 of them surplus.",  # the example
    "12 rows in all, 6 of them surplus.",
    "the 3 duplicated emails repeat across 12 customers.",
    "the duplicated emails cover 12 rows in total.",
    "3 emails appear 12 times.",
    "3 emails appear in 12 rows.",
])
def test_wrong_counts_of_the_groups_are_flagged(sentence: str) -> None:
    assert bad(sentence) == ["9"]


def test_message_names_the_rows_of_the_groups() -> None:
    report = "# Customers\n\n- `customers.email.unique` failed: 3 emails are duplicated, 12 rows in all.\n"
    (item,) = verify_fn(report, DOC).bad
    assert "12 rows" in item.message and "9 rows in the duplicated groups" in item.message
