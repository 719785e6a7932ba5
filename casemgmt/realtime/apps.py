from django.apps import AppConfig


class RealtimeConfig(AppConfig):
    name = "casemgmt.realtime"
    label = "realtime"
