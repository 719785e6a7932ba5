from __future__ import annotations

from datetime import timedelta

from django.conf import settings
from drf_spectacular.utils import extend_schema
from rest_framework import serializers
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from orchestrator.agents.models import Agent
from orchestrator.runs.models import RUNNING, TaskRun
from shared.api.time import iso, now_ms


class AgentOut(serializers.Serializer):
    agent_id = serializers.CharField()
    status = serializers.ChoiceField(choices=["active", "offline"])
    last_heartbeat = serializers.DateTimeField()
    assigned_tasks = serializers.ListField(child=serializers.CharField())
    queues = serializers.ListField(child=serializers.CharField())
    tags = serializers.ListField(child=serializers.CharField())


class AgentList(serializers.Serializer):
    agents = AgentOut(many=True)


class AgentListApi(APIView):
    """Status is judged from the heartbeat age (AGENT_STALE_SECONDS), not only the stored flag, so
    an agent reads `offline` as soon as it is stale even before the sweeper has run."""

    @extend_schema(responses=AgentList)
    def get(self, request: Request) -> Response:
        cutoff = now_ms() - timedelta(seconds=settings.AGENT_STALE_SECONDS)
        assigned: dict[str, list[str]] = {}
        for tr_id, agent_id in (
            TaskRun.objects.filter(status=RUNNING).order_by("id").values_list("id", "agent_id")
        ):
            if agent_id is not None:  # set with the running status; the column allows null before
                assigned.setdefault(agent_id, []).append(tr_id)
        agents = [
            {
                "agent_id": agent.agent_id,
                "status": "active"
                if agent.status == "active" and agent.last_heartbeat >= cutoff
                else "offline",
                "last_heartbeat": iso(agent.last_heartbeat),
                "assigned_tasks": assigned.get(agent.agent_id, []),
                "queues": agent.queues,
                "tags": agent.tags,
            }
            for agent in Agent.objects.order_by("agent_id")
        ]
        return Response({"agents": agents})
