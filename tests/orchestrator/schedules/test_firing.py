"""The scheduler tick with a controlled `now`: catch-up policies, pause and resume, clocks that jump,
start and end dates, and exactly-once firing under concurrent ticks and a fire that fails between
the run insert and the commit."""

from __future__ import annotations

import threading
from datetime import datetime, timedelta

import pytest
from django.db import connection

from orchestrator.definitions.models import TaskDefinition
from orchestrator.runs.models import Run, TaskRun
from orchestrator.schedules.firing import schedules_tick
from orchestrator.schedules.models import Schedule
from orchestrator.schedules.services import (
    ScheduleSpec,
    schedule_create,
    schedule_set_paused,
    schedule_update,
)
from shared.api.time import now_ms
from tests.orchestrator.helpers import put_dag, put_task

HOUR = timedelta(hours=1)


@pytest.fixture
def dag(api):
    put_task(api, "fire_a", "echo a")
    put_task(api, "fire_b", "echo b", dependencies=["fire_a"])
    put_dag(api, "fire_dag", [{"id": "fire_a"}, {"id": "fire_b"}])
    return "fire_dag"


def hourly(dag: str, **fields) -> Schedule:
    return schedule_create(schedule_id=None, spec=ScheduleSpec(dag_id=dag, interval_seconds=3600, **fields))


def fire_times(schedule: Schedule) -> list[datetime]:
    return list(
        Run.objects.filter(schedule_id=schedule.id).order_by("fire_time").values_list("fire_time", flat=True)
    )


def cursor(schedule: Schedule) -> datetime:
    return Schedule.objects.get(pk=schedule.pk).next_fire_time


@pytest.mark.django_db
def test_a_due_fire_time_makes_one_run_and_moves_the_cursor(dag):
    schedule = hourly(dag)
    first = schedule.next_fire_time
    assert schedules_tick(now=first - timedelta(seconds=1)) == 0  # not yet due
    assert schedules_tick(now=first + timedelta(seconds=2)) == 1
    assert schedules_tick(now=first + timedelta(seconds=3)) == 0  # the same fire time, again: nothing
    assert fire_times(schedule) == [first] and cursor(schedule) == first + HOUR
    run = Run.objects.get(schedule_id=schedule.id)
    assert run.dag_id == dag and set(TaskRun.objects.filter(run=run).values_list("task_id", flat=True)) == {
        "fire_a",
        "fire_b",
    }
    refreshed = Schedule.objects.get(pk=schedule.pk)
    assert refreshed.last_fire_time == first and refreshed.last_run_id == run.run_id


@pytest.mark.django_db
@pytest.mark.parametrize(
    ("catchup", "max_catchup", "expected_offsets"),
    [
        ("none", 10, []),  # ten missed hours, the latest 30 minutes old: past the grace, skipped
        ("latest", 10, [10]),  # only the most recent missed one
        ("all", 4, [7, 8, 9, 10]),  # the most recent max_catchup
        ("all", 50, list(range(11))),  # every missed one
    ],
)
def test_catch_up_policies_after_a_forward_jump(dag, catchup, max_catchup, expected_offsets):
    schedule = hourly(dag, catchup=catchup, max_catchup=max_catchup)
    first = schedule.next_fire_time
    now = first + 10 * HOUR + timedelta(minutes=30)
    schedules_tick(now=now)
    assert fire_times(schedule) == [first + k * HOUR for k in expected_offsets]
    assert cursor(schedule) == first + 11 * HOUR  # every missed time is handled, fired or not


@pytest.mark.django_db
def test_none_still_fires_a_fire_time_within_the_grace(dag, settings):
    settings.SCHEDULER_MISFIRE_GRACE_SECONDS = 60
    schedule = hourly(dag, catchup="none")
    first = schedule.next_fire_time
    assert schedules_tick(now=first + timedelta(seconds=45)) == 1  # a late tick, not a missed time
    assert schedules_tick(now=first + HOUR + timedelta(seconds=61)) == 0  # missed by more than the grace
    assert fire_times(schedule) == [first]


@pytest.mark.django_db
def test_a_clock_jumping_back_fires_nothing_twice(dag):
    schedule = hourly(dag, catchup="all")
    first = schedule.next_fire_time
    schedules_tick(now=first + 2 * HOUR)
    assert fire_times(schedule) == [first, first + HOUR, first + 2 * HOUR]
    for back in (first + 2 * HOUR, first + HOUR, first, first - HOUR):
        assert schedules_tick(now=back) == 0
    schedules_tick(now=first + 3 * HOUR)  # forward again: only the new fire time
    assert fire_times(schedule) == [first + k * HOUR for k in range(4)]


@pytest.mark.django_db
def test_paused_schedules_do_not_fire_and_resume_applies_the_policy(dag):
    latest = hourly(dag, catchup="latest")
    skip = hourly(dag, catchup="none")
    first = latest.next_fire_time
    for schedule in (latest, skip):
        schedule_set_paused(schedule_id=schedule.id, paused=True)
    assert schedules_tick(now=first + 5 * HOUR + timedelta(minutes=10)) == 0
    for schedule in (latest, skip):
        schedule_set_paused(schedule_id=schedule.id, paused=False)
    schedules_tick(now=first + 5 * HOUR + timedelta(minutes=10))
    assert fire_times(latest) == [latest.next_fire_time + 5 * HOUR]  # one, not six
    assert fire_times(skip) == []


@pytest.mark.django_db
def test_start_and_end_dates_bound_the_fire_times(dag):
    start = now_ms().replace(microsecond=0) + 2 * HOUR
    end = start + 2 * HOUR
    schedule = hourly(dag, start_date=start, end_date=end, catchup="all")
    assert schedule.next_fire_time == start  # interval times count from the start date
    assert schedules_tick(now=start - timedelta(seconds=1)) == 0
    schedules_tick(now=end + 10 * HOUR)
    assert fire_times(schedule) == [start, start + HOUR, end]
    assert cursor(schedule) is None  # no fire time left


@pytest.mark.django_db
def test_a_fire_time_whose_target_is_gone_makes_no_run_and_says_why(dag, api):
    put_task(api, "lonely", "echo lonely")
    schedule = schedule_create(schedule_id=None, spec=ScheduleSpec(task_id="lonely", interval_seconds=60))
    first = schedule.next_fire_time
    TaskDefinition.objects.filter(pk="lonely").delete()
    assert schedules_tick(now=first + timedelta(seconds=1)) == 0
    refreshed = Schedule.objects.get(pk=schedule.pk)
    assert "lonely not found" in refreshed.last_error and refreshed.next_fire_time == first + timedelta(
        minutes=1
    )


@pytest.mark.django_db(transaction=True)
def test_a_fire_failing_before_commit_leaves_neither_run_nor_cursor_move(dag):
    """A real constraint refuses the cursor update, which comes after the run and its task runs and
    events were inserted: the whole fire rolls back. Once the constraint is gone, the same fire time
    makes exactly one run."""
    schedule = hourly(dag)
    first = schedule.next_fire_time
    runs_before, events_before = Run.objects.count(), _event_count()
    with connection.cursor() as cur:
        cur.execute(
            "ALTER TABLE orch_schedules_schedule ADD CONSTRAINT test_refuse_fire"
            " CHECK (last_run_id IS NULL) NOT VALID"
        )
    try:
        assert schedules_tick(now=first + timedelta(seconds=5)) == 0
        assert Run.objects.count() == runs_before and _event_count() == events_before
        assert not TaskRun.objects.filter(run__schedule_id=schedule.id).exists()
        assert cursor(schedule) == first
    finally:
        with connection.cursor() as cur:
            cur.execute("ALTER TABLE orch_schedules_schedule DROP CONSTRAINT test_refuse_fire")
    assert schedules_tick(now=first + timedelta(seconds=6)) == 1
    assert fire_times(schedule) == [first] and cursor(schedule) == first + HOUR


def _event_count() -> int:
    from orchestrator.events.models import Event

    return Event.objects.count()


@pytest.mark.django_db(transaction=True)
def test_concurrent_ticks_fire_each_fire_time_exactly_once(dag, caplog):
    schedules = [hourly(dag, catchup="all", max_catchup=3) for _ in range(8)]
    first = min(s.next_fire_time for s in schedules)
    barrier = threading.Barrier(4)
    made: list[int] = []
    failures: list[BaseException] = []

    def ticker(name: str) -> None:
        try:
            barrier.wait()
            for step in range(3):
                made.append(schedules_tick(now=first + (4 + step) * HOUR, ticker=name))
        except BaseException as exc:  # noqa: BLE001 - reported by the main thread
            failures.append(exc)
        finally:
            connection.close()

    threads = [threading.Thread(target=ticker, args=(f"t{i}",)) for i in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=120)
    assert not failures, failures
    # The row locks keep ticks apart: no tick even tried a fire time another one had (the unique
    # constraint would have refused it, and the tick logged the error).
    assert not [r for r in caplog.records if r.levelname == "ERROR"], caplog.text
    # Each schedule: the three most recent missed fire times at the tick that first claimed it, then
    # each later one up to the last tick's now; never a (schedule, fire time) twice.
    rows = list(Run.objects.filter(schedule_id__isnull=False).values_list("schedule_id", "fire_time"))
    assert len(rows) == len(set(rows)) == sum(made)
    for schedule in schedules:
        times = fire_times(schedule)
        assert 3 <= len(times) <= 5
        assert [b - a for a, b in zip(times, times[1:], strict=False)] == [HOUR] * (len(times) - 1)
        assert times[-1] == cursor(schedule) - HOUR and times[-1] <= first + 6 * HOUR < cursor(schedule)


@pytest.mark.django_db
def test_a_replace_that_moves_the_cursor_back_over_a_fired_time_does_not_fire_it_again(dag):
    schedule = hourly(dag)
    first = schedule.next_fire_time
    assert schedules_tick(now=first + timedelta(seconds=1)) == 1  # the clock ran ahead, then is set back
    replaced = schedule_update(schedule_id=schedule.id, spec=ScheduleSpec(dag_id=dag, interval_seconds=3600))
    assert replaced.next_fire_time == first  # the first fire time after the (real) now, again
    assert schedules_tick(now=first + timedelta(seconds=2)) == 0
    assert fire_times(schedule) == [first] and cursor(schedule) == first + HOUR
