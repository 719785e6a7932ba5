from django.apps import AppConfig
from django.utils.translation import gettext_lazy


class WebhooksConfig(AppConfig):
    name = "casemgmt.webhooks"
    verbose_name = gettext_lazy("Webhooks")
    label = "webhooks"
