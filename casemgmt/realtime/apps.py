from django.apps import AppConfig
from django.utils.translation import gettext_lazy


class RealtimeConfig(AppConfig):
    name = "casemgmt.realtime"
    verbose_name = gettext_lazy("Realtime")
    label = "realtime"
