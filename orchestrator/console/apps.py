from django.apps import AppConfig


class ConsoleConfig(AppConfig):
    name = "orchestrator.console"
    label = "orch_console"
