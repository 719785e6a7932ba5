from django.apps import AppConfig


class ConnectorsConfig(AppConfig):
    name = "casemgmt.connectors"
    label = "connectors"

    def ready(self) -> None:
        # The collector reads models, which cannot load while the app registry is being filled
        # (AppRegistryNotReady): importing it here breaks the loop apps -> models -> app registry.
        from casemgmt.connectors import metrics

        metrics.register()
