from django.apps import AppConfig


class AgentsConfig(AppConfig):
    name = "orchestrator.agents"
    label = "orch_agents"
