from django.db import models

from shared.audit.models import AuditEventBase


class AuditEvent(AuditEventBase):
    """One hash chain per tenant: `chain` is the tenant id as text."""

    tenant = models.ForeignKey(
        "tenancy.Tenant", on_delete=models.PROTECT, related_name="+", db_constraint=True
    )

    class Meta(AuditEventBase.Meta):
        constraints = [
            models.UniqueConstraint(fields=["chain", "sequence"], name="audit_event_chain_sequence")
        ]
        indexes = [models.Index(fields=["tenant", "resource", "sequence"], name="audit_tenant_resource_idx")]
