from django.apps import AppConfig


class WebhooksConfig(AppConfig):
    name = "orchestrator.webhooks"
    label = "orch_webhooks"
