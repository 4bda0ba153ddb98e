"""Tags and owners: the one rule by which a scan's selection and an alert destination pick checks."""

from __future__ import annotations

from collections.abc import Iterable


def picks(tags: Iterable[str], owners: Iterable[str], want_tags: Iterable[str], want_owners: Iterable[str]) -> bool:
    """Whether a check with ``tags`` and ``owners`` has one of ``want_tags`` (when any are wanted) and one of
    ``want_owners`` (when any are wanted)."""
    wanted_tags, wanted_owners = set(want_tags), set(want_owners)
    return ((not wanted_tags or bool(wanted_tags & set(tags)))
            and (not wanted_owners or bool(wanted_owners & set(owners))))
