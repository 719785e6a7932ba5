from django.apps import AppConfig


class AuditConfig(AppConfig):
    name = "orchestrator.audit"
    label = "orch_audit"
