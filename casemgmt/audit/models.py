from django.db import models

from shared.audit.models import AuditCheckpointBase, AuditEventBase


class AuditEvent(AuditEventBase):
    """One hash chain per tenant: `chain` is the tenant id as text."""

    tenant = models.ForeignKey(
        "tenancy.Tenant", on_delete=models.PROTECT, related_name="+", db_constraint=True
    )

    APPEND_FUNCTION = "audit_auditevent_append"  # migration 0005 installs it (PostgreSQL)
    APPEND_EXTRA_COLUMNS = ("tenant_id",)

    class Meta(AuditEventBase.Meta):
        constraints = [
            models.UniqueConstraint(fields=["chain", "sequence"], name="audit_event_chain_sequence")
        ]
        indexes = [
            models.Index(fields=["tenant", "resource", "sequence"], name="audit_tenant_resource_idx"),
            # A case's trail matches resource prefixes (`cases/<id>/...`): a pattern-ops index lets
            # LIKE 'prefix%' use it whatever the database collation (PostgreSQL; ignored elsewhere).
            models.Index(
                fields=["tenant", "resource"],
                name="audit_tenant_resource_like",
                opclasses=["uuid_ops", "varchar_pattern_ops"],
            ),
        ]


class AuditCheckpoint(AuditCheckpointBase):
    """A signed checkpoint of one tenant's chain (`chain` is the tenant id as text)."""

    tenant = models.ForeignKey("tenancy.Tenant", on_delete=models.PROTECT, related_name="+")

    class Meta(AuditCheckpointBase.Meta):
        constraints = [
            # Two checkpoint jobs at once never sign the same position twice.
            models.UniqueConstraint(fields=["chain", "sequence"], name="audit_checkpoint_chain_sequence")
        ]
        indexes = [
            models.Index(
                fields=["chain", "sequence"],
                name="audit_checkpoint_unwitnessed",
                condition=models.Q(witnessed_at__isnull=True),
            )
        ]
