from django.db import models

from shared.audit.models import AuditEventBase

CHAIN = "orchestrator"


class AuditEvent(AuditEventBase):
    """The orchestrator has no tenants: every event joins the one chain named `CHAIN`."""

    class Meta(AuditEventBase.Meta):
        constraints = [
            models.UniqueConstraint(fields=["chain", "sequence"], name="orch_audit_chain_sequence")
        ]
