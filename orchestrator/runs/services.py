"""Scheduling, cancel, rerun and queue purge.

Lock order (the orchestrator's, everywhere): a schedule row, then a definition's id and row (a DAG,
a task, a pool), then run rows, then their task run rows in primary-key order, and the audit chain
lock last: its one chain is shared by every write, so the append comes after every row change a
service makes, and nothing is locked after it but rows the transaction made itself. Admission of
waiting runs (the DAG row, then other runs) therefore waits for the commit when a run is made
inside a larger transaction (the scheduler's fire of a schedule).
"""

from __future__ import annotations

import json
import re
import secrets
from collections.abc import Callable
from dataclasses import replace
from datetime import datetime
from typing import Any

from django.db import IntegrityError, connection, transaction

from orchestrator.audit.services import SYSTEM_ACTOR, record
from orchestrator.definitions import environment
from orchestrator.definitions.models import Dag, TaskDefinition
from orchestrator.definitions.selectors import context_resolve, source_closure, task_sources
from orchestrator.events.services import event_emit_run, event_emit_task_runs
from orchestrator.runs import state
from orchestrator.runs.models import (
    COMPLETED,
    PAUSED,
    PENDING,
    QUEUED,
    RUNNING,
    TERMINAL,
    Run,
    RunProgress,
    TaskLogLine,
    TaskRun,
)  # fmt: skip
from orchestrator.runs.planning import (
    NewTaskRun,
    ScheduleOptions,
    build_task_runs,
    latest_sources,
    redraw_ids,
    rerun_selection,
    rerun_task_runs,
    split_parameters,
    versions_of,
    with_parameter_set,
)  # fmt: skip
from orchestrator.runs.selectors import run_get
from orchestrator.runs.wakeups import Wakeup, send_on_commit
from shared.api import errors
from shared.api.problems import Problems
from shared.api.time import now_ms
from shared.bulkinsert import among, copy_rows


def _create_run(
    *,
    opts: ScheduleOptions,
    dag_id: str | None,
    context_vars: dict,
    task_runs: list[NewTaskRun],
    actor: str,
    action: str,
    **extra,
) -> tuple[Run, list[NewTaskRun]]:
    """One transaction: the run and its task runs, all `pending`, with their events and its audit
    event (which names the target, and of the env vars and parameters only their names and a hash:
    the values may carry credentials). Returns the task runs as inserted (`_insert_task_runs`)."""
    run_id = opts.run_id or f"run_{secrets.token_hex(8)}"
    try:
        with transaction.atomic():
            run = Run.objects.create(
                run_id=run_id,
                dag_id=dag_id,
                context_id=opts.context,
                context=context_vars,
                parameters=opts.parameters,
                env_vars=opts.env_vars,
                timeout_seconds=opts.timeout_seconds,
                retries=opts.retries,
                retry_delay_seconds=opts.retry_delay_seconds,
                priority=opts.priority,
                start_time=now_ms(),
                **extra,
            )
            task_runs = _insert_task_runs(run, task_runs)
            event_emit_run(run)
            event_emit_task_runs([tr for tr in task_runs if not tr.carried_from], run)
            # (runs.models.RunProgress) carried-over task runs are completed already
            RunProgress.objects.create(run=run, unfinished=sum(tr.status != COMPLETED for tr in task_runs))
            record(actor=actor, action=action, resource=f"runs/{run_id}", changes=_run_changes(run))
    except IntegrityError:
        # a duplicate run_id is a 409
        if Run.objects.filter(pk=run_id).exists():
            raise errors.AlreadyExists(f"Run {run_id} already exists.", field="run_id") from None
        raise
    return run, task_runs


# What `_write_task_runs` sets, in its order; the other columns are nullable and stay NULL.
NEW_TASK_RUN_COLUMNS = (
    "id", "run_id", "task_id", "command", "env", "queue", "upstream", "has_dependents", "status",
    "attempts", "max_attempts", "retry_delay_seconds", "timeout_seconds", "priority", "pool",
    "carried_from", "start_time", "end_time", "exit_code", "log_bytes", "log_truncated", "dependents",
)  # fmt: skip


def _insert_task_runs(run: Run, task_runs: list[NewTaskRun]) -> list[NewTaskRun]:
    """Returns them as inserted: an id that clashes with an existing task run's (the insert finds
    it, `planning.new_task_run_ids`) is drawn again and the insert repeated, alone (a savepoint)."""
    while True:
        try:
            with transaction.atomic():
                _write_task_runs(run, task_runs)
            return task_runs
        except IntegrityError:
            ids = among(tr.id for tr in task_runs)
            taken = set(TaskRun.objects.filter(pk__in=ids).values_list("pk", flat=True))
            if not taken:
                raise
            task_runs = redraw_ids(task_runs, taken)


def _write_task_runs(run: Run, task_runs: list[NewTaskRun]) -> None:
    """On PostgreSQL one COPY: of the ways in it costs both sides least (a 100,000-task DAG's rows,
    as one JSON document unpacked by `jsonb_populate_recordset`, cost PostgreSQL 4 s, by COPY
    under 0.5 s, and no model instance is made)."""
    dependents = _dependents(task_runs)
    if connection.vendor != "postgresql":
        TaskRun.objects.bulk_create(
            [TaskRun(run=run, dependents=dependents.get(tr.id, []), **tr._asdict()) for tr in task_runs]
        )
        return
    run_id, env_json, upstream_json = run.run_id, _json_once(), _id_list_json(task_runs)
    copy_rows(
        TaskRun,
        NEW_TASK_RUN_COLUMNS,
        (
            (tr.id, run_id, tr.task_id, tr.command, env_json(tr.env), tr.queue, upstream_json(tr.upstream),
             tr.has_dependents, tr.status, 0, tr.max_attempts, tr.retry_delay_seconds,
             tr.timeout_seconds, tr.priority, tr.pool, tr.carried_from, tr.start_time, tr.end_time,
             tr.exit_code, 0, False, upstream_json(dependents.get(tr.id, [])))
            for tr in task_runs
        ),
    )  # fmt: skip


def _dependents(task_runs: list[NewTaskRun]) -> dict[str, list[str]]:
    """{task run id: the ids of the task runs that wait for it}, from the final upstream lists (after
    any id was drawn again), in the order of `task_runs`."""
    dependents: dict[str, list[str]] = {}
    for tr in task_runs:
        for upstream_id in tr.upstream:
            dependents.setdefault(upstream_id, []).append(tr.id)
    return dependents


def _json_once() -> Callable[[Any], str]:
    """JSON of an object, encoded once per object: task runs share one env object where nothing
    but the run's own values makes it (`planning.build_task_runs`)."""
    encode = json.JSONEncoder(separators=(",", ":")).encode
    done: dict[int, str] = {}

    def encoded(value: Any) -> str:
        key = id(value)  # the objects outlive this insert: ids are not reused meanwhile
        if key not in done:
            done[key] = encode(value)
        return done[key]

    return encoded


UNSAFE_IN_ID = re.compile(r"[^A-Za-z0-9_.-]")


def _id_list_json(task_runs: list[NewTaskRun]) -> Callable[[list[str]], str]:
    """JSON of a list of task run ids: joined as they are when none needs escaping (checked once
    for all: task ids are letters, digits and `_.-`, and task run ids add `_` and hex), where an
    encoder call each cost a 100,000-task DAG half a second."""
    if UNSAFE_IN_ID.search("".join(tr.id for tr in task_runs)):
        return json.JSONEncoder(separators=(",", ":")).encode
    return lambda ids: '["' + '","'.join(ids) + '"]' if ids else "[]"


def ready_at_start(task_runs: list[NewTaskRun]) -> list[str]:
    """The ids of a new run's task runs that are ready when it starts: pending, with every upstream
    completed (a DAG's roots; after a rerun also those whose upstream was carried over)."""
    completed = {tr.id for tr in task_runs if tr.status == COMPLETED}
    return [tr.id for tr in task_runs if tr.status == PENDING and all(u in completed for u in tr.upstream)]


def _run_changes(run: Run) -> dict[str, Any]:
    original = run.original_run_id if run.original_run_id else None
    return {
        "dag_id": run.dag_id,
        "task_id": run.target_task_id,
        "schedule_id": run.schedule_id,
        "original_run": original,
        **environment.audit_changes(env_vars=run.env_vars, parameters=run.parameters),
    }


def _reject_known_run_id(run_id: str | None) -> None:
    if run_id and Run.objects.filter(pk=run_id).exists():
        raise errors.AlreadyExists(f"Run {run_id} already exists.", field="run_id")


def run_schedule_task(
    *,
    task_id: str,
    options: ScheduleOptions,
    queue: str | None,
    schedule_id: str | None = None,
    fire_time: datetime | None = None,
    actor: str = SYSTEM_ACTOR,
) -> tuple[Run, list[NewTaskRun]]:
    """The task and every task it depends on, transitively, as one run whose dag_id is null;
    `queue` overrides the scheduled task's queue (not its dependencies'). A time schedule passes
    its id and the fire time the run is for."""
    if not TaskDefinition.objects.filter(pk=task_id).exists():
        raise errors.NotFound(f"Task {task_id} not found.")
    p = Problems()
    opts = with_parameter_set(options, p)
    p.raise_if_any()
    _reject_known_run_id(opts.run_id)
    definitions = source_closure([task_id])
    per_task = split_parameters(p, opts.parameters, set(definitions), default_task=task_id)
    environment.check_allowed(p, env_vars=opts.env_vars, per_task=per_task, definitions=definitions)
    p.raise_if_any()
    context_vars = context_resolve(opts.context)
    task_runs = build_task_runs(
        definitions=definitions,
        dag_parameters={},
        context_vars=context_vars,
        schedule_parameters=per_task,
        opts=opts,
        queue_override={task_id: queue} if queue else None,
    )
    run, task_runs = _create_run(
        opts=opts, dag_id=None, context_vars=context_vars, task_runs=task_runs, target_task_id=task_id,
        versions=versions_of(definitions), schedule_id=schedule_id, fire_time=fire_time,
        actor=actor, action="run.scheduled",
    )  # fmt: skip
    state.run_start(run_id=run.run_id, ready=ready_at_start(task_runs))
    return run, task_runs


def run_schedule_dag(
    *,
    dag_id: str,
    options: ScheduleOptions,
    schedule_id: str | None = None,
    fire_time: datetime | None = None,
    actor: str = SYSTEM_ACTOR,
) -> tuple[Run, list[NewTaskRun]]:
    dag = Dag.objects.filter(pk=dag_id).first()
    if dag is None:
        raise errors.NotFound(f"DAG {dag_id} not found.")
    p = Problems()
    opts = with_parameter_set(options, p)
    p.raise_if_any()
    _reject_known_run_id(opts.run_id)
    opts = replace(opts, context=opts.context or dag.context)
    # A DAG's tasks plus whatever they depend on (decision: outcome-based, like schedule-task).
    definitions = source_closure([entry["id"] for entry in dag.tasks])
    per_task = split_parameters(p, opts.parameters, set(definitions), default_task=None)
    environment.check_allowed(p, env_vars=opts.env_vars, per_task=per_task, definitions=definitions)
    p.raise_if_any()
    context_vars = context_resolve(opts.context)
    task_runs = build_task_runs(
        definitions=definitions,
        dag_parameters={entry["id"]: entry.get("parameters", {}) for entry in dag.tasks},
        context_vars=context_vars,
        schedule_parameters=per_task,
        opts=opts,
    )
    limited = dag.max_active_runs is not None
    run, task_runs = _create_run(
        opts=opts, dag_id=dag.id, context_vars=context_vars, task_runs=task_runs,
        versions=versions_of(definitions), dag_version=dag.version, waiting=limited,
        schedule_id=schedule_id, fire_time=fire_time, actor=actor, action="run.scheduled",
    )  # fmt: skip
    _start(run, task_runs)
    return run, task_runs


def _start(run: Run, task_runs: list[NewTaskRun]) -> None:
    """A run of a DAG with max_active_runs is created waiting and admitted when there is room."""
    if run.waiting:
        # After the commit (at once outside a transaction): a schedule's fire holds the audit chain
        # by now, and admission locks the DAG row and waiting runs, which a DAG PUT or a cancel
        # holds while it waits for the chain. The sweeper admits what a lost process left waiting.
        dag_id = run.dag_id or ""
        transaction.on_commit(lambda: state.dag_admit_waiting(dag_id=dag_id))
    else:
        state.run_start(run_id=run.run_id, ready=ready_at_start(task_runs))


@transaction.atomic
def run_cancel(*, run_id: str, force: bool, actor: str = SYSTEM_ACTOR) -> int:
    """Pending/queued task runs cancelled, running ones stopped (SIGTERM, SIGKILL
    after the grace period; force: SIGKILL at once); the run is `cancelled` at once."""
    run_get(run_id)
    run = state.run_lock(run_id)
    if run.status in TERMINAL:
        raise errors.InvalidState(f"Run {run_id} is already {run.status}.")
    cancelled = state.run_cancel_locked(run, force=force, now=now_ms())
    record(actor=actor, action="run.cancelled", resource=f"runs/{run_id}", changes={"force": force})
    return cancelled


@transaction.atomic
def run_pause(*, run_id: str, actor: str = SYSTEM_ACTOR) -> Run:
    """Task runs already running finish; nothing else of the run starts until it is resumed (the
    claim refuses task runs of a paused run, and completions queue no dependents of one). Pausing
    a paused run changes nothing; a finished run cannot be paused (409)."""
    run_get(run_id)
    run = state.run_lock(run_id)
    if run.status in TERMINAL:
        raise errors.InvalidState(f"Run {run_id} is already {run.status}.")
    if run.status != PAUSED:
        Run.objects.filter(pk=run.pk).update(status=PAUSED)
        run.status = PAUSED
        event_emit_run(run)
        record(actor=actor, action="run.paused", resource=f"runs/{run_id}")
    return run


def run_resume(*, run_id: str, actor: str = SYSTEM_ACTOR) -> Run:
    """The run goes on where it stopped: dependents that became ready meanwhile are queued and the
    task runs left queued are woken again (their wake-ups were refused while paused)."""
    run = _resume_locked(run_id, actor)
    if run.status == RUNNING:
        state.run_complete_if_done(run.run_id)  # its last task runs may have finished while paused
        run.refresh_from_db(fields=["status", "end_time"])
    return run


@transaction.atomic
def _resume_locked(run_id: str, actor: str) -> Run:
    run_get(run_id)
    run = state.run_lock(run_id)
    if run.status != PAUSED:
        raise errors.InvalidState(f"Run {run_id} is {run.status}, not paused.")
    # a run is pending until its first task run starts executing
    started = TaskRun.objects.filter(run=run, attempts__gt=0).exists()
    run.status = RUNNING if started else PENDING
    Run.objects.filter(pk=run.pk).update(status=run.status)
    event_emit_run(run, type="dag.resumed")
    waiting = list(TaskRun.objects.filter(run=run, status=QUEUED).values_list("id", "queue", "attempts"))
    TaskRun.objects.filter(run=run, status=QUEUED).update(dispatched_at=now_ms())
    send_on_commit([Wakeup(*row) for row in waiting] + state.run_queue_ready(run))
    record(actor=actor, action="run.resumed", resource=f"runs/{run_id}")
    return run


@transaction.atomic
def queue_purge(*, queue: str, actor: str = SYSTEM_ACTOR) -> int:
    """Queued task runs of the queue are cancelled; their runs can no longer complete, so they are
    cancelled too (decision, docs/decisions.md). Returns how many task runs were removed."""
    run_ids = sorted(set(TaskRun.objects.filter(queue=queue, status=QUEUED).values_list("run_id", flat=True)))
    removed = 0
    now = now_ms()
    for run_id in run_ids:  # sorted: concurrent purges lock runs in the same order
        run = state.run_lock(run_id)
        removed += TaskRun.objects.filter(run=run, queue=queue, status=QUEUED).count()
        state.run_cancel_locked(run, force=False, now=now)
    record(
        actor=actor,
        action="queue.purged",
        resource=f"queues/{queue}",
        changes={"removed": removed, "runs": run_ids},
    )
    return removed


def _fresh_definitions(
    original: Run, task_ids: set[str], *, reset_params: bool
) -> tuple[dict[str, TaskRun], dict[str, int]]:
    """The latest definitions of `task_ids` as task runs, and their versions. With `reset_params`,
    without the original schedule's parameters and env_vars (and with the context as it is now);
    otherwise with them, as the original was scheduled."""
    definitions = task_sources(task_ids)
    missing = sorted(task_ids - set(definitions))
    if missing:
        raise errors.InvalidState(
            f"Task definition(s) {', '.join(missing)} no longer exist; cannot use the latest versions."
        )
    dag = Dag.objects.filter(pk=original.dag_id).first() if original.dag_id else None
    dag_params = {e["id"]: e.get("parameters", {}) for e in dag.tasks} if dag else {}
    if reset_params:
        opts, per_task, context_vars = ScheduleOptions(), {}, context_resolve(original.context_id)
    else:
        opts = ScheduleOptions(env_vars=original.env_vars)
        known = set(original.task_runs.values_list("task_id", flat=True))
        # parameters of tasks outside this selection are left out (problems are not an error here)
        per_task = split_parameters(
            Problems(), original.parameters, known, default_task=original.target_task_id
        )
        context_vars = original.context
    sources = latest_sources(
        definitions=definitions,
        dag_parameters=dag_params,
        context_vars=context_vars,
        schedule_parameters=per_task,
        opts=opts,
    )
    return sources, versions_of(definitions)


def run_rerun(
    *,
    run_id: str,
    failed_only: bool,
    reset_params: bool,
    from_task: str | None,
    latest: bool = False,
    actor: str = SYSTEM_ACTOR,
) -> Run:
    """A new run linked to the original: all task runs, or `failed_only`, or `from_task` and its
    downstream; completed upstream results are carried over rather than executed again. It
    executes the original's pinned definition versions, unless `latest` (commands, queues, pools
    and task parameters from the current definitions, the schedule's own parameters kept) or
    `reset_params` (the current definitions without the schedule's parameters and env_vars)."""
    original = run_get(run_id)
    if original.status not in TERMINAL:
        raise errors.InvalidState(
            f"Run {run_id} is still {original.status}; cancel it or wait for it to end."
        )
    if not reset_params:
        environment.check_stored(env_vars=original.env_vars, parameters=original.parameters)
    execute, carry = rerun_selection(original, failed_only=failed_only, from_task=from_task)
    fresh, fresh_versions = (
        _fresh_definitions(original, execute, reset_params=reset_params)
        if latest or reset_params
        else ({}, {})
    )
    task_runs = rerun_task_runs(original, execute, carry, fresh)
    versions = {t: v for t, v in original.versions.items() if t in execute | carry} | fresh_versions
    opts = ScheduleOptions(
        context=original.context_id,
        env_vars={} if reset_params else original.env_vars,
        parameters={} if reset_params else original.parameters,
        timeout_seconds=original.timeout_seconds,
        retries=original.retries,
        retry_delay_seconds=original.retry_delay_seconds,
        priority=original.priority,
    )
    context_vars = context_resolve(original.context_id) if reset_params else original.context
    run, task_runs = _create_run(
        opts=opts, dag_id=original.dag_id, context_vars=context_vars, task_runs=task_runs,
        original_run=original, target_task_id=original.target_task_id, versions=versions,
        dag_version=original.dag_version,
        waiting=Dag.objects.filter(pk=original.dag_id, max_active_runs__isnull=False).exists(),
        actor=actor, action="run.rerun",
    )  # fmt: skip
    carried = [tr for tr in task_runs if tr.carried_from]
    TaskLogLine.objects.bulk_create(
        [
            TaskLogLine(
                task_run_id=tr.id,
                at=run.start_time,
                line=f"[orchestrator] result carried over from {tr.carried_from}",
            )
            for tr in carried
        ]
    )
    _start(run, task_runs)
    return run


@transaction.atomic
def run_delete(*, run_id: str, actor: str = SYSTEM_ACTOR) -> None:
    """A finished run, its task runs and their output are deleted (the console's bulk delete; admins
    only). An open run is refused: cancel it first. Reruns of it keep their own copy of what they
    carried over and lose only the link back (`original_run_id` becomes empty)."""
    run_get(run_id)  # 404 when unknown
    run = state.run_lock(run_id)
    if run.status not in TERMINAL:
        raise errors.InvalidState(f"Run {run_id} is still {run.status}; cancel it or wait for it to end.")
    run.delete()
    record(actor=actor, action="run.deleted", resource=f"runs/{run_id}", changes={"status": run.status})
