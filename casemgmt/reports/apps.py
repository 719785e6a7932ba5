from django.apps import AppConfig
from django.utils.translation import gettext_lazy


class ReportsConfig(AppConfig):
    name = "casemgmt.reports"
    verbose_name = gettext_lazy("Reports")
    label = "reports"
