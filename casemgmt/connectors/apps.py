from django.apps import AppConfig


class ConnectorsConfig(AppConfig):
    name = "casemgmt.connectors"
    label = "connectors"
