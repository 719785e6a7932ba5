"""Reads over agents: the list, which task runs each one is running, and the queues they consume."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timedelta

from django.conf import settings
from django.db.models import QuerySet

from orchestrator.agents.models import Agent
from orchestrator.definitions.models import TaskDefinition
from orchestrator.runs.models import QUEUED, RUNNING, TaskRun
from shared.api.time import now_ms


def retire_cutoff() -> datetime:
    """Agents whose last heartbeat is older are retired (AGENT_RETIRE_SECONDS): not listed, not
    counted, deleted by the next recovery sweep."""
    return now_ms() - timedelta(seconds=settings.AGENT_RETIRE_SECONDS)


def agent_list() -> QuerySet[Agent]:
    """The agents not retired, by id."""
    return Agent.objects.filter(last_heartbeat__gte=retire_cutoff()).order_by("agent_id")


def running_task_runs_by_agent(agent_ids: list[str]) -> dict[str, list[str]]:
    """Ids of the task runs each agent holds in `running`, in id order."""
    assigned: dict[str, list[str]] = {}
    rows = (
        TaskRun.objects.filter(status=RUNNING, agent_id__in=agent_ids)
        .order_by("id")
        .values_list("id", "agent_id")
    )
    for task_run_id, agent_id in rows:
        if agent_id is not None:  # a running task run always names its agent
            assigned.setdefault(agent_id, []).append(task_run_id)
    return assigned


def live_agents() -> QuerySet[Agent]:
    cutoff = now_ms() - timedelta(seconds=settings.AGENT_STALE_SECONDS)
    return Agent.objects.filter(status="active", last_heartbeat__gte=cutoff)


@dataclass(frozen=True)
class QueueState:
    name: str
    consumer_count: int
    queued: list[tuple[str, str]]  # (task run id, run id), in claim order


def queue_overview() -> list[QueueState]:
    """Every queue named by a task definition, a live agent or a queued task run, by name; lengths
    and positions come from the database, consumers are the live agents on each queue."""
    queued = list(
        TaskRun.objects.filter(status=QUEUED)
        .order_by("-priority", "queued_at", "id")  # the order claims take: highest priority, then oldest
        .values_list("queue", "id", "run_id")
    )
    consumers: dict[str, int] = {}
    for queues in live_agents().values_list("queues", flat=True):
        for name in queues:
            consumers[name] = consumers.get(name, 0) + 1
    names = (
        set(consumers)
        | {q for q, _, _ in queued}
        | set(TaskDefinition.objects.values_list("queue", flat=True))
    )
    by_queue: dict[str, list[tuple[str, str]]] = {name: [] for name in names}
    for name, task_run_id, run_id in queued:
        by_queue[name].append((task_run_id, run_id))
    return [QueueState(name, consumers.get(name, 0), by_queue[name]) for name in sorted(names)]
