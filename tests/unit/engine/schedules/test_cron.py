"""Cron times in a time zone: next firings (across a DST change), the shortest interval,
and invalid crons and zones named in the error."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from hansa import errors
from hansa.engine.schedules import cron

NOW = datetime(2026, 3, 28, 12, 0, tzinfo=UTC)


def test_times_are_wall_clock_times_of_the_zone_across_a_dst_change() -> None:
    first = cron.next_after("0 9 * * *", "Europe/Berlin", NOW)
    assert first == datetime(2026, 3, 29, 7, 0, tzinfo=UTC)  # 09:00 CEST, the day DST starts
    assert cron.next_after("0 9 * * *", "Europe/Berlin", NOW - timedelta(days=1)) == datetime(
        2026,
        3,
        28,
        8,
        0,
        tzinfo=UTC,  # 09:00 CET, the day before
    )


def test_next_is_strictly_after() -> None:
    at = datetime(2026, 1, 1, 9, 0, tzinfo=UTC)
    assert cron.next_after("0 9 * * *", "UTC", at) == at + timedelta(days=1)
    assert cron.next_after("* * * * * */2", "UTC", at) == at + timedelta(seconds=2)


def test_shortest_interval_and_the_minimum() -> None:
    assert cron.shortest_interval("* * * * *", "UTC", NOW) == timedelta(minutes=1)
    assert cron.shortest_interval("0,1 9 * * *", "UTC", NOW) == timedelta(minutes=1)
    cron.check("* * * * *", "UTC", NOW, 60)
    with pytest.raises(errors.InvalidInput) as refused:
        cron.check("* * * * * */10", "UTC", NOW, 60)
    assert refused.value.details["field"] == "cron"


@pytest.mark.parametrize(
    ("expression", "zone", "field"),
    [
        ("61 * * * *", "UTC", "cron"),
        ("* * *", "UTC", "cron"),
        ("@daily", "UTC", "cron"),
        ("not a cron at all", "UTC", "cron"),
        ("0 9 * * *", "Mars/Olympus", "timezone"),
        ("0 9 * * *", "../../etc/passwd", "timezone"),
        ("0 9 * * *", "", "timezone"),
    ],
)
def test_invalid_crons_and_zones_name_their_field(expression: str, zone: str, field: str) -> None:
    with pytest.raises(errors.InvalidInput) as refused:
        cron.check(expression, zone, NOW, 60)
    assert refused.value.details["field"] == field
