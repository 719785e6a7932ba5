from django.apps import AppConfig
from django.utils.translation import gettext_lazy

from casemgmt.cases.hooks import create_read_register, listener_register


class ConnectorsConfig(AppConfig):
    name = "casemgmt.connectors"
    verbose_name = gettext_lazy("Connectors")
    label = "connectors"

    def ready(self) -> None:
        # App loading order: the collector reads models, which cannot load while the app registry
        # is being filled (AppRegistryNotReady).
        from casemgmt.connectors import metrics

        metrics.register()
        # App loading order, as above. Importing it registers the `connector` step type with
        # workflows, which sits below connectors.
        from casemgmt.connectors import step  # noqa: F401

        # App loading order, as above. Cases sits below connectors: its events reach the outbound
        # webhooks through these hooks, and a create reads the webhook configuration with its number.
        from casemgmt.connectors.events import WEBHOOK_CONFIG_READ, case_event_listener

        create_read_register(WEBHOOK_CONFIG_READ)
        listener_register(case_event_listener)
