"""Heartbeats, the agents list and the sweeper's decisions (services called as the agent and the
beat task call them; the kill -9 path with real processes is in tests/orchestrator/runs)."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.utils import timezone

from orchestrator.agents.heartbeat import Heartbeat, parse_tags
from orchestrator.agents.models import Agent, AgentSession
from orchestrator.agents.services import agent_heartbeat, agent_stopped, agents_sweep
from orchestrator.events.models import Event
from orchestrator.runs import claim, finish
from orchestrator.runs.models import TaskRun
from orchestrator.runs.wakeups import Wakeup, send_now
from tests.orchestrator.helpers import assert_error, put_task

pytestmark = pytest.mark.django_db


def age(agent_id: str, seconds: int) -> None:
    Agent.objects.filter(pk=agent_id).update(
        last_heartbeat=Agent.objects.get(pk=agent_id).last_heartbeat - timedelta(seconds=seconds)
    )


def backdate_start(task_run_id: str) -> None:
    """The sweeper only recovers task runs that started before the staleness cutoff."""
    started = TaskRun.objects.get(pk=task_run_id).start_time
    TaskRun.objects.filter(pk=task_run_id).update(start_time=started - timedelta(seconds=60))


def test_heartbeat_registers_once_and_lists_the_agent(api):
    agent_heartbeat(agent_id="a1@host", queues=["default"], tags=["zone:eu"])
    agent_heartbeat(agent_id="a1@host", queues=["default"], tags=["zone:eu"])
    assert Event.objects.filter(type="agent.registered").count() == 1
    assert Event.objects.get(type="agent.registered").data["agent_id"] == "a1@host"
    body = api.get("/api/agents").json()
    (agent,) = body["agents"]
    assert set(agent) == {"agent_id", "status", "last_heartbeat", "assigned_tasks", "queues", "tags"}
    assert agent["status"] == "active" and agent["queues"] == ["default"] and agent["tags"] == ["zone:eu"]
    assert agent["last_heartbeat"].endswith("Z") and agent["assigned_tasks"] == []


def test_stale_agent_goes_offline_once_and_reregisters(api, settings):
    settings.AGENT_STALE_SECONDS = 30
    agent_heartbeat(agent_id="a2@host", queues=["default"], tags=[])
    age("a2@host", 31)
    assert api.get("/api/agents").json()["agents"][0]["status"] == "offline"  # judged from the heartbeat age
    assert agents_sweep()["agents_offline"] == 1
    assert agents_sweep()["agents_offline"] == 0
    assert Event.objects.filter(type="agent.offline").count() == 1
    agent_heartbeat(agent_id="a2@host", queues=["default"], tags=[])
    assert Event.objects.filter(type="agent.registered").count() == 2
    assert api.get("/api/agents").json()["agents"][0]["status"] == "active"


def test_queue_consumer_count_comes_from_live_agents(api):
    agent_heartbeat(agent_id="a3@host", queues=["alpha", "beta"], tags=[])
    agent_heartbeat(agent_id="a4@host", queues=["alpha"], tags=[])
    agent_heartbeat(agent_id="a5@host", queues=["alpha"], tags=[])
    age("a5@host", 3600)
    queues = {q["name"]: q for q in api.get("/api/queues").json()["queues"]}
    assert queues["alpha"]["consumer_count"] == 2 and queues["beta"]["consumer_count"] == 1


def test_sweeper_recovers_running_task_runs_of_a_silent_agent(api, settings):
    settings.AGENT_STALE_SECONDS = 30
    put_task(api, "held")
    run_id = api.post("/api/schedule-task", {"task_id": "held", "retries": 1}, format="json").json()["run_id"]
    tr = TaskRun.objects.get(run_id=run_id)
    agent_heartbeat(agent_id="silent@host", queues=["default"], tags=[])
    assert claim.task_run_claim(task_run_id=tr.id, attempt=0, agent_id="silent@host") is not None
    assert (
        claim.task_run_claim(task_run_id=tr.id, attempt=0, agent_id="other@host") is None
    )  # duplicate message
    assigned = api.get("/api/agents").json()["agents"][0]["assigned_tasks"]
    assert assigned == [tr.id]
    assert agents_sweep()["task_runs_recovered"] == 0  # still fresh

    age("silent@host", 60)
    backdate_start(tr.pk)
    assert agents_sweep()["task_runs_recovered"] == 1
    tr.refresh_from_db()
    assert (tr.status, tr.attempts, tr.agent_id) == ("queued", 1, None)  # one attempt left: retried

    assert claim.task_run_claim(task_run_id=tr.id, attempt=1, agent_id="silent@host") is not None
    backdate_start(tr.pk)
    assert agents_sweep()["task_runs_recovered"] == 1
    tr.refresh_from_db()
    assert tr.status == "failed"  # no attempts left
    assert api.get(f"/api/runs/{run_id}").json()["status"] == "failed"
    assert "stopped responding" in api.get(f"/api/tasks/{tr.id}/logs").json()["logs"]


def age_session(session_id: str, seconds: int) -> None:
    beat = AgentSession.objects.get(pk=session_id).last_heartbeat
    AgentSession.objects.filter(pk=session_id).update(last_heartbeat=beat - timedelta(seconds=seconds))


def claimed_task_run(api, task_id: str, *, agent_id: str, session: str) -> TaskRun:
    put_task(api, task_id)
    run_id = api.post("/api/schedule-task", {"task_id": task_id, "retries": 1}, format="json").json()[
        "run_id"
    ]
    tr = TaskRun.objects.get(run_id=run_id)
    assert claim.task_run_claim(task_run_id=tr.id, attempt=0, agent_id=agent_id, agent_session=session)
    backdate_start(tr.pk)
    return tr


def test_an_attempt_of_a_dead_process_is_recovered_although_its_agent_id_heartbeats_again(api, settings):
    settings.AGENT_STALE_SECONDS = 30
    agent_heartbeat(agent_id="re@host", queues=["default"], tags=[], session_id="first")
    tr = claimed_task_run(api, "reborn", agent_id="re@host", session="first")
    assert TaskRun.objects.get(pk=tr.pk).agent_session == "first"
    # killed; a supervisor restarts it at once under the same name, as a new session
    age_session("first", 60)
    agent_heartbeat(agent_id="re@host", queues=["default"], tags=[], session_id="second")
    assert api.get("/api/agents").json()["agents"][0]["status"] == "active"
    assert agents_sweep()["task_runs_recovered"] == 1
    tr.refresh_from_db()
    assert (tr.status, tr.attempts, tr.agent_id, tr.agent_session) == ("queued", 1, None, None)
    assert not AgentSession.objects.filter(pk="first").exists()  # forgotten once nothing names it
    assert AgentSession.objects.filter(pk="second").exists()


def test_attempts_of_live_sessions_stay_even_when_two_processes_share_an_agent_id(api, settings):
    settings.AGENT_STALE_SECONDS = 30
    agent_heartbeat(agent_id="twin@host", queues=["default"], tags=[], session_id="left")
    agent_heartbeat(agent_id="twin@host", queues=["default"], tags=[], session_id="right")
    held = [
        claimed_task_run(api, "twin-a", agent_id="twin@host", session="left"),
        claimed_task_run(api, "twin-b", agent_id="twin@host", session="right"),
    ]
    assert agents_sweep()["task_runs_recovered"] == 0
    assert all(TaskRun.objects.get(pk=tr.pk).status == "running" for tr in held)


def test_a_gracefully_stopped_session_no_longer_holds_its_attempts(api, settings):
    settings.AGENT_STALE_SECONDS = 30
    agent_heartbeat(agent_id="calm@host", queues=["default"], tags=[], session_id="only")
    tr = claimed_task_run(api, "calm", agent_id="calm@host", session="only")
    assert agent_stopped(agent_id="calm@host", session_id="only")
    assert agents_sweep()["task_runs_recovered"] == 1
    assert TaskRun.objects.get(pk=tr.pk).status == "queued"


def test_a_recovery_leaves_an_attempt_claimed_since_alone(api, settings):
    """The sweeper read an old attempt; by the time it recovers, a live process claimed a new one."""
    settings.AGENT_STALE_SECONDS = 30
    tr = claimed_task_run(api, "raced", agent_id="gone@host", session="gone")
    assert finish.task_run_recover(task_run_id=tr.id, attempt=1, agent_id="gone@host") == "queued"
    assert claim.task_run_claim(task_run_id=tr.id, attempt=1, agent_id="live@host", agent_session="live")
    assert finish.task_run_recover(task_run_id=tr.id, attempt=1, agent_id="gone@host") is None
    tr.refresh_from_db()
    assert (tr.status, tr.attempts, tr.agent_session) == ("running", 2, "live")


@pytest.mark.django_db(transaction=True)  # a beat closes its connection, as in the agent
def test_a_failed_heartbeat_is_retried_sooner_and_the_thread_lives_on(settings):
    settings.AGENT_HEARTBEAT_SECONDS = 5
    # An agent id longer than its column: the database refuses the beat, as it would when down.
    heartbeat = Heartbeat(agent_id="x" * 300, session_id="s", queues=["default"], tags=[])
    assert heartbeat.beat() is False and heartbeat.beat() is False
    assert heartbeat.next_wait() == 1.0  # 0.5 s, doubling, capped at the interval
    heartbeat.agent_id = "fixed@host"
    assert heartbeat.beat() is True
    assert heartbeat.next_wait() == 5
    assert Agent.objects.filter(pk="fixed@host").exists()
    assert AgentSession.objects.get(pk="s").agent_id == "fixed@host"


def test_parse_tags():
    assert parse_tags(" gpu:yes, zone:eu ,,") == ["gpu:yes", "zone:eu"]


def test_agents_list_needs_a_credential_when_security_is_on(api, settings):
    settings.ORCH_SECURITY_ENABLED = True
    assert_error(api.get("/api/agents"), 401, "not_authenticated")


def lose_wakeups(queue: str) -> None:
    """The queue's messages die (taken by a worker that was then killed): purged from the broker."""
    from orchestrator.runs.tasks import execute_task_run

    with execute_task_run.app.connection_for_write() as conn:
        conn.default_channel.queue_purge(queue)


def test_sweeper_resends_overdue_wakeups_only_for_queues_with_a_live_agent(api, settings):
    settings.AGENT_STALE_SECONDS = 30
    put_task(api, "lost", queue="watched")
    put_task(api, "nobody", queue="unwatched")
    lost = api.post("/api/schedule-task", {"task_id": "lost"}, format="json").json()["task_run_id"]
    api.post("/api/schedule-task", {"task_id": "nobody"}, format="json")
    agent_heartbeat(agent_id="w@host", queues=["watched"], tags=[])
    assert agents_sweep()["wakeups_resent"] == 0  # not overdue yet
    old = TaskRun.objects.get(pk=lost).dispatched_at - timedelta(seconds=60)
    TaskRun.objects.filter(status="queued").update(dispatched_at=old)
    lose_wakeups("watched")
    assert agents_sweep()["wakeups_resent"] == 1  # only the queue a live agent consumes
    assert TaskRun.objects.get(pk=lost).dispatched_at > old
    assert agents_sweep()["wakeups_resent"] == 0  # not again until overdue again


def test_sweeper_backs_off_wakeups_of_a_task_run_that_waits_in_a_long_queue(api, settings):
    """A task run queued behind a backlog is not lost: its message waits in the broker. Re-sending
    it every AGENT_STALE_SECONDS would add a duplicate per waiting task run per period and grow the
    backlog it waits behind (found with agents killed under a 1,000-run backlog: 5,820 messages
    for 4 queued task runs). The wait before the next re-send doubles: at least the task run's age
    at its last send, at most ten stale periods."""
    settings.AGENT_STALE_SECONDS = 30
    put_task(api, "backlog", queue="busy")
    waiting = api.post("/api/schedule-task", {"task_id": "backlog"}, format="json").json()["task_run_id"]
    agent_heartbeat(agent_id="b@host", queues=["busy"], tags=[])
    lose_wakeups("busy")
    now = timezone.now()
    # Queued 100 s ago, last sent 31 s ago when it was 69 s old: its next send is due at 69 s.
    TaskRun.objects.filter(pk=waiting).update(queued_at=now - timedelta(seconds=100),
                                              dispatched_at=now - timedelta(seconds=31))  # fmt: skip
    assert agents_sweep()["wakeups_resent"] == 0
    TaskRun.objects.filter(pk=waiting).update(dispatched_at=now - timedelta(seconds=70))
    assert agents_sweep()["wakeups_resent"] == 1
    lose_wakeups("busy")
    # However old, a task run is sent again at least every ten stale periods.
    TaskRun.objects.filter(pk=waiting).update(queued_at=now - timedelta(days=1),
                                              dispatched_at=now - timedelta(seconds=301))  # fmt: skip
    assert agents_sweep()["wakeups_resent"] == 1


def test_sweeper_sends_no_wakeup_while_the_broker_holds_one_per_queued_task_run(api, settings):
    """Overdue is not lost while the broker still holds a message per queued task run: they wait
    behind a backlog (no agent consumes in this test). Once they are gone, the wake-ups are sent."""
    settings.AGENT_STALE_SECONDS = 30
    put_task(api, "behind", queue="slow")
    for _ in range(3):
        api.post("/api/schedule-task", {"task_id": "behind"}, format="json")
    agent_heartbeat(agent_id="s@host", queues=["slow"], tags=[])
    queued = TaskRun.objects.filter(status="queued")
    send_now([Wakeup(tr.id, tr.queue, tr.attempts) for tr in queued])  # (this test never commits)
    queued.update(dispatched_at=timezone.now() - timedelta(seconds=60))
    assert agents_sweep()["wakeups_resent"] == 0
    lose_wakeups("slow")
    assert agents_sweep()["wakeups_resent"] == 3


def test_sweeper_starts_stalled_runs_and_completes_finished_ones(api, settings):
    from orchestrator.runs.models import Run

    settings.AGENT_STALE_SECONDS = 30
    put_task(api, "root")
    run_id = api.post("/api/schedule-task", {"task_id": "root"}, format="json").json()["run_id"]
    # as if the scheduling request died between its two transactions
    TaskRun.objects.filter(run_id=run_id).update(status="pending")
    Run.objects.filter(pk=run_id).update(
        start_time=Run.objects.get(pk=run_id).start_time - timedelta(seconds=60)
    )
    agents_sweep()
    assert TaskRun.objects.get(run_id=run_id).status == "queued"
    # as if the agent died right after committing the last completion
    TaskRun.objects.filter(run_id=run_id).update(status="completed")
    Run.objects.filter(pk=run_id).update(status="running")
    agents_sweep()
    assert Run.objects.get(pk=run_id).status == "completed"
    assert Event.objects.filter(run_id=run_id, type="dag.completed").count() == 1


def test_agents_list_pages_with_limit_and_offset(api):
    Agent.objects.all().delete()  # agents of other test files' live workers; rolled back after
    for name in ("p1@host", "p2@host", "p3@host"):
        agent_heartbeat(agent_id=name, queues=["default"], tags=[])
    body = api.get("/api/agents", {"limit": 2, "offset": 1}).json()
    assert body["total"] == 3 and body["limit"] == 2 and body["offset"] == 1
    assert [a["agent_id"] for a in body["agents"]] == ["p2@host", "p3@host"]
    first = api.get("/api/agents").json()
    assert (first["total"], first["limit"], first["offset"], len(first["agents"])) == (3, 50, 0, 3)
    assert api.get("/api/agents", {"offset": 3}).json()["agents"] == []
    assert api.get("/api/agents", {"limit": 500}).status_code == 200


@pytest.mark.parametrize(
    "params", [{"limit": 0}, {"limit": 501}, {"limit": "x"}, {"offset": -1}, {"offset": "y"}]
)
def test_agents_list_refuses_bad_paging(api, params):
    assert_error(api.get("/api/agents", params), 400, "validation_error", next(iter(params)))


def test_queues_list_pages_with_limit_and_offset(api):
    for queue in ("qa", "qb", "qc"):
        put_task(api, f"task-{queue}", queue=queue)
    everything = api.get("/api/queues").json()
    names = [q["name"] for q in everything["queues"]]
    assert everything["total"] == len(names) >= 3 and everything["limit"] == 50 and everything["offset"] == 0
    assert names == sorted(names)
    body = api.get("/api/queues", {"limit": 1, "offset": names.index("qb")}).json()
    assert [q["name"] for q in body["queues"]] == ["qb"]
    assert (body["total"], body["limit"], body["offset"]) == (len(names), 1, names.index("qb"))
    assert api.get("/api/queues", {"offset": len(names)}).json()["queues"] == []


@pytest.mark.parametrize(
    "params", [{"limit": 0}, {"limit": 501}, {"limit": "x"}, {"offset": -1}, {"offset": "y"}]
)
def test_queues_list_refuses_bad_paging(api, params):
    assert_error(api.get("/api/queues", params), 400, "validation_error", next(iter(params)))
