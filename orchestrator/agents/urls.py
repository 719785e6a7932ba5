from django.urls import path

from orchestrator.agents import apis

urlpatterns = [
    path("agents", apis.AgentListApi.as_view(), name="agent-list"),
    path("queues", apis.QueueListApi.as_view(), name="queue-list"),
]
