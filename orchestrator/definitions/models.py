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
    # The environment names scheduling may set for this task; null: any (within the general rule).
    allowed_env = models.JSONField(null=True, blank=True, default=None)
    queue = models.CharField(max_length=100)
    pool = models.CharField(max_length=100, null=True, blank=True)  # noqa: DJ001 - null: no pool
    version = models.PositiveIntegerField(default=1)  # +1 on each PUT that changes the task
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
    max_active_runs = models.PositiveIntegerField(null=True, blank=True)  # null: no limit
    version = models.PositiveIntegerField(default=1)  # +1 on each PUT that changes the DAG
    created_at = models.DateTimeField()
    updated_at = models.DateTimeField()

    class Meta:
        ordering = ("id",)

    def __str__(self) -> str:
        return self.id


class DefinitionVersion(models.Model):
    """Every version of a task or DAG definition, the current one included, as the API shows it.
    Kept after the definition is deleted: runs name the versions they executed."""

    KINDS = [("task", "task"), ("dag", "dag")]

    id = models.BigAutoField(primary_key=True)
    kind = models.CharField(max_length=8, choices=KINDS)
    definition_id = models.CharField(max_length=100)
    version = models.PositiveIntegerField()
    snapshot = models.JSONField()
    created_at = models.DateTimeField()

    class Meta:
        ordering = ("kind", "definition_id", "version")
        constraints = [
            models.UniqueConstraint(
                fields=["kind", "definition_id", "version"], name="orch_definition_version"
            )
        ]

    def __str__(self) -> str:
        return f"{self.kind} {self.definition_id} v{self.version}"


class Pool(models.Model):
    """A named number of slots: at most `slots` task runs naming the pool run at once."""

    name = models.CharField(primary_key=True, max_length=100)
    slots = models.PositiveIntegerField()
    created_at = models.DateTimeField()
    updated_at = models.DateTimeField()

    class Meta:
        ordering = ("name",)

    def __str__(self) -> str:
        return self.name


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
