from django.db import models

from shared.audit.models import AuditCheckpointBase, AuditEventBase

CHAIN = "orchestrator"


class AuditEvent(AuditEventBase):
    """The orchestrator has no tenants: every event joins the one chain named `CHAIN`."""

    class Meta(AuditEventBase.Meta):
        constraints = [
            models.UniqueConstraint(fields=["chain", "sequence"], name="orch_audit_chain_sequence")
        ]


class AuditCheckpoint(AuditCheckpointBase):
    """A signed checkpoint of the orchestrator's chain."""

    class Meta(AuditCheckpointBase.Meta):
        constraints = [
            # Two sweeps at once never sign the same position twice.
            models.UniqueConstraint(fields=["chain", "sequence"], name="orch_audit_checkpoint_chain_sequence")
        ]
