"""Cron strings with crontab's meaning, as APScheduler 3 triggers.

``"0 6 * * 1"`` means Mondays at 06:00: weekdays count from Sunday (0 or 7), and when both
day-of-month and day-of-week are restricted a day matching either fires. (APScheduler 3's own
``CronTrigger.from_crontab`` counts weekdays from Monday = 0 and ANDs the two day fields;
:func:`cron_trigger` translates.) Pure: no settings, used by settings validation and the triggers.
"""

from __future__ import annotations

from zoneinfo import ZoneInfo

from apscheduler.triggers.base import BaseTrigger
from apscheduler.triggers.combining import OrTrigger
from apscheduler.triggers.cron import CronTrigger

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
