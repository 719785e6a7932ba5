"""Timer steps fired by real Celery workers with their beat embedded (as `make run` runs them):
a timer whose time came while the worker and beat were down fires once after their restart, and
two beats racing over the same due timers fire each once."""

from __future__ import annotations

import uuid

import pytest

from casemgmt.audit.models import AuditEvent
from casemgmt.workflows.models import CaseStep
from shared.api.time import now_ms
from tests.casemgmt.workflows.conftest import task_step
from tests.support.processes import LOG_DIR, ServiceProcess, start_celery_worker, wait_for

pytestmark = [pytest.mark.worker, pytest.mark.django_db(transaction=True)]

SWEPT = "casemgmt.workflows.due_steps_sweep["  # a worker's log line per sweep it ran
SENT = "Sending due task due-steps-sweep"  # a beat's log line per sweep it sent


def start_beating_workers(env: dict[str, str], *names: str) -> list[ServiceProcess]:
    """Workers with their beat (`-B`), the due-steps sweep every half second, started together;
    ready once each log shows the worker ready and its beat sending the sweep (a ping could be
    answered by another worker)."""
    env = {**env, "CASE_WORKFLOW_TIMER_SCAN_SECONDS": "0.5"}
    workers = [
        start_celery_worker(
            name=name, app="casemgmt.config", queues=["case.default"], env=env, concurrency=1,
            extra_args=["-B", "-s", str(LOG_DIR / f"beat-{name}-{uuid.uuid4().hex[:6]}")],
        )
        for name in names
    ]  # fmt: skip
    for worker in workers:
        wait_for(
            lambda w=worker: (" ready." in w.log_text() and SENT in w.log_text()) or not w.alive(),
            timeout=90, interval=0.2, what=f"{worker.name} and its beat to start",
        )  # fmt: skip
        assert worker.alive(), worker.log_text()
    return workers


def swept_twice_more(*workers: ServiceProcess) -> None:
    """Waits until the workers ran the due-steps sweep at least twice more: anything it would fire
    a second time would have been fired by then."""
    seen = sum(w.log_text().count(SWEPT) for w in workers)
    wait_for(
        lambda: sum(w.log_text().count(SWEPT) for w in workers) >= seen + 4,
        timeout=60, interval=0.2, what="two more sweeps",
    )  # fmt: skip


def fired(case_ids: list[str]) -> int:
    return AuditEvent.objects.filter(
        action="timer:fired", resource__in=[f"cases/{case_id}/steps/cool" for case_id in case_ids]
    ).count()


@pytest.fixture
def timers(flow):
    def make(after: str, count: int) -> list[str]:
        flow.workflow(
            [{"id": "cool", "name": "Cool off", "type": "timer", "after": after}, task_step("next")]
        )
        return [flow.case()["id"] for _ in range(count)]

    return make


def test_a_timer_due_while_worker_and_beat_were_down_fires_once_after_their_restart(timers, subprocess_env):
    [first] = start_beating_workers(subprocess_env, "timer-before")
    try:
        [case_id] = timers("PT4S", 1)
        swept_twice_more(first)
        assert CaseStep.objects.get(case_id=case_id, step_id="cool").status == "active"  # not yet due
    finally:
        first.stop()
    wait_for(
        lambda: CaseStep.objects.filter(case_id=case_id, step_id="cool", fire_at__lt=now_ms()).exists(),
        timeout=30, interval=0.2, what="the timer's time to pass while nothing runs",
    )  # fmt: skip
    assert CaseStep.objects.get(case_id=case_id, step_id="cool").status == "active"

    [second] = start_beating_workers(subprocess_env, "timer-after")
    try:
        wait_for(
            lambda: CaseStep.objects.get(case_id=case_id, step_id="cool").status == "completed",
            timeout=60, interval=0.2, what="the restarted beat to fire the timer",
        )  # fmt: skip
        swept_twice_more(second)
    finally:
        second.stop()
    assert fired([case_id]) == 1
    steps = dict(CaseStep.objects.filter(case_id=case_id).values_list("step_id", "status"))
    assert steps == {"cool": "completed", "next": "active"}


def test_two_beats_racing_over_due_timers_fire_each_once(timers, subprocess_env):
    beats = start_beating_workers(subprocess_env, "timer-race-1", "timer-race-2")
    try:
        case_ids = timers("PT1S", 12)
        wait_for(
            lambda: CaseStep.objects.filter(case_id__in=case_ids, step_id="next", status="active").count() == 12,
            timeout=60, interval=0.2, what="every timer to fire",
        )  # fmt: skip
        swept_twice_more(*beats)
        assert all(SENT in beat.log_text() for beat in beats)  # both beats sent the sweep
    finally:
        for beat in beats:
            beat.stop()
    assert fired(case_ids) == 12
    results = CaseStep.objects.filter(case_id__in=case_ids, step_id="cool").values_list("result", flat=True)
    assert all(set(result) == {"firedAt"} for result in results)
