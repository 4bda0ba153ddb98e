"""The diagnosis's concentration rule: a pure function, exact tail, BH control, no claims on uniform defects."""

import math
import random

import pytest

from watchdog.diagnose.rule import (
    FDR,
    MIN_FAILING,
    Segment,
    benjamini_hochberg,
    concentrations,
    hypergeom_tail,
    screened,
)


def _pmf(k: int, population: int, failing: int, drawn: int) -> float:
    return math.comb(failing, k) * math.comb(population - failing, drawn - k) / math.comb(population, drawn)


@pytest.mark.parametrize("k,population,failing,drawn", [(3, 20, 5, 6), (14, 2000, 21, 628), (0, 50, 10, 10),
                                                        (10, 50, 10, 10), (11, 50, 10, 10), (21, 2000, 37, 120)])
def test_the_tail_is_the_exact_hypergeometric_tail(k, population, failing, drawn):
    exact = sum(_pmf(i, population, failing, drawn) for i in range(k, min(failing, drawn) + 1))
    assert hypergeom_tail(k, population, failing, drawn) == pytest.approx(exact, rel=1e-9, abs=1e-300)


def test_benjamini_hochberg_step_up():
    # sorted p: 0.001 (<= 1*0.05/5), 0.008 (<= 2*.05/5=.02), 0.039 (<= .03? no), 0.041 (<= .04? no), 0.9
    assert benjamini_hochberg([0.041, 0.001, 0.9, 0.008, 0.039], 0.05) == [False, True, False, True, False]
    # step-up: a later rank that passes rescues the earlier ones
    assert benjamini_hochberg([0.02, 0.02, 0.02], 0.05) == [True, True, True]
    assert benjamini_hochberg([], 0.05) == []


def test_a_planted_segment_is_reported_with_its_shares():
    # 37 failing of 2000; 21 of them in csv_import, which holds 120 rows
    segments = [Segment("source", "csv_import", 21, 120), Segment("source", "web", 10, 1200),
                Segment("source", "app", 6, 680)]
    found = concentrations(segments, 2000, 37)
    assert found == [{"column": "source", "value": "csv_import", "failing": 21, "rows": 120,
                      "share_of_failing": 0.5676, "share_of_rows": 0.06, "lift": 9.46}]


def test_small_share_low_lift_or_few_rows_are_never_reported():
    assert not screened(Segment("c", "x", MIN_FAILING - 1, 2), 1000, 2)          # too few failing rows
    assert not screened(Segment("c", "x", 10, 20), 1000, 100)                     # 10% of the failing rows
    assert not screened(Segment("c", "x", 60, 500), 1000, 100)                    # lift 1.2
    # all failing rows in a segment of 99% of the table: nothing to say
    assert concentrations([Segment("c", "big", 50, 990), Segment("c", "small", 0, 10)], 1000, 50) == []


def test_a_concentration_chance_explains_is_not_claimed():
    # 14 of 21 failing rows in a third of the table: p ~ 9e-4, not enough once 10 segments were tried
    tried = [Segment("country", "DE", 14, 628)] + [Segment("x", i, 1, 137) for i in range(9)]
    assert concentrations(tried, 2000, 21) == []


def test_null_segment_values_and_ties_are_ordered_the_same_way():
    segments = [Segment("a", None, 30, 100), Segment("b", "z", 30, 100), Segment("b", "y", 30, 100)]
    found = concentrations(segments, 10_000, 40)
    assert [(s["column"], s["value"]) for s in found] == [("a", None), ("b", "y"), ("b", "z")]


def _uniform_check(rng: random.Random) -> tuple[list[Segment], int, int]:
    """One check on a random table: failing rows drawn uniformly at random, several segment columns."""
    rows = rng.choice([200, 1000, 5000])
    rate = rng.choice([0.005, 0.02, 0.1, 0.3])
    failing_rows = [rng.random() < rate for _ in range(rows)]
    segments: list[Segment] = []
    for column, values in (("country", 3), ("source", 6), ("plan", 12), ("region", 40)):
        weights = [rng.random() + 0.05 for _ in range(values)]  # uneven segment sizes
        counts = [0] * values
        fails = [0] * values
        for v, bad in zip(rng.choices(range(values), weights, k=rows), failing_rows, strict=True):
            counts[v] += 1
            fails[v] += bad
        segments += [Segment(column, v, fails[v], counts[v]) for v in range(values) if counts[v]]
    return segments, rows, sum(failing_rows)


def test_uniform_defects_claim_at_most_one_false_segment_per_hundred_checks():
    rng = random.Random(24)
    checks = 400
    claimed = sum(len(concentrations(*_uniform_check(rng))) for _ in range(checks))
    assert claimed <= checks / 100, claimed
    assert FDR <= 0.01
