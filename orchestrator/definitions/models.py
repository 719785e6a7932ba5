"""Task definitions, DAGs, contexts and parameter sets.

Ids are caller-chosen path identifiers. Lists of references are JSON columns: they are small, read
whole, and validated by the services (unknown tasks, cycles) rather than by foreign keys, so that a
task can be redefined without rewriting every DAG that names it.
"""

from django.db import models


class TaskDefinition(models.Model):
    id = models.CharField(primary_key=True, max_length=100)
    name = models.CharField(max_length=200)
    description = models.TextField(blank=True, default="")
    command = models.TextField()
    dependencies = models.JSONField(default=list)
    parameters = models.JSONField(default=dict)
    queue = models.CharField(max_length=100)
    created_at = models.DateTimeField()
    updated_at = models.DateTimeField()

    class Meta:
        ordering = ("id",)

    def __str__(self) -> str:
        return self.id


class Dag(models.Model):
    id = models.CharField(primary_key=True, max_length=100)
    name = models.CharField(max_length=200)
    description = models.TextField(blank=True, default="")
    tasks = models.JSONField(default=list)  # [{"id": task_id, "parameters": {...}}]
    context = models.CharField(max_length=100, null=True, blank=True)  # noqa: DJ001 - null is the API's 'none'
    tags = models.JSONField(default=list)
    created_at = models.DateTimeField()
    updated_at = models.DateTimeField()

    class Meta:
        ordering = ("id",)

    def __str__(self) -> str:
        return self.id


class Context(models.Model):
    id = models.CharField(primary_key=True, max_length=100)
    variables = models.JSONField(default=dict)
    extends = models.CharField(max_length=100, null=True, blank=True)  # noqa: DJ001 - null is the API's 'none'
    created_at = models.DateTimeField()
    updated_at = models.DateTimeField()

    class Meta:
        ordering = ("id",)

    def __str__(self) -> str:
        return self.id


class ParameterSet(models.Model):
    id = models.CharField(primary_key=True, max_length=100)
    parameters = models.JSONField(default=dict)
    created_at = models.DateTimeField()
    updated_at = models.DateTimeField()

    class Meta:
        ordering = ("id",)

    def __str__(self) -> str:
        return self.id
