from django.apps import AppConfig


class AuditConfig(AppConfig):
    name = "casemgmt.audit"
    label = "audit"
