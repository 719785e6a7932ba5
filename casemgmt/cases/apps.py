from django.apps import AppConfig


class CasesConfig(AppConfig):
    name = "casemgmt.cases"
    label = "cases"

    def ready(self) -> None:
        # App loading order: the selectors import models, which cannot load before the registry is ready.
        from casemgmt.cases.selectors import case_access_teams

        # App loading order, as above.
        from casemgmt.realtime import visibility

        visibility.case_teams_register(case_access_teams)
