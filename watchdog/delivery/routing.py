"""Routing, shared by every channel: which problem checks a destination hears about, in how many messages, and
which of them are worth announcing again.

* A selection (``tags``, ``owners``, ``severity``, ``on: new``) keeps the problem checks a destination wants.
* ``group_by: owner`` splits them into one message per owner (checks without an owner in one "unowned" message);
  the group is part of the delivery's target (``ops@example.com · owner @alice``), so each message is claimed,
  recorded and retried apart.
* ``remind_after``: a problem already announced to the destination, unchanged, is not announced again until the
  interval has passed; a problem announced and now passing is announced once as resolved. The state lives in the
  history (:mod:`watchdog.history.alerts`), so every ``serve`` instance sharing it agrees.

:func:`plan` turns one configured channel and a run into its routes; the outbox sends each route, and
:func:`narrowed` rebuilds a route's selection from what the outbox recorded, so a retry sends the same message.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime
from typing import Any

from watchdog.findings import Finding, FindingsDoc, picks

PROBLEMS = ("fail", "error", "warn")
#: the group of the checks that have no owner (``group_by: owner``)
UNOWNED = "unowned"
#: between a destination and its owner group in a delivery's target
GROUP_MARK = " · owner "


@dataclass(frozen=True)
class Select:
    """Which problem checks a destination hears about (see ``delivery.channels.Routing``)."""

    tags: tuple[str, ...] = ()
    owners: tuple[str, ...] = ()
    severity: str | None = None
    new_only: bool = False
    #: one owner's checks (``group_by: owner``; :data:`UNOWNED`: the checks without an owner)
    group: str | None = None
    #: only these checks (``remind_after``: the problems worth announcing); None: every selected one
    names: frozenset[str] | None = None

    @classmethod
    def of(cls, config: dict[str, Any]) -> Select:
        """The selection of a channel's configuration (a ``model_dump()`` of it)."""
        return cls(tuple(config.get("tags") or ()), tuple(config.get("owners") or ()), config.get("severity"),
                   new_only=config.get("on") == "new")

    def concerns(self, f: Finding) -> bool:
        """Whether the check is one this destination follows, whatever its status (tags, owners, group)."""
        owners = set(f.owners or ())
        if not picks(f.tags or (), owners, self.tags, self.owners):
            return False
        if self.group is not None and not (self.group in owners if self.group != UNOWNED else not owners):
            return False
        return self.names is None or f.name in self.names

    def keeps(self, f: Finding, trends: dict[str, str]) -> bool:
        if not self.concerns(f):
            return False
        if self.severity == "fail" and f.status == "warn":
            return False
        # new: not a problem in the previous run (without a previous run, every problem is new)
        return not (self.new_only and trends and trends.get(f.name) != "new")

    def describe(self) -> str:
        parts = [f"tags: {', '.join(self.tags)}" if self.tags else "",
                 f"owners: {', '.join(self.owners)}" if self.owners else "",
                 f"severity: {self.severity}" if self.severity else "", "new problems only" if self.new_only else "",
                 f"owner group {self.group}" if self.group else ""]
        return "; ".join(p for p in parts if p) or "every problem check"


def problem_findings(doc: FindingsDoc, trends: dict[str, str], select: Select | None = None) -> list[Finding]:
    """The problem checks a destination hears about, failing first, then erroring, then warning."""
    chosen = select or Select()
    return [f for status in PROBLEMS for f in doc.findings if f.status == status and chosen.keeps(f, trends)]


def resolved_findings(doc: FindingsDoc, trends: dict[str, str], select: Select | None = None) -> list[Finding]:
    """The checks this destination follows that passed again since the previous run."""
    chosen = select or Select()
    return [f for f in doc.findings if trends.get(f.name) == "resolved" and chosen.concerns(f)]


def target_of(destination: str, group: str | None) -> str:
    return destination if group is None else f"{destination}{GROUP_MARK}{group}"


def destination_of(target: str, spec: dict[str, Any] | None = None) -> str:
    """The destination (an address, a fingerprint) of a delivery's target.

    The route's ``spec`` names it (``destination``), so an owner or an address containing `` · `` never
    confuses it; a delivery recorded without it (by an older version) is read from the target's text, cut at
    the marks this module and the outbox add (`` · owner ``, `` · deliver N``).
    """
    if spec and spec.get("destination"):
        return str(spec["destination"])
    base = target.split(GROUP_MARK, 1)[0] if spec and spec.get("group") is not None else target
    return re.sub(r" · deliver \d+$", "", base)


def owner_groups(problems: list[Finding]) -> list[str]:
    """The owner groups of ``group_by: owner``: each owner of a problem check, in order, then the unowned."""
    named = list(dict.fromkeys(o for f in problems for o in f.owners or ()))
    return named + ([UNOWNED] if any(not f.owners for f in problems) else [])


@dataclass
class Route:
    """One message of a channel for a run: where it goes, what it lists, or why it is not sent."""

    target: str
    select: Select
    skip: str | None = None
    #: what the outbox records beside the delivery, to rebuild this route on a retry and to remember what
    #: was announced (``remind_after``)
    spec: dict[str, Any] = field(default_factory=dict)


def narrowed(select: Select, spec: dict[str, Any]) -> Select:
    """A channel's selection narrowed to one recorded route (its group; the checks it announced)."""
    names = spec.get("announce")
    return replace(select, group=spec.get("group"),
                   names=frozenset(names) | frozenset(spec.get("resolved") or ()) if names is not None else None)


def remind_seconds(config: dict[str, Any]) -> float | None:
    from watchdog.delivery.channels import every_seconds

    value = config.get("remind_after")
    return every_seconds(value) if value else None


def plan(config: dict[str, Any], doc: FindingsDoc, trends: dict[str, str], destinations: Any,
         announced: Any = None, now: datetime | None = None, taken: set[str] | None = None,
         mark: str = "") -> list[Route]:
    """The routes of one configured channel for a run.

    ``destinations(owners)`` gives the channel's destinations for a message listing those owners' checks (e-mail
    adds their addresses); ``announced(target)`` the problems already announced there, ``{name: (status,
    announced_at)}`` (``remind_after`` only).
    """
    base = Select.of(config)
    on = config.get("on", "problems")
    problems = problem_findings(doc, trends, base)
    groups: list[str | None] = list(owner_groups(problems)) if config.get("group_by") == "owner" else []
    if not groups:
        groups = [None]
    remind = remind_seconds(config)
    moment = now or datetime.now(UTC)
    routes = []
    for group in groups:
        select = replace(base, group=group)
        listed = [f for f in problems if select.concerns(f)]
        owners = [group] if group not in (None, UNOWNED) else list(dict.fromkeys(
            o for f in listed for o in f.owners or ()))
        for destination in destinations(owners):
            target = target_of(destination, group)
            if taken is not None:
                target = target + mark if target in taken else target
                taken.add(target)
            spec: dict[str, Any] = {"destination": destination}
            if group is not None:
                spec["group"] = group
            route = Route(target, select, spec=spec)
            if remind is not None and announced is not None:
                _suppress(route, listed, doc, trends, announced(target), remind, moment, quiet=on != "always")
            elif not listed and on != "always" and not doc.error:
                route.skip = f"the selection ({select.describe()}) matched no problem check"
            routes.append(route)
    return routes


def _suppress(route: Route, listed: list[Finding], doc: FindingsDoc, trends: dict[str, str],
              before: dict[str, tuple[str, str]], remind_s: float, now: datetime, *, quiet: bool) -> None:
    """Narrow ``route`` to what is worth announcing: new or changed problems, problems last announced longer
    than ``remind_s`` ago, and announced problems that pass now (once)."""
    announce = []
    for f in listed:
        seen = before.get(f.name)
        if seen is not None and seen[0] == f.status and trends.get(f.name) not in ("new", "worse"):
            at = datetime.fromisoformat(seen[1].replace("Z", "+00:00"))
            if (now - at).total_seconds() < remind_s:
                continue
        announce.append(f.name)
    passing = {f.name for f in doc.findings if f.status == "pass"}
    resolved = sorted(name for name in before if name in passing)
    gone = sorted(name for name in before if name not in passing and name not in {f.name for f in listed})
    route.spec.update(announce=announce, statuses={f.name: f.status for f in listed if f.name in announce},
                      resolved=resolved, forget=gone)
    route.select = narrowed(route.select, route.spec)
    if quiet and not announce and not resolved and not doc.error:
        kept = len(listed)
        route.skip = (f"the selection ({route.select.describe()}) matched no problem check" if not kept else
                      f"{kept} unchanged problem check{'s' if kept != 1 else ''} already announced within "
                      f"remind_after")
