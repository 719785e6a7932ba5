from __future__ import annotations

from datetime import datetime, timedelta

from django.conf import settings
from drf_spectacular.utils import extend_schema
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from orchestrator.agents import openapi, selectors, services
from orchestrator.agents.models import Agent
from orchestrator.security.principals import actor_name
from shared.api.pagination import list_body
from shared.api.querying import list_parameters, page_of, paged
from shared.api.time import iso, now_ms


def agent_out(agent: Agent, *, stale_before: datetime, assigned: list[str]) -> dict:
    live = agent.status == "active" and agent.last_heartbeat >= stale_before
    return {
        "agent_id": agent.agent_id,
        "status": "active" if live else "offline",
        "last_heartbeat": iso(agent.last_heartbeat),
        "assigned_tasks": assigned,
        "queues": agent.queues,
        "tags": agent.tags,
    }


class AgentListApi(APIView):
    """Status is judged from the heartbeat age (AGENT_STALE_SECONDS), not only the stored flag, so
    an agent reads `offline` as soon as it is stale even before the sweeper has run."""

    @extend_schema(operation_id="agents_list", responses=openapi.AgentList, parameters=list_parameters())
    def get(self, request: Request) -> Response:
        page = page_of(request.query_params)
        agents, total = paged(selectors.agent_list(), page)
        assigned = selectors.running_task_runs_by_agent([a.agent_id for a in agents])
        stale_before = now_ms() - timedelta(seconds=settings.AGENT_STALE_SECONDS)
        items = [
            agent_out(a, stale_before=stale_before, assigned=assigned.get(a.agent_id, [])) for a in agents
        ]
        return Response(list_body("agents", items, total, page))


class AgentRetireApi(APIView):
    """Forgets an offline agent now (it is retired by itself after AGENT_RETIRE_SECONDS): it is
    no longer listed nor counted by /api/status and /api/health. Audited."""

    min_role = {"POST": "operator"}

    @extend_schema(
        operation_id="agents_retire",
        request=None,
        responses={200: openapi.AgentRetired},
    )
    def post(self, request: Request, agent_id: str) -> Response:
        services.agent_retire(actor=actor_name(request.user), agent_id=agent_id)
        return Response({"success": True, "message": f"Agent {agent_id} retired."})


def queue_out(queue: selectors.QueueState) -> dict:
    return {
        "name": queue.name,
        "length": len(queue.queued),
        "consumer_count": queue.consumer_count,
        "tasks": [
            {"task_run_id": task_run_id, "dag_run_id": run_id, "position": position}
            for position, (task_run_id, run_id) in enumerate(queue.queued)
        ],
    }


class QueueListApi(APIView):
    @extend_schema(operation_id="queues_list", responses=openapi.QueueList, parameters=list_parameters())
    def get(self, request: Request) -> Response:
        page = page_of(request.query_params)
        queues = selectors.queue_overview()
        items = [queue_out(q) for q in queues[page.offset : page.offset + page.limit]]
        return Response(list_body("queues", items, len(queues), page))
