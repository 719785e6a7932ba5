from django.apps import AppConfig
from django.utils.translation import gettext_lazy


class CasesConfig(AppConfig):
    name = "casemgmt.cases"
    verbose_name = gettext_lazy("Cases")
    label = "cases"
