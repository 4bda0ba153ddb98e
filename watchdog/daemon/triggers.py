"""Triggers: turn an audit's ``schedule:`` into an APScheduler trigger, and forecast its next runs.

A cron string is read as crontab reads it (:mod:`watchdog.daemon.cron`); ``schedule: {every: 30s}``
is an interval in real seconds (units s, m, h, d).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from typing import Any

from apscheduler.triggers.base import BaseTrigger
from apscheduler.triggers.combining import OrTrigger
from apscheduler.triggers.interval import IntervalTrigger

from watchdog.daemon.cron import cron_trigger
from watchdog.errors import ConfigError
from watchdog.settings import AuditConfig, Every, Settings, every_seconds


def audit_trigger(audit: AuditConfig) -> BaseTrigger | None:
    """The trigger of an audit's ``schedule:`` (None when it has none)."""
    if audit.schedule is None:
        return None
    if isinstance(audit.schedule, Every):
        # intervals count real seconds: UTC, so no daylight-saving jump lengthens or shortens one
        return IntervalTrigger(seconds=every_seconds(audit.schedule.every), timezone=UTC)
    return cron_trigger(audit.schedule, audit.timezone)


def current_tick(audit: AuditConfig, now: datetime | None = None) -> datetime | None:
    """The audit's latest scheduled time at or before ``now`` (what ``watchdog run AUDIT --tick auto``
    claims, so two copies of one cron-driven run -- a Kubernetes CronJob started twice -- run once).
    An interval counts from the Unix epoch here; None without a schedule or a fire time in a year."""
    now = now or datetime.now(UTC)
    if audit.schedule is None:
        return None
    if isinstance(audit.schedule, Every):
        step = every_seconds(audit.schedule.every)
        return datetime.fromtimestamp(now.timestamp() // step * step, UTC)
    trigger = audit_trigger(audit)
    assert trigger is not None
    for window in (3600, 86400, 8 * 86400, 32 * 86400, 366 * 86400):   # the smallest span holding a fire time
        last, fire = None, trigger.get_next_fire_time(None, now - timedelta(seconds=window))
        while fire is not None and fire <= now:
            last, fire = fire, trigger.get_next_fire_time(fire, fire + timedelta(microseconds=1))
        if last is not None:
            return last
    return None


def describe_schedule(audit: AuditConfig) -> str:
    if audit.schedule is None:
        return "not scheduled"
    if isinstance(audit.schedule, Every):
        return f"every {audit.schedule.every.strip()}"
    return f"cron {audit.schedule} ({audit.timezone})"


def next_fire_times(trigger: BaseTrigger, count: int, now: datetime | None = None) -> list[datetime]:
    """The next ``count`` fire times of ``trigger`` after ``now``, as the scheduler computes them."""
    now = now or datetime.now(UTC)
    times: list[datetime] = []
    previous: datetime | None = None
    while len(times) < count:
        fire = trigger.get_next_fire_time(previous, previous or now)
        if fire is None:
            break
        times.append(fire.astimezone(UTC).astimezone(fire.tzinfo))  # a real wall time (DST)
        previous = fire
    return times


@dataclass
class Upcoming:
    audit: str
    schedule: str            # "cron 0 6 * * * (UTC)", "every 30s" or "not scheduled"
    timezone: str
    next_runs: list[datetime] = field(default_factory=list)

    @property
    def scheduled(self) -> bool:
        return self.schedule != "not scheduled"

    def to_json_dict(self) -> dict[str, Any]:
        return {"audit": self.audit, "schedule": self.schedule, "scheduled": self.scheduled,
                "timezone": self.timezone, "next_runs": [t.isoformat() for t in self.next_runs]}


def upcoming_runs(settings: Settings, count: int = 3, now: datetime | None = None) -> list[Upcoming]:
    """Each configured audit with its next ``count`` run times (interval audits: counted from ``now``;
    the daemon counts them from its start)."""
    now = now or datetime.now(UTC)
    out = []
    for name, audit in settings.audits.items():
        trigger = audit_trigger(audit)
        times = next_fire_times(trigger, count, now) if trigger is not None else []
        out.append(Upcoming(name, describe_schedule(audit), audit.timezone, times))
    return out


def _schedule_key(trigger: BaseTrigger) -> Any:
    """What identifies a schedule (an interval trigger's start date does not)."""
    if isinstance(trigger, IntervalTrigger):
        return ("interval", trigger.interval.total_seconds(), str(trigger.timezone))
    if isinstance(trigger, OrTrigger):
        return ("or", tuple(_schedule_key(t) for t in trigger.triggers))
    return (type(trigger).__name__, repr(trigger))


def same_schedule(a: BaseTrigger, b: BaseTrigger) -> bool:
    return _schedule_key(a) == _schedule_key(b)


def scheduled_triggers(settings: Settings) -> dict[str, BaseTrigger]:
    """``{audit name: trigger}`` for every audit with a ``schedule:`` (fresh triggers: an interval
    counts from now); raises ConfigError for a schedule that cannot be read."""
    triggers = {}
    for name, audit in settings.audits.items():
        try:
            trigger = audit_trigger(audit)
        except ValueError as exc:
            raise ConfigError(f"{settings.source}: audits.{name}.schedule: {exc}") from None
        if trigger is not None:
            triggers[name] = trigger
    return triggers
