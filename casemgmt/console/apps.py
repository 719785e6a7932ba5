from django.apps import AppConfig
from django.utils.translation import gettext_lazy


class ConsoleConfig(AppConfig):
    name = "casemgmt.console"
    verbose_name = gettext_lazy("Console")
    label = "console"
