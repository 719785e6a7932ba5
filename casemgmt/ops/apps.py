from django.apps import AppConfig


class OpsConfig(AppConfig):
    name = "casemgmt.ops"
    label = "ops"
