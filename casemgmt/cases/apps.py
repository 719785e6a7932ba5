from django.apps import AppConfig
from django.utils.translation import gettext_lazy


class CasesConfig(AppConfig):
    name = "casemgmt.cases"
    verbose_name = gettext_lazy("Cases")
    label = "cases"

    def ready(self) -> None:
        from casemgmt.cases.selectors import case_access_teams
        from casemgmt.realtime import visibility

        visibility.case_teams_register(case_access_teams)
