"""Fire times: cron in a time zone across both daylight-saving changes of Europe/Berlin in 2026
(29 March, 02:00 -> 03:00; 25 October, 03:00 -> 02:00), intervals, start and end dates."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from orchestrator.schedules.timing import BadTiming, Timing, check_cron, zone

BERLIN = zone("Europe/Berlin")


def utc(*args: int) -> datetime:
    return datetime(*args, tzinfo=UTC)


def cron(expr: str, tz=BERLIN, **bounds) -> Timing:
    return Timing(cron=expr, interval_seconds=None, tz=tz, anchor=utc(2026, 1, 1), **bounds)


def test_a_wall_clock_time_in_the_spring_gap_fires_at_the_first_minute_after_it():
    # 02:30 does not exist on 29 March in Berlin: it fires at 03:00 CEST (01:00 UTC), once.
    times = cron("30 2 * * *").upcoming(utc(2026, 3, 28, 0, 0), 3)
    assert times == [utc(2026, 3, 28, 1, 30), utc(2026, 3, 29, 1, 0), utc(2026, 3, 30, 0, 30)]


def test_a_wall_clock_time_in_the_repeated_autumn_hour_fires_once_at_its_first_occurrence():
    # 02:30 happens twice on 25 October: 00:30 UTC (CEST) and 01:30 UTC (CET). Only the first fires.
    times = cron("30 2 * * *").upcoming(utc(2026, 10, 24, 0, 0), 3)
    assert times == [utc(2026, 10, 24, 0, 30), utc(2026, 10, 25, 0, 30), utc(2026, 10, 26, 1, 30)]
    # Asked from inside the second pass of that hour, the next one is the next day's.
    assert cron("30 2 * * *").next_after(utc(2026, 10, 25, 1, 15)) == utc(2026, 10, 26, 1, 30)


def test_an_hourly_expression_follows_real_time_across_both_changes():
    spring = cron("0 * * * *").upcoming(utc(2026, 3, 28, 23, 30), 3)
    assert spring == [utc(2026, 3, 29, 0, 0), utc(2026, 3, 29, 1, 0), utc(2026, 3, 29, 2, 0)]
    autumn = cron("0 * * * *").latest_between(utc(2026, 10, 24, 23, 30), utc(2026, 10, 25, 2, 30), 10)
    # 02:00 local happens twice (00:00 and 01:00 UTC): both fire, one real hour apart.
    assert autumn == [utc(2026, 10, 25, 0, 0), utc(2026, 10, 25, 1, 0), utc(2026, 10, 25, 2, 0)]


def test_utc_cron_has_no_daylight_saving():
    times = cron("30 2 * * *", tz=zone("UTC")).upcoming(utc(2026, 3, 29, 0, 0), 2)
    assert times == [utc(2026, 3, 29, 2, 30), utc(2026, 3, 30, 2, 30)]


def test_walking_back_over_a_long_gap_finds_the_same_times_as_walking_forward():
    timing = cron("*/20 9-17 * * 1-5")
    low, high = utc(2026, 10, 1), utc(2026, 10, 30, 12, 0)
    forward = timing._walk_forward(low, high)
    assert timing.latest_between(low, high, 7) == forward[-7:]
    assert len(forward) > 7


def test_interval_times_count_from_the_anchor_and_respect_start_and_end():
    start = utc(2026, 5, 1, 12, 0, 0)
    timing = Timing(
        cron=None,
        interval_seconds=90,
        tz=zone("UTC"),
        anchor=start,
        start=start,
        end=start + timedelta(seconds=300),
    )
    assert timing.upcoming(utc(2026, 5, 1), 5) == [start + timedelta(seconds=s) for s in (0, 90, 180, 270)]
    assert timing.next_after(start + timedelta(seconds=270)) is None
    assert timing.latest_between(utc(2026, 1, 1), utc(2027, 1, 1), 2) == [
        start + timedelta(seconds=180),
        start + timedelta(seconds=270),
    ]


def test_cron_end_date_stops_the_preview():
    timing = cron("0 12 * * *", tz=zone("UTC"), end=utc(2026, 6, 2, 12, 0))
    assert timing.upcoming(utc(2026, 6, 1), 5) == [utc(2026, 6, 1, 12), utc(2026, 6, 2, 12)]


@pytest.mark.parametrize("expr", ["* * * *", "* * * * * *", "61 * * * *", "0 0 31 2 *", "every day"])
def test_bad_cron_expressions_are_refused(expr):
    with pytest.raises(BadTiming):
        check_cron(expr, BERLIN)


@pytest.mark.parametrize("name", ["Mars/Olympus", "../../etc/passwd", ""])
def test_unknown_time_zones_are_refused(name):
    with pytest.raises(BadTiming):
        zone(name)
