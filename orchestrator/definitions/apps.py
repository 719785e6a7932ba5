from django.apps import AppConfig


class DefinitionsConfig(AppConfig):
    name = "orchestrator.definitions"
    label = "orch_definitions"
