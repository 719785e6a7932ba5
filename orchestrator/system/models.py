"""The recovery sweep's own record: when it last ran and in which process, so `/api/status` can tell
a deployment where recovery has stopped (no agent alive to run it) from a healthy one."""

from django.db import models


class SweepState(models.Model):
    name = models.CharField(primary_key=True, max_length=50)
    last_run_at = models.DateTimeField(null=True, blank=True)
    last_run_by = models.CharField(max_length=200, blank=True, default="")

    def __str__(self) -> str:
        return self.name
