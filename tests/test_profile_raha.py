"""Suites suggested from raha's clean datasets: zero failures on the clean data, and the share of the
dirty data's wrong cells they catch (measured through ``bench/profile_bench.py``'s own code).

Floors are set just under the figures measured when functional dependencies were added (hospital
84.1%, flights 70.4%, beers 99.8%; before them: 46.4%, 47.0%, 97.1%).
"""

from __future__ import annotations

from pathlib import Path

import pytest

from bench.profile_bench import raha

FLOORS = {"hospital": 0.80, "flights": 0.65, "beers": 0.99}


@pytest.mark.parametrize("name", sorted(FLOORS))
def test_raha_suite_passes_clean_and_catches_dirty(name: str, tmp_path: Path) -> None:
    result = raha(name, tmp_path)
    assert result["failures_on_clean"] == 0, result
    # only near-dependencies (holding on 90-99% of the clean rows) are written commented out
    assert set(result["commented_kinds"]) <= {"functional_dependency"}, result
    assert result["caught_share"] >= FLOORS[name], result
    # a flagged right cell is a row whose value is right but not its group's majority, or a rule's false alarm
    assert result["flagged_right_cells"] <= 0.05 * result["caught"], result
