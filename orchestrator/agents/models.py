"""Agent heartbeats. An agent is a Celery worker; its row is upserted on start and every
AGENT_HEARTBEAT_SECONDS. Liveness is judged from `last_heartbeat`, never from Redis.

An agent id (`<name>@<host>`) outlives its processes: a supervisor restarts a killed agent under the
same name. Each start is therefore also a session of its own, heartbeating separately, and a task run
records the session that claimed it: work held by a dead process is recovered even when a new
process already heartbeats under the same agent id."""

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
    # A graceful stop (the worker shut down and said so); cleared by the next heartbeat. The status
    # is `offline` either way: this tells a stopped agent from one that went silent.
    stopped_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ("agent_id",)

    def __str__(self) -> str:
        return self.agent_id


class AgentSession(models.Model):
    """One process (incarnation) of an agent, from its start to its stop or death."""

    session_id = models.CharField(primary_key=True, max_length=64)
    agent = models.ForeignKey(Agent, on_delete=models.CASCADE, related_name="sessions")
    hostname = models.CharField(max_length=200, blank=True, default="")
    pid = models.IntegerField(null=True, blank=True)
    started_at = models.DateTimeField()
    last_heartbeat = models.DateTimeField(db_index=True)
    ended_at = models.DateTimeField(null=True, blank=True)  # a graceful stop

    class Meta:
        ordering = ("agent_id", "started_at")

    def __str__(self) -> str:
        return self.session_id
