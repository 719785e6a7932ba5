from django.apps import AppConfig


class CasesConfig(AppConfig):
    name = "casemgmt.cases"
    label = "cases"

    def ready(self) -> None:
        from casemgmt.cases.selectors import case_access_teams
        from casemgmt.realtime import visibility

        visibility.case_teams_register(case_access_teams)
