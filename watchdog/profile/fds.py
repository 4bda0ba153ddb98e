"""Functional-dependency suggestions: column pairs chosen from the profile, then proven on the data.

A pair ``X -> Y`` is tried when X repeats (at least two non-null rows per distinct value on average,
and at least ``PROFILE_FD_MIN_SUPPORT`` rows that repeat a value of X, so the rule is tested on enough rows:
a dependency seen on 8 rows is chance), Y has at least two values and is not a key, and Y has no more
distinct values than X, give or take the 1% of rows that may break it. At most ``PROFILE_FD_PAIRS`` pairs per table,
dependents with more distinct values first (a dependency on a many-valued column is least likely to
hold by chance), and per dependent only the two determinants with the fewest distinct values (the
tightest, e.g. zip before phone for city). Each pair runs as a ``functional_dependency`` check in the
suggest scan (one GROUP BY statement each, through the sandbox); ``settle`` then keeps the ones that hold on at least
``PROFILE_FD_MIN_HOLD`` of the rows, with a ``max_rate`` just above today's rate when not all do; a
near-dependency (holding on at least ``PROFILE_FD_NEAR_HOLD`` of the rows, but fewer) is written commented
out with its measured failure, as other kinds that fail today are.
"""

from __future__ import annotations

import math

from watchdog.defaults import PROFILE_FD_MIN_HOLD, PROFILE_FD_MIN_SUPPORT, PROFILE_FD_NEAR_HOLD, PROFILE_FD_PAIRS
from watchdog.profile.rules import Candidate, n, pct
from watchdog.profile.stats import ColumnProfile, TableProfile

KIND = "functional_dependency"
FAMILIES = ("text", "int", "bool", "date")
#: determinants tried per dependent column
PER_DEPENDENT = 2


def fd_candidates(profile: TableProfile, max_pairs: int = PROFILE_FD_PAIRS,
                  min_hold: float = PROFILE_FD_MIN_HOLD) -> list[Candidate]:
    """The column pairs worth trying on ``profile``'s table (not yet run)."""
    if profile.rows == 0:
        return []
    key = profile.primary_key[0] if len(profile.primary_key) == 1 else None

    def known(c: ColumnProfile) -> bool:
        return c.family in FAMILIES and c.distinct is not None and c.distinct >= 2 and c.name != key

    determinants = [c for c in profile.columns if known(c) and profile.rows - c.nulls >= 2 * (c.distinct or 0)
                    and profile.rows - c.nulls - (c.distinct or 0) >= PROFILE_FD_MIN_SUPPORT]
    dependents = [c for c in profile.columns if known(c) and (c.distinct or 0) < profile.rows - c.nulls]
    # each row that breaks a dependency can add one value to Y: it may have that many more than X
    slack = math.floor((1 - min_hold) * profile.rows)
    pairs = []
    for y in dependents:  # the tightest determinants of each dependent: fewest distinct values above its own
        fits = sorted((x for x in determinants if x.name != y.name and (y.distinct or 0) <= (x.distinct or 0) + slack),
                      key=lambda x: ((x.distinct or 0) < (y.distinct or 0), x.distinct or 0, x.name))
        pairs += [(x, y) for x in fits[:PER_DEPENDENT]]
    pairs.sort(key=lambda p: (-(p[1].distinct or 0), p[0].distinct or 0, p[0].name, p[1].name))
    return [Candidate(profile.name, KIND, {"determinant": [x.name], "dependent": y.name},
                      f"{x.name} -> {y.name}", origin="fd") for x, y in pairs[:max_pairs]]


def settle(candidate: Candidate, min_hold: float = PROFILE_FD_MIN_HOLD,
           near_hold: float = PROFILE_FD_NEAR_HOLD) -> Candidate | None:
    """A tried pair after its run: kept (with its evidence, and a tolerance when a few rows violate), kept failing
    (a near-dependency: written commented out with its measured failure) or None."""
    if candidate.status not in ("pass", "fail") or candidate.measured is None:
        return None
    failing, total = candidate.measured
    x, y = candidate.options["determinant"][0], candidate.options["dependent"]
    if not total or failing / total > 1 - near_hold:
        return None
    held = pct(round(1 - failing / total, 4))
    if failing / total > 1 - min_hold:
        candidate.status = "fail"
        candidate.evidence = (f"{x} nearly determines {y}: holds on {held} of {n(total)} rows, under the "
                              f"{pct(min_hold)} a suggestion needs")
        return candidate
    if failing == 0:
        candidate.evidence = f"{x} determines {y}: holds on every one of {n(total)} rows"
        return candidate
    ceiling = math.ceil(round(failing / total * 1.5 * 1000, 6)) / 1000
    candidate.options["max_rate"] = ceiling
    candidate.status, candidate.failure = "pass", None
    candidate.evidence = (f"{x} determines {y}: holds on {held} of {n(total)} rows; "
                          f"{n(failing)} {'row violates' if failing == 1 else 'rows violate'} "
                          f"(not the most common {y} of their {x}); fails above {pct(ceiling)}")
    return candidate
