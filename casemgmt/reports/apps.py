from django.apps import AppConfig


class ReportsConfig(AppConfig):
    name = "casemgmt.reports"
    label = "reports"
