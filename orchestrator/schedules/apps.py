from django.apps import AppConfig


class SchedulesConfig(AppConfig):
    name = "orchestrator.schedules"
    label = "orch_schedules"
