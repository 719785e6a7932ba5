from django.apps import AppConfig

from orchestrator.events import consumers


class WebhooksConfig(AppConfig):
    name = "orchestrator.webhooks"
    label = "orch_webhooks"

    def ready(self) -> None:
        # App loading order: the selectors import models, which cannot load before the registry is ready.
        from orchestrator.webhooks import selectors

        # Events sits below webhooks: the outbox learns which event types a registration wants here.
        consumers.register(
            consumers.Consumer(
                name="webhooks",
                subscribed_types=selectors.subscribed_event_types,
                subscribed_sql=selectors.subscribed_sql,
            )
        )
