from django.apps import AppConfig


class DagsConfig(AppConfig):
    name = "casemgmt.dags"
    label = "dags"
