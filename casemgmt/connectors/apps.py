from django.apps import AppConfig


class ConnectorsConfig(AppConfig):
    name = "casemgmt.connectors"
    label = "connectors"

    def ready(self) -> None:
        # App loading order: the collector reads models, which cannot load while the app registry
        # is being filled (AppRegistryNotReady).
        from casemgmt.connectors import metrics

        metrics.register()
        # App loading order, as above. Importing it registers the `connector` step type with
        # workflows, which sits below connectors.
        from casemgmt.connectors import step  # noqa: F401
