"""Transactional outbox of run, task-run and agent events.

Rows are written in the same transaction as the state change they describe; webhook delivery
reads them later, so an event is never lost because the broker was down at that moment.
"""

from django.db import models


class Event(models.Model):
    TYPES = [
        (t, t)
        for t in (
            "task.pending", "task.queued", "task.running", "task.completed", "task.failed", "task.cancelled",
            "dag.pending", "dag.running", "dag.completed", "dag.failed", "dag.cancelled", "dag.paused", "dag.resumed",
            "agent.registered", "agent.offline",
        )
    ]  # fmt: skip

    id = models.BigAutoField(primary_key=True)
    type = models.CharField(max_length=32, choices=TYPES)
    occurred_at = models.DateTimeField()
    run_id = models.CharField(max_length=128, blank=True)
    dag_id = models.CharField(max_length=128, blank=True)
    task_id = models.CharField(max_length=128, blank=True)
    data = models.JSONField(default=dict)
    dispatched_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ("id",)
        # The outbox is only ever read as "not dispatched yet, oldest first"; an agent writes two
        # events per task run, so every other index would cost each of them an entry for nothing.
        indexes = [
            models.Index(
                fields=["id"], name="orch_event_undispatched", condition=models.Q(dispatched_at__isnull=True)
            )
        ]

    def __str__(self) -> str:
        return f"{self.type} #{self.id}"
