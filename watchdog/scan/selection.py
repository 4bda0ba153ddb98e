"""Run only some checks of the suites: those with a tag, of an owner, without an excluded tag.

``watchdog scan --tags finance --owner @alice --exclude-tags pii`` and ``watchdog.scan(..., tags=...)`` read
the suites whole (every problem in them is still reported), then keep the checks the selection matches, so
the scanner batches only those into its statements. A check is kept when it has one of ``tags`` (if any are
given), one of ``owners`` (if any), and none of ``exclude_tags``. Owners and tags are the inherited ones
(suite -> table -> check), compared as written.

A selection that keeps no check is the "nothing to check" error of an empty suite (exit 3), unless
``allow_empty``: a CI gate must not pass because a tag was mistyped.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, replace
from pathlib import Path

from watchdog.errors import did_you_mean
from watchdog.findings import picks
from watchdog.scan.check_types import Check
from watchdog.scan.suites import Suite, SuiteError, SuiteProblem, load_suites


def _names(values: Iterable[str] | str | None) -> tuple[str, ...]:
    """Names as given: repeated options and comma-separated lists (``--tags finance,pii``) alike."""
    if values is None:
        return ()
    if isinstance(values, str):
        values = [values]
    out = [part.strip() for value in values for part in str(value).split(",")]
    return tuple(dict.fromkeys(p for p in out if p))


@dataclass(frozen=True)
class CheckSelection:
    """Which checks of the suites run (all of them when nothing is given)."""

    tags: tuple[str, ...] = ()
    owners: tuple[str, ...] = ()
    exclude_tags: tuple[str, ...] = ()

    @classmethod
    def of(cls, tags: Iterable[str] | str | None = None, owners: Iterable[str] | str | None = None,
           exclude_tags: Iterable[str] | str | None = None) -> CheckSelection:
        return cls(_names(tags), _names(owners), _names(exclude_tags))

    def __bool__(self) -> bool:
        return bool(self.tags or self.owners or self.exclude_tags)

    def keeps(self, check: Check) -> bool:
        return picks(check.tags, check.owners, self.tags, self.owners) and not set(check.tags) & set(self.exclude_tags)

    def describe(self, config: bool = False) -> str:
        """``--tags finance --owner @alice --exclude-tags pii``, as the command line writes it (``config``: as
        an audit's configuration does, ``tags: [finance], owners: [@alice], exclude_tags: [pii]``)."""
        if config:
            return ", ".join(f"{key}: [{', '.join(values)}]" for key, values in (
                ("tags", self.tags), ("owners", self.owners), ("exclude_tags", self.exclude_tags)) if values)
        parts = [f"--tags {','.join(self.tags)}" if self.tags else "",
                 " ".join(f"--owner {o}" for o in self.owners),
                 f"--exclude-tags {','.join(self.exclude_tags)}" if self.exclude_tags else ""]
        return " ".join(p for p in parts if p)


def select_checks(suites: list[Suite], selection: CheckSelection | None, *, allow_empty: bool = False,
                  audit: str | None = None) -> list[Suite]:
    """The suites with only the checks ``selection`` keeps (the suites themselves when nothing is selected).
    Raises :class:`SuiteError` ("nothing to check") when no check is kept, unless ``allow_empty``; ``audit``:
    the selection is that audit's configuration (the message says so)."""
    if not selection:
        return suites
    kept = [replace(suite, checks=[c for c in suite.checks if selection.keeps(c)]) for suite in suites]
    if allow_empty or any(suite.checks for suite in kept):
        return kept
    every = [check for suite in suites for check in suite.checks]
    raise SuiteError([SuiteProblem(None, None, "", _why_none(selection, every, audit))])


def load_selected(paths: list[Path], selection: CheckSelection | None, *, allow_empty: bool,
                  audit: str | None = None) -> list[Suite]:
    """The suites at ``paths`` with only the checks ``selection`` keeps (an audit's ``tags``/``owners``/
    ``exclude_tags``; ``watchdog scan``'s options)."""
    return select_checks(load_suites(paths, allow_empty=allow_empty), selection, allow_empty=allow_empty,
                         audit=audit)


def _why_none(selection: CheckSelection, checks: list[Check], audit: str | None = None) -> str:
    """The "nothing to check" message of a selection: what it asked, and what the suites carry."""
    known_tags = sorted({t for c in checks for t in c.tags})
    known_owners = sorted({o for c in checks for o in c.owners})
    hints = [f"no check is tagged {t!r}{did_you_mean(t, known_tags)}" for t in selection.tags if t not in known_tags]
    hints += [f"no check is owned by {o!r}{did_you_mean(o, known_owners)}" for o in selection.owners
              if o not in known_owners]
    carried = (f"the suites' tags: {', '.join(known_tags) or 'none'}; "
               f"owners: {', '.join(known_owners) or 'none'}")
    count = f"{len(checks)} check{'s' if len(checks) != 1 else ''}"
    asked = (f"the selection of audit {audit!r} ({selection.describe(config=True)})" if audit is not None else
             f"the selection {selection.describe()}")
    allow = "`allow_empty: true` on the audit" if audit is not None else "`--allow-empty`"
    return (f"nothing to check: {asked} matches none of the {count} "
            f"of the suites ({'; '.join(hints) + '; ' if hints else ''}{carried}); a scan without checks would "
            f"pass without checking anything. Change the selection, or allow it with {allow}")
