"""Cron times in a time zone, with ``croniter`` and ``zoneinfo``: pure functions.

A cron expression has five fields (minute hour day month weekday) or six (seconds last).
Its times are wall-clock times of the schedule's zone: ``0 9 * * *`` in ``Europe/Berlin`` is
09:00 in Berlin in winter and in summer. Times are returned in UTC.
"""

from __future__ import annotations

import itertools
from datetime import UTC, datetime, timedelta
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

from croniter import CroniterError, croniter  # type: ignore[import-untyped]

from hansa import errors

SAMPLED = 12
"""Consecutive firings compared to find a cron's shortest interval."""


def zone(name: str) -> ZoneInfo:
    """The IANA zone ``name``; InvalidInput naming ``timezone`` when there is none."""
    try:
        if not name or name != name.strip():
            raise ValueError(name)
        return ZoneInfo(name)
    except (ZoneInfoNotFoundError, ValueError) as exc:
        raise errors.InvalidInput(
            f"timezone {name!r} is not an IANA time zone (e.g. Europe/Berlin, UTC)",
            details={"field": "timezone"},
        ) from exc


def _parsed(expression: str, start: datetime) -> croniter:
    fields = expression.split()
    if len(fields) not in (5, 6):
        raise errors.InvalidInput(
            f"cron {expression!r} must have 5 fields (minute hour day month weekday) or 6 "
            "(seconds last)",
            details={"field": "cron"},
        )
    try:
        return croniter(" ".join(fields), start)
    except (CroniterError, ValueError, KeyError) as exc:
        raise errors.InvalidInput(
            f"cron {expression!r} is not a valid cron expression: {exc}",
            details={"field": "cron"},
        ) from exc


def next_after(expression: str, timezone: str, after: datetime) -> datetime:
    """The first firing strictly after ``after`` (UTC in, UTC out)."""
    local = after.astimezone(zone(timezone))
    found: datetime = _parsed(expression, local).get_next(datetime)
    return found.astimezone(UTC)


def shortest_interval(expression: str, timezone: str, after: datetime) -> timedelta:
    """The shortest time between consecutive firings among the next ``SAMPLED``."""
    it = _parsed(expression, after.astimezone(zone(timezone)))
    times: list[datetime] = [it.get_next(datetime) for _ in range(SAMPLED)]
    return min(b.astimezone(UTC) - a.astimezone(UTC) for a, b in itertools.pairwise(times))


def check(expression: str, timezone: str, now: datetime, min_interval_seconds: float) -> None:
    """InvalidInput (naming ``cron`` or ``timezone``) unless the cron is valid in a known zone
    and never fires twice within ``min_interval_seconds``."""
    zone(timezone)
    gap = shortest_interval(expression, timezone, now)
    if gap.total_seconds() < min_interval_seconds:
        raise errors.InvalidInput(
            f"cron {expression!r} fires every {gap.total_seconds():g} s at times; schedules fire "
            f"at most once every {min_interval_seconds:g} s",
            details={"field": "cron", "minIntervalSeconds": min_interval_seconds},
        )
