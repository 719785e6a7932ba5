from django.apps import AppConfig


class SystemConfig(AppConfig):
    name = "orchestrator.system"
    label = "orch_system"
