from django.apps import AppConfig


class RunsConfig(AppConfig):
    name = "orchestrator.runs"
    label = "orch_runs"
