from django.apps import AppConfig
from django.utils.translation import gettext_lazy


class CasesConfig(AppConfig):
    name = "casemgmt.cases"
    verbose_name = gettext_lazy("Cases")
    label = "cases"

    def ready(self) -> None:
        # App loading order: the selectors import models, which cannot load before the registry is
        # ready. Realtime sits below cases and cannot import it: it asks a case's teams through this.
        from casemgmt.cases.selectors import case_access_teams

        # App loading order, as above (realtime's consumers import models).
        from casemgmt.realtime import visibility

        visibility.case_teams_register(case_access_teams)
