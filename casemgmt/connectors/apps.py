from django.apps import AppConfig


class ConnectorsConfig(AppConfig):
    name = "casemgmt.connectors"
    label = "connectors"

    def ready(self) -> None:
        # Imported here: the collector reads models, which exist only once apps are ready.
        from casemgmt.connectors import metrics

        metrics.register()
