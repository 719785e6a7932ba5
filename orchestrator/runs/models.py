"""Runs, task runs and their captured output. The database is the source of truth for every state;
Celery messages only wake an agent, which claims a task run with a conditional UPDATE."""

from django.db import models

PENDING, QUEUED, RUNNING, COMPLETED, FAILED, CANCELLED, PAUSED = (
    "pending", "queued", "running", "completed", "failed", "cancelled", "paused",
)  # fmt: skip
TERMINAL = (COMPLETED, FAILED, CANCELLED)
# A run in one of these states may still change (a paused run's task runs finish, and it can fail).
OPEN = (PENDING, RUNNING, PAUSED)


class Run(models.Model):
    STATUSES = [(s, s) for s in (PENDING, RUNNING, PAUSED, COMPLETED, FAILED, CANCELLED)]

    run_id = models.CharField(primary_key=True, max_length=128)
    dag_id = models.CharField(max_length=100, null=True, blank=True, db_index=True)  # noqa: DJ001 - null is the API's 'none'
    status = models.CharField(max_length=16, choices=STATUSES, default=PENDING, db_index=True)
    context_id = models.CharField(max_length=100, null=True, blank=True)  # noqa: DJ001 - null is the API's 'none'
    context = models.JSONField(default=dict)  # resolved variables, as used by the run
    parameters = models.JSONField(default=dict)  # the schedule's own parameters (for rerun)
    env_vars = models.JSONField(default=dict)
    target_task_id = models.CharField(max_length=100, null=True, blank=True)  # noqa: DJ001 - null is the API's 'none'; schedule-task runs
    timeout_seconds = models.PositiveIntegerField(null=True, blank=True)
    retries = models.PositiveIntegerField(default=0)
    retry_delay_seconds = models.PositiveIntegerField(default=0)
    cancel_force = models.BooleanField(default=False)
    original_run = models.ForeignKey(
        "self", null=True, blank=True, on_delete=models.SET_NULL, related_name="reruns"
    )
    start_time = models.DateTimeField(db_index=True)  # when it was scheduled
    end_time = models.DateTimeField(null=True, blank=True)
    # Set on runs a time schedule made: which schedule, for which of its fire times. Not a foreign
    # key: the runs keep both after the schedule is deleted.
    schedule_id = models.CharField(max_length=100, null=True, blank=True)  # noqa: DJ001 - null: not made by a schedule
    fire_time = models.DateTimeField(null=True, blank=True)
    priority = models.IntegerField(default=0)  # higher is claimed first within a queue
    # The definition versions the run executes: {task_id: version}, and the DAG's version.
    versions = models.JSONField(default=dict)
    dag_version = models.PositiveIntegerField(null=True, blank=True)
    # Held back by its DAG's max_active_runs: pending, with no task run queued, until admitted.
    waiting = models.BooleanField(default=False)

    # Not columns: task run counts that `runs.selectors.with_counts` attaches to a page of runs.
    task_count: int
    completed_tasks: int
    failed_tasks: int

    class Meta:
        ordering = ("-start_time", "run_id")
        constraints = [
            # Each fire time of a schedule makes at most one run, whatever the schedulers do.
            models.UniqueConstraint(fields=["schedule_id", "fire_time"], name="orch_run_schedule_fire_once")
        ]
        indexes = [
            models.Index(
                fields=["dag_id", "start_time"], name="orch_run_waiting", condition=models.Q(waiting=True)
            ),
            # the runs list sorted by end time (start time has its own index) without a full sort
            models.Index(fields=["end_time", "run_id"], name="orch_run_end_time"),
        ]

    def __str__(self) -> str:
        return self.run_id


class RunProgress(models.Model):
    """How many of a run's task runs are not completed yet, so that a completion learns whether it
    was the run's last without reading the run's task runs. Every completion decrements it in its
    own statement and the one that brings it to zero checks the run (runs.completion); nothing else
    changes it, as nothing else moves a task run into or out of `completed` (failures, cancels and
    retries leave a task run not completed, and a rerun is a new run counted at its creation).

    A row of its own, not a column of the run: completions lock it after their task run's row, and
    run-level changes (cancel, fail) lock the run's row before the task runs', so a column would
    invert the lock order. Only completions lock this row, all in the same order. A run without a
    row (made by something other than `runs.services`) is checked after each completion as before
    the counter existed."""

    run = models.OneToOneField(Run, on_delete=models.CASCADE, primary_key=True, related_name="progress")
    unfinished = models.IntegerField()

    def __str__(self) -> str:
        return f"{self.run_id}: {self.unfinished} unfinished"


class TaskRun(models.Model):
    STATUSES = [(s, s) for s in (PENDING, QUEUED, RUNNING, COMPLETED, FAILED, CANCELLED)]

    id = models.CharField(primary_key=True, max_length=128)  # <task_id>_<8 hex>
    # Every index costs each claim and completion an entry (a status change is never a HOT update):
    # the run's lookups use (run, status), an agent's running task runs the status index.
    run = models.ForeignKey(Run, on_delete=models.CASCADE, related_name="task_runs", db_index=False)
    task_id = models.CharField(max_length=100)
    command = models.TextField()
    env = models.JSONField(default=dict)  # resolved parameters and env_vars
    queue = models.CharField(max_length=100)
    upstream = models.JSONField(default=list)  # task run ids this one waits for
    has_dependents = models.BooleanField(default=True)  # False: a leaf, nothing to queue after it
    # The task run ids that wait for this one, written at creation: a completion locks and queues
    # them by primary key. NULL on rows from before the column: the completion then looks for them
    # among the run's pending task runs, which costs in proportion to the run's size.
    dependents = models.JSONField(null=True, blank=True, default=None)
    status = models.CharField(max_length=16, choices=STATUSES, default=PENDING)
    attempts = models.PositiveIntegerField(default=0)  # executions claimed so far
    max_attempts = models.PositiveIntegerField(default=1)
    retry_delay_seconds = models.PositiveIntegerField(default=0)
    timeout_seconds = models.PositiveIntegerField(null=True, blank=True)
    agent_id = models.CharField(max_length=200, null=True, blank=True)  # noqa: DJ001 - null is the API's 'none'
    # The agent process (session) that claimed the current attempt: an agent id survives restarts.
    agent_session = models.CharField(max_length=64, null=True, blank=True)  # noqa: DJ001 - null: not claimed
    queued_at = models.DateTimeField(null=True, blank=True)
    dispatched_at = models.DateTimeField(null=True, blank=True)
    not_before = models.DateTimeField(null=True, blank=True)  # retry delay
    start_time = models.DateTimeField(null=True, blank=True)
    end_time = models.DateTimeField(null=True, blank=True)
    exit_code = models.IntegerField(null=True, blank=True)
    carried_from = models.CharField(max_length=128, null=True, blank=True)  # noqa: DJ001 - null is the API's 'none'; rerun: reused result
    log_bytes = models.PositiveIntegerField(default=0)
    log_truncated = models.BooleanField(default=False)
    priority = models.IntegerField(default=0)  # the run's priority, here so a claim can order by it
    pool = models.CharField(max_length=100, null=True, blank=True)  # noqa: DJ001 - null: no pool

    class Meta:
        ordering = ("run_id", "id")
        indexes = [
            models.Index(fields=["run", "status"], name="orch_taskrun_run_status"),
            models.Index(fields=["status", "queue", "queued_at"], name="orch_taskrun_queue"),
            # Both stay empty while no run has a positive priority and no task a pool, so the
            # claim's checks against them cost next to nothing then.
            models.Index(
                fields=["queue", "priority"],
                name="orch_taskrun_prioritized",
                condition=models.Q(status="queued", priority__gt=0),
            ),
            models.Index(
                fields=["pool", "status"], name="orch_taskrun_pool", condition=models.Q(pool__isnull=False)
            ),
        ]

    def __str__(self) -> str:
        return self.id


class TaskLogLine(models.Model):
    id = models.BigAutoField(primary_key=True)
    task_run = models.ForeignKey(TaskRun, on_delete=models.CASCADE, related_name="log_lines")
    at = models.DateTimeField()
    line = models.TextField()

    class Meta:
        ordering = ("id",)
        indexes = [models.Index(fields=["task_run", "id"], name="orch_tasklog_run_id")]

    def __str__(self) -> str:
        return f"{self.task_run_id}#{self.id}"


class IdempotencyKey(models.Model):
    """The first answer to a run-creating request sent with an `Idempotency-Key`, so that a retry
    with the same key gets that answer instead of a second run. Scoped to the caller; kept 24 h."""

    principal = models.CharField(max_length=300)
    key = models.CharField(max_length=255)
    fingerprint = models.CharField(max_length=64)  # sha256 of method, path and body
    status_code = models.PositiveSmallIntegerField()
    response = models.JSONField()
    created_at = models.DateTimeField(db_index=True)

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["principal", "key"], name="orch_idempotency_key_per_principal")
        ]

    def __str__(self) -> str:
        return f"{self.principal}:{self.key}"
