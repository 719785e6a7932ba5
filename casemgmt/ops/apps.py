from django.apps import AppConfig
from django.utils.translation import gettext_lazy


class OpsConfig(AppConfig):
    name = "casemgmt.ops"
    verbose_name = gettext_lazy("Ops")
    label = "ops"
