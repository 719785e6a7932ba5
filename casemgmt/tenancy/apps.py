from django.apps import AppConfig


class TenancyConfig(AppConfig):
    name = "casemgmt.tenancy"
    label = "tenancy"
