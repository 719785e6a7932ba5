from django.apps import AppConfig


class ConsoleConfig(AppConfig):
    name = "casemgmt.console"
    label = "console"
