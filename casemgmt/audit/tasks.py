"""Celery tasks of the audit app: the periodic checkpoint scan."""

from __future__ import annotations

from celery import shared_task

from casemgmt.audit.checkpoints import audit_checkpoint_sweep
from casemgmt.tenancy.background import system_task


@shared_task(name="casemgmt.audit.checkpoints_sweep", ignore_result=True)
@system_task("reads each tenant chain's head and last checkpoint; each checkpoint is written in its tenant")
def checkpoints_sweep() -> int:
    """Idempotent: a checkpoint is written only when one is due, under a per-chain lock, so a beat
    firing twice or two workers running it at once make one."""
    return audit_checkpoint_sweep()
