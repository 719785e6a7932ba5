"""Agent heartbeats and the sweeper that recovers work held by agents that went silent."""

from __future__ import annotations

import logging
from datetime import datetime, timedelta

from django.conf import settings
from django.db import transaction
from django.db.models import Q

from orchestrator.agents.models import Agent, AgentSession
from orchestrator.agents.selectors import live_agents, retire_cutoff
from orchestrator.audit.services import SYSTEM_ACTOR, record
from orchestrator.events.services import event_emit
from orchestrator.runs import finish, pools, state
from orchestrator.runs.models import CANCELLED, FAILED, PAUSED, PENDING, QUEUED, RUNNING, Run, TaskRun
from orchestrator.runs.wakeups import Wakeup, send_on_commit, waiting_messages
from shared.api import errors
from shared.api.time import iso, now_ms

logger = logging.getLogger(__name__)


def event_emit_agent(agent: Agent, *, type: str) -> None:
    event_emit(
        type=type,
        data={
            "agent_id": agent.agent_id,
            "queues": agent.queues,
            "tags": agent.tags,
            "status": agent.status,
            "last_heartbeat": iso(agent.last_heartbeat),
        },
    )


@transaction.atomic
def agent_heartbeat(
    *,
    agent_id: str,
    queues: list[str],
    tags: list[str],
    hostname: str = "",
    pid: int | None = None,
    session_id: str = "",
) -> Agent:
    """Upserts the heartbeat row (and the beating process's session row); `agent.registered` when
    the agent is new or comes back."""
    now = now_ms()
    agent = Agent.objects.select_for_update().filter(pk=agent_id).first()
    fields = dict(queues=queues, tags=tags, hostname=hostname, pid=pid, last_heartbeat=now, stopped_at=None)
    if agent is None:
        agent = Agent.objects.create(agent_id=agent_id, status="active", started_at=now, **fields)
        _session_beat(agent, session_id, now)
        event_emit_agent(agent, type="agent.registered")
        return agent
    came_back = agent.status != "active"
    for name, value in fields.items():
        setattr(agent, name, value)
    agent.status = "active"
    if came_back:
        agent.started_at = now
    agent.save()
    _session_beat(agent, session_id, now)
    if came_back:
        event_emit_agent(agent, type="agent.registered")
    return agent


def _session_beat(agent: Agent, session_id: str, now) -> None:
    if not session_id:
        return
    fields = dict(hostname=agent.hostname, pid=agent.pid, last_heartbeat=now)
    if not AgentSession.objects.filter(pk=session_id).update(**fields):
        AgentSession.objects.create(session_id=session_id, agent=agent, started_at=now, **fields)


@transaction.atomic
def agent_stopped(*, agent_id: str, session_id: str = "") -> bool:
    """A graceful shutdown: offline at once rather than after AGENT_STALE_SECONDS (once)."""
    if session_id:
        AgentSession.objects.filter(pk=session_id, ended_at=None).update(ended_at=now_ms())
    agent = Agent.objects.select_for_update().filter(pk=agent_id, status="active").first()
    if agent is None:
        return False
    Agent.objects.filter(pk=agent_id).update(status="offline", stopped_at=now_ms())
    agent.status = "offline"
    event_emit_agent(agent, type="agent.offline")
    return True


def _mark_offline(cutoff: datetime) -> list[str]:
    """Active agents silent since `cutoff` become offline; `agent.offline` exactly once each
    (the conditional UPDATE decides who sends it when two sweepers race)."""
    gone = []
    for agent in Agent.objects.filter(status="active", last_heartbeat__lt=cutoff):
        with transaction.atomic():
            if Agent.objects.filter(pk=agent.pk, status="active", last_heartbeat__lt=cutoff).update(
                status="offline"
            ):
                agent.status = "offline"
                event_emit_agent(agent, type="agent.offline")
                gone.append(agent.agent_id)
    return gone


def _retire_silent() -> int:
    """Agents silent for AGENT_RETIRE_SECONDS (stopped or dead) are forgotten: reads already skip
    them (selectors.retire_cutoff); their work was recovered long before."""
    return Agent.objects.filter(last_heartbeat__lt=retire_cutoff()).delete()[0]


@transaction.atomic
def agent_retire(*, agent_id: str, actor: str = SYSTEM_ACTOR) -> None:
    """An operator forgets an offline agent now rather than after AGENT_RETIRE_SECONDS. A live one
    is refused: its next heartbeat would register it again."""
    agent = Agent.objects.select_for_update().filter(pk=agent_id).first()
    if agent is None or agent.last_heartbeat < retire_cutoff():
        raise errors.NotFound(f"Agent {agent_id} not found.")
    if live_agents().filter(pk=agent_id).exists():
        raise errors.InvalidState(f"Agent {agent_id} is live; stop it before retiring it.")
    agent.delete()
    record(actor=actor, action="agent.retired", resource=f"agents/{agent_id}")


def _orphaned_task_runs(cutoff: datetime) -> list[tuple[str, str, int]]:
    """Running task runs whose claiming process is gone: its session stopped or went silent (even
    when a restarted process heartbeats under the same agent id meanwhile). A claim that recorded no
    session (a plain Celery worker) is judged by its agent id: offline, silent, or never seen."""
    live_agents = set(
        Agent.objects.filter(status="active", last_heartbeat__gte=cutoff).values_list("agent_id", flat=True)
    )
    live_sessions = set(
        AgentSession.objects.filter(ended_at=None, last_heartbeat__gte=cutoff).values_list(
            "session_id", flat=True
        )
    )
    running = TaskRun.objects.filter(status=RUNNING, start_time__lt=cutoff).values_list(
        "id", "agent_id", "agent_session", "attempts"
    )
    return [
        (tr_id, agent_id or "", attempts)
        for tr_id, agent_id, session, attempts in running
        if (session not in live_sessions if session else agent_id not in live_agents)
    ]


def _forget_dead_sessions(cutoff: datetime) -> int:
    """Sessions that stopped or went silent, once no running task run still names them."""
    held = TaskRun.objects.filter(status=RUNNING, agent_session__isnull=False).values("agent_session")
    dead = AgentSession.objects.filter(Q(ended_at__isnull=False) | Q(last_heartbeat__lt=cutoff))
    return dead.exclude(session_id__in=held).delete()[0]


REDISPATCH_MAX_WAIT_PERIODS = 10  # a waiting task run is sent again at least this many stale periods


def _redispatch_due(queued_at: datetime | None, dispatched_at: datetime | None, now: datetime) -> bool:
    """Due when the time since the last send exceeds the task run's age at that send (at least one
    stale period, at most REDISPATCH_MAX_WAIT_PERIODS): the waits double. A task run waiting behind
    a backlog still has its message in the broker; re-sending it every period would add duplicates
    in proportion to the backlog and so lengthen it (messages grow with its square)."""
    stale = timedelta(seconds=settings.AGENT_STALE_SECONDS)
    if dispatched_at is None:  # never sent (filtered out by the caller's `dispatched_at < cutoff`)
        return True
    age_at_send = dispatched_at - queued_at if queued_at else stale
    wait = min(max(age_at_send, stale), stale * REDISPATCH_MAX_WAIT_PERIODS)
    return now - dispatched_at > wait


def _backlogged_queues(queues: set[str]) -> set[str]:
    """Queues whose broker holds at least one message per queued task run: no wake-up is lost
    there yet (a lost one is re-sent once the backlog drained below that), and adding duplicates
    would only lengthen the wait of every task run behind them."""
    backlogged = set()
    for queue in queues:
        waiting = waiting_messages(queue)
        if waiting is not None and waiting >= TaskRun.objects.filter(status=QUEUED, queue=queue).count():
            backlogged.add(queue)
    return backlogged


def _redispatch_lost(cutoff: datetime, live_queues: set[str]) -> int:
    """Queued task runs whose wake-up is long overdue (the message died with a killed worker that had
    prefetched it) are sent again, with a doubling wait (_redispatch_due); a duplicate is harmless,
    the claim is conditional."""
    now = now_ms()
    candidates = (
        TaskRun.objects.filter(status=QUEUED, dispatched_at__lt=cutoff, queue__in=live_queues)
        .exclude(not_before__gt=cutoff)
        .exclude(run__status=PAUSED)  # woken again when the run is resumed
        .order_by("dispatched_at")
        .values_list("id", "queue", "attempts", "queued_at", "dispatched_at")[:5000]
    )
    overdue = [(tr_id, queue, attempts) for tr_id, queue, attempts, queued_at, dispatched_at in candidates
               if _redispatch_due(queued_at, dispatched_at, now)][:1000]  # fmt: skip
    backlogged = _backlogged_queues({queue for _, queue, _ in overdue})
    overdue = [o for o in overdue if o[1] not in backlogged]
    if not overdue:
        return 0
    with transaction.atomic():
        TaskRun.objects.filter(pk__in=[o[0] for o in overdue], status=QUEUED).update(dispatched_at=now)
        send_on_commit([Wakeup(tr_id, queue, attempts) for tr_id, queue, attempts in overdue])
    return len(overdue)


def _unstick_runs(cutoff: datetime) -> None:
    """A run whose scheduling request died between its two transactions still gets started, and
    one whose last completing agent died right after committing still completes."""
    stalled = Run.objects.filter(status=PENDING, start_time__lt=cutoff, waiting=False).exclude(
        task_runs__status__in=(QUEUED, RUNNING)
    )
    for run_id in stalled.values_list("run_id", flat=True)[:100]:
        state.run_start(run_id=run_id)
    unfinished = (PENDING, QUEUED, RUNNING, FAILED, CANCELLED)
    done = Run.objects.filter(status=RUNNING).exclude(task_runs__status__in=unfinished)
    for run_id in done.values_list("run_id", flat=True)[:100]:
        state.run_complete_if_done(run_id)


def agents_sweep() -> dict[str, int]:
    """Periodic (beat, control queue) and callable. Idempotent: every step is a conditional UPDATE."""
    cutoff = now_ms() - timedelta(seconds=settings.AGENT_STALE_SECONDS)
    offline = _mark_offline(cutoff)
    recovered = 0
    for tr_id, agent_id, attempt in _orphaned_task_runs(cutoff):
        if finish.task_run_recover(task_run_id=tr_id, attempt=attempt, agent_id=agent_id):
            recovered += 1
            logger.warning("Recovered task run %s from lost agent process %s", tr_id, agent_id)
    _forget_dead_sessions(cutoff)
    _retire_silent()
    live_queues = {
        q
        for queues in Agent.objects.filter(status="active", last_heartbeat__gte=cutoff).values_list(
            "queues", flat=True
        )
        for q in queues
    }
    resent = _redispatch_lost(cutoff, live_queues)
    _unstick_runs(cutoff)
    # Recovered task runs freed their pool slots; lost admissions and pool wake-ups are repeated.
    pools.pools_sweep()
    state.dags_sweep()
    return {"agents_offline": len(offline), "task_runs_recovered": recovered, "wakeups_resent": resent}
