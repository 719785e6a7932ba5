"""Reads over agents: the list and which task runs each one is running."""

from __future__ import annotations

from django.db.models import QuerySet

from orchestrator.agents.models import Agent
from orchestrator.runs.models import RUNNING, TaskRun


def agent_list() -> QuerySet[Agent]:
    return Agent.objects.order_by("agent_id")


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
