from django.apps import AppConfig


class CasesConfig(AppConfig):
    name = "casemgmt.cases"
    label = "cases"
