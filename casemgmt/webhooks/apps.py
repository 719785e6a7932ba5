from django.apps import AppConfig


class WebhooksConfig(AppConfig):
    name = "casemgmt.webhooks"
    label = "webhooks"
