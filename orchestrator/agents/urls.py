from django.urls import path

from orchestrator.agents import apis

urlpatterns = [
    path("agents", apis.AgentListApi.as_view(), name="agent-list"),
    path("agents/<str:agent_id>/retire", apis.AgentRetireApi.as_view(), name="agent-retire"),
    path("queues", apis.QueueListApi.as_view(), name="queue-list"),
]
