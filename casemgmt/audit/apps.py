from django.apps import AppConfig
from django.utils.translation import gettext_lazy

from casemgmt.tenancy import changes


class AuditConfig(AppConfig):
    name = "casemgmt.audit"
    verbose_name = gettext_lazy("Audit")
    label = "audit"

    def ready(self) -> None:
        # App loading order: audit.services imports models, which cannot load before the registry is ready.
        from casemgmt.audit.services import record

        # Tenancy sits below audit and cannot import it: it records its writes through this.
        changes.recorder_register(record)
