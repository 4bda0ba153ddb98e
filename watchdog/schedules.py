"""Schedules: turn an audit's ``schedule:`` into an APScheduler trigger, and forecast its next runs.

``schedule: "0 6 * * 1"`` means Mondays at 06:00 in the audit's ``timezone``, as in crontab:
weekdays count from Sunday (0 or 7), and when both day-of-month and day-of-week are restricted a day
matching either fires. (APScheduler 3's own ``CronTrigger.from_crontab`` counts weekdays from
Monday = 0 and ANDs the two day fields; :func:`cron_trigger` translates.) ``schedule: {every: 30s}``
is an interval in real seconds (units s, m, h, d).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime, timezone
from typing import Any
from zoneinfo import ZoneInfo

from apscheduler.triggers.base import BaseTrigger
from apscheduler.triggers.combining import OrTrigger
from apscheduler.triggers.cron import CronTrigger
from apscheduler.triggers.interval import IntervalTrigger

from watchdog.errors import ConfigError
from watchdog.settings import AuditConfig, Every, Settings, every_seconds

_WEEKDAYS = ("sun", "mon", "tue", "wed", "thu", "fri", "sat")


def _cron_weekday(token: str) -> int:
    """A crontab weekday, 0-7 (0 and 7 are Sunday) or a name; returned as 0-7."""
    text = token.strip().lower()
    if text.isdigit() and 0 <= int(text) <= 7:
        return int(text)
    if text in _WEEKDAYS:
        return _WEEKDAYS.index(text)
    raise ValueError(f"{token!r} is not a weekday (0-7 or sun..sat)")


def crontab_weekdays(field_text: str) -> str:
    """A crontab day-of-week field (0 or 7 = Sunday, ``1-5``, ``*/2``, ``mon,wed``) as APScheduler 3
    reads it: ``*``, or weekday names (APScheduler 3 numbers Monday 0, so numbers are never passed)."""
    if field_text == "*":
        return "*"
    days: set[int] = set()
    for part in field_text.split(","):
        base, _, step_text = part.partition("/")
        step = int(step_text) if step_text else 1
        if step < 1:
            raise ValueError(f"bad step in the weekday field {field_text!r}")
        if base == "*":
            low, high = 0, 7
        elif "-" in base:
            first, last = base.split("-", 1)
            low, high = _cron_weekday(first), _cron_weekday(last)
            if low > high:
                raise ValueError(f"backwards range {base!r} in the weekday field {field_text!r}")
        else:
            low = _cron_weekday(base)
            high = 7 if step_text else low
        days.update(day % 7 for day in range(low, high + 1, step))
    return ",".join(_WEEKDAYS[day] for day in sorted(days))


def cron_trigger(expr: str, tz: str | ZoneInfo = "UTC") -> BaseTrigger:
    """A trigger for a 5-field crontab string, with crontab's meaning, in the time zone ``tz``.

    Weekdays count from Sunday (0 or 7) and, when both day-of-month and day-of-week are restricted
    (neither starts with ``*``), a day matching *either* fires, as in cron.
    """
    fields = expr.split()
    if len(fields) != 5:
        raise ValueError(f"expected a 5-field cron string (minute hour day month weekday), got {expr!r}")
    minute, hour, day, month, weekday = fields
    zone = ZoneInfo(tz) if isinstance(tz, str) else tz

    def make(day_field: str, weekday_field: str) -> CronTrigger:
        return CronTrigger(minute=minute, hour=hour, day=day_field, month=month,
                           day_of_week=crontab_weekdays(weekday_field), timezone=zone)

    if day.startswith("*") or weekday.startswith("*"):
        return make(day, weekday)
    return OrTrigger([make(day, "*"), make("*", weekday)])


def audit_trigger(audit: AuditConfig) -> BaseTrigger | None:
    """The trigger of an audit's ``schedule:`` (None when it has none)."""
    if audit.schedule is None:
        return None
    if isinstance(audit.schedule, Every):
        # intervals count real seconds: UTC, so no daylight-saving jump lengthens or shortens one
        return IntervalTrigger(seconds=every_seconds(audit.schedule.every), timezone=timezone.utc)
    return cron_trigger(audit.schedule, audit.timezone)


def describe_schedule(audit: AuditConfig) -> str:
    if audit.schedule is None:
        return "not scheduled"
    if isinstance(audit.schedule, Every):
        return f"every {audit.schedule.every.strip()}"
    return f"cron {audit.schedule} ({audit.timezone})"


def next_fire_times(trigger: BaseTrigger, count: int, now: datetime | None = None) -> list[datetime]:
    """The next ``count`` fire times of ``trigger`` after ``now``, as the scheduler computes them."""
    now = now or datetime.now(timezone.utc)
    times: list[datetime] = []
    previous: datetime | None = None
    while len(times) < count:
        fire = trigger.get_next_fire_time(previous, previous or now)
        if fire is None:
            break
        times.append(fire.astimezone(timezone.utc).astimezone(fire.tzinfo))  # a real wall time (DST)
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
    now = now or datetime.now(timezone.utc)
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
