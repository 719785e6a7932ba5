"""Agent heartbeats. An agent is a Celery worker; its row is upserted on start and every
AGENT_HEARTBEAT_SECONDS. Liveness is judged from `last_heartbeat`, never from Redis."""

from django.db import models


class Agent(models.Model):
    STATUSES = [("active", "active"), ("offline", "offline")]

    agent_id = models.CharField(primary_key=True, max_length=200)
    queues = models.JSONField(default=list)
    tags = models.JSONField(default=list)
    hostname = models.CharField(max_length=200, blank=True, default="")
    pid = models.IntegerField(null=True, blank=True)
    status = models.CharField(max_length=16, choices=STATUSES, default="active")
    started_at = models.DateTimeField()
    last_heartbeat = models.DateTimeField(db_index=True)

    class Meta:
        ordering = ("agent_id",)

    def __str__(self) -> str:
        return self.agent_id
