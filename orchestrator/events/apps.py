from django.apps import AppConfig


class EventsConfig(AppConfig):
    name = "orchestrator.events"
    label = "orch_events"
