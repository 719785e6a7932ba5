from django.apps import AppConfig

from casemgmt.tenancy import changes


class AuditConfig(AppConfig):
    name = "casemgmt.audit"
    label = "audit"

    def ready(self) -> None:
        # App loading order: audit.services imports models, which cannot load before the registry is ready.
        from casemgmt.audit.services import record

        # Tenancy sits below audit and cannot import it: it records its writes through this.
        changes.recorder_register(record)
