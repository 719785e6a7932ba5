"""Scheduling, cancel, rerun and queue purge."""

from __future__ import annotations

import secrets
from dataclasses import replace
from datetime import datetime

from django.db import IntegrityError, transaction

from orchestrator.definitions.models import Dag, TaskDefinition
from orchestrator.definitions.selectors import context_resolve, dependency_closure
from orchestrator.events.services import event_emit_run, event_emit_task_runs
from orchestrator.runs import lifecycle
from orchestrator.runs.models import COMPLETED, QUEUED, TERMINAL, Run, TaskLogLine, TaskRun
from orchestrator.runs.planning import (
    ScheduleOptions,
    build_task_runs,
    mark_leaves,
    new_task_run_ids,
    split_parameters,
    with_parameter_set,
)  # fmt: skip
from shared.api import errors
from shared.api.problems import Problems
from shared.api.time import now_ms


def _create_run(
    *, opts: ScheduleOptions, dag_id: str | None, context_vars: dict, task_runs: list[TaskRun], **extra
) -> Run:
    """One transaction: the run and its task runs, all `pending`, with their events."""
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
                start_time=now_ms(),
                **extra,
            )
            for tr in task_runs:
                tr.run = run
            TaskRun.objects.bulk_create(task_runs)
            event_emit_run(run)
            event_emit_task_runs([tr for tr in task_runs if not tr.carried_from], run)
    except IntegrityError:
        # a duplicate run_id is a 409
        if Run.objects.filter(pk=run_id).exists():
            raise errors.AlreadyExists(f"Run {run_id} already exists.", field="run_id") from None
        raise
    return run


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
) -> tuple[Run, list[TaskRun]]:
    """The task and every task it depends on, transitively, as one run whose dag_id is null;
    `queue` overrides the scheduled task's queue (not its dependencies'). A time schedule passes
    its id and the fire time the run is for."""
    if not TaskDefinition.objects.filter(pk=task_id).exists():
        raise errors.NotFound(f"Task {task_id} not found.")
    p = Problems()
    opts = with_parameter_set(options, p)
    p.raise_if_any()
    _reject_known_run_id(opts.run_id)
    definitions = dependency_closure([task_id])
    per_task = split_parameters(p, opts.parameters, set(definitions), default_task=task_id)
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
    run = _create_run(
        opts=opts, dag_id=None, context_vars=context_vars, task_runs=task_runs, target_task_id=task_id,
        schedule_id=schedule_id, fire_time=fire_time,
    )  # fmt: skip
    lifecycle.run_start(run_id=run.run_id)
    return run, task_runs


def run_schedule_dag(
    *,
    dag_id: str,
    options: ScheduleOptions,
    schedule_id: str | None = None,
    fire_time: datetime | None = None,
) -> tuple[Run, list[TaskRun]]:
    dag = Dag.objects.filter(pk=dag_id).first()
    if dag is None:
        raise errors.NotFound(f"DAG {dag_id} not found.")
    p = Problems()
    opts = with_parameter_set(options, p)
    p.raise_if_any()
    _reject_known_run_id(opts.run_id)
    opts = replace(opts, context=opts.context or dag.context)
    # A DAG's tasks plus whatever they depend on (decision: outcome-based, like schedule-task).
    definitions = dependency_closure([entry["id"] for entry in dag.tasks])
    per_task = split_parameters(p, opts.parameters, set(definitions), default_task=None)
    p.raise_if_any()
    context_vars = context_resolve(opts.context)
    task_runs = build_task_runs(
        definitions=definitions,
        dag_parameters={entry["id"]: entry.get("parameters", {}) for entry in dag.tasks},
        context_vars=context_vars,
        schedule_parameters=per_task,
        opts=opts,
    )
    run = _create_run(
        opts=opts, dag_id=dag.id, context_vars=context_vars, task_runs=task_runs,
        schedule_id=schedule_id, fire_time=fire_time,
    )  # fmt: skip
    lifecycle.run_start(run_id=run.run_id)
    return run, task_runs


def get_run(run_id: str) -> Run:
    run = Run.objects.filter(pk=run_id).first()
    if run is None:
        raise errors.NotFound(f"Run {run_id} not found.")
    return run


@transaction.atomic
def run_cancel(*, run_id: str, force: bool) -> int:
    """Pending/queued task runs cancelled, running ones stopped (SIGTERM, SIGKILL
    after the grace period; force: SIGKILL at once); the run is `cancelled` at once."""
    get_run(run_id)
    run = lifecycle.lock_run(run_id)
    if run.status in TERMINAL:
        raise errors.InvalidState(f"Run {run_id} is already {run.status}.")
    return lifecycle.cancel_locked(run, force=force, now=now_ms())


@transaction.atomic
def queue_purge(*, queue: str) -> int:
    """Queued task runs of the queue are cancelled; their runs can no longer complete, so they are
    cancelled too (decision, docs/decisions.md). Returns how many task runs were removed."""
    run_ids = sorted(set(TaskRun.objects.filter(queue=queue, status=QUEUED).values_list("run_id", flat=True)))
    removed = 0
    now = now_ms()
    for run_id in run_ids:  # sorted: concurrent purges lock runs in the same order
        run = lifecycle.lock_run(run_id)
        removed += TaskRun.objects.filter(run=run, queue=queue, status=QUEUED).count()
        lifecycle.cancel_locked(run, force=False, now=now)
    return removed


def _downstream(task_id: str, deps: dict[str, list[str]]) -> set[str]:
    found = {task_id}
    changed = True
    while changed:
        changed = False
        for t, ups in deps.items():
            if t not in found and found.intersection(ups):
                found.add(t)
                changed = True
    return found


def _upstream(tasks: set[str], deps: dict[str, list[str]]) -> set[str]:
    found: set[str] = set()
    frontier = list(tasks)
    while frontier:
        for up in deps.get(frontier.pop(), []):
            if up not in found:
                found.add(up)
                frontier.append(up)
    return found - tasks


def rerun_selection(original: Run, *, failed_only: bool, from_task: str | None) -> tuple[set[str], set[str]]:
    """(task ids to execute again, task ids whose completed result is carried over)."""
    old = {tr.task_id: tr for tr in original.task_runs.all()}
    by_id = {tr.id: tr.task_id for tr in old.values()}
    deps = {t: [by_id[u] for u in tr.upstream] for t, tr in old.items()}
    if from_task is not None and from_task not in old:
        raise errors.ValidationFailed(
            f"task {from_task} is not part of run {original.run_id}", field="from_task"
        )
    selected = _downstream(from_task, deps) if from_task else set(old)
    if failed_only:
        selected = {t for t in selected if old[t].status != COMPLETED}
    if not selected:
        raise errors.InvalidState(f"Run {original.run_id} has no failed task runs to rerun.")
    ancestors = _upstream(selected, deps)
    execute = selected | {t for t in ancestors if old[t].status != COMPLETED}
    return execute, ancestors - execute


def _rerun_task_runs(
    original: Run, execute: set[str], carry: set[str], *, reset_params: bool
) -> list[TaskRun]:
    old = {tr.task_id: tr for tr in original.task_runs.all()}
    ids = new_task_run_ids(sorted(execute | carry))
    by_old_id = {tr.id: ids[t] for t, tr in old.items() if t in ids}
    fresh = _fresh_definitions(original, execute) if reset_params else {}
    out = []
    for task_id in sorted(ids):
        tr = old[task_id]
        new = TaskRun(
            id=ids[task_id],
            task_id=task_id,
            command=fresh[task_id].command if task_id in fresh else tr.command,
            env=fresh[task_id].env if task_id in fresh else tr.env,
            queue=tr.queue,
            upstream=[by_old_id[u] for u in tr.upstream],
            max_attempts=tr.max_attempts,
            retry_delay_seconds=tr.retry_delay_seconds,
            timeout_seconds=tr.timeout_seconds,
        )
        if task_id in carry:
            new.status, new.carried_from = COMPLETED, tr.id
            new.start_time, new.end_time, new.exit_code = tr.start_time, tr.end_time, tr.exit_code
        out.append(new)
    return mark_leaves(out)


def _fresh_definitions(original: Run, task_ids: set[str]) -> dict[str, TaskRun]:
    """reset_params: commands and parameters from the current definitions, without the original
    schedule's parameters and env_vars."""
    definitions = {t.id: t for t in TaskDefinition.objects.filter(pk__in=task_ids)}
    missing = sorted(task_ids - set(definitions))
    if missing:
        raise errors.InvalidState(
            f"Task definition(s) {', '.join(missing)} no longer exist; cannot reset parameters."
        )
    dag = Dag.objects.filter(pk=original.dag_id).first() if original.dag_id else None
    dag_params = {e["id"]: e.get("parameters", {}) for e in dag.tasks} if dag else {}
    runs = build_task_runs(
        definitions=definitions,
        dag_parameters=dag_params,
        context_vars=context_resolve(original.context_id),
        schedule_parameters={},
        opts=ScheduleOptions(),
    )
    return {tr.task_id: tr for tr in runs}


def run_rerun(*, run_id: str, failed_only: bool, reset_params: bool, from_task: str | None) -> Run:
    """A new run linked to the original: all task runs, or `failed_only`, or `from_task` and its
    downstream; completed upstream results are carried over rather than executed again.
    `reset_params` takes commands and parameters from the current definitions."""
    original = get_run(run_id)
    if original.status not in TERMINAL:
        raise errors.InvalidState(
            f"Run {run_id} is still {original.status}; cancel it or wait for it to end."
        )
    execute, carry = rerun_selection(original, failed_only=failed_only, from_task=from_task)
    task_runs = _rerun_task_runs(original, execute, carry, reset_params=reset_params)
    opts = ScheduleOptions(
        context=original.context_id,
        env_vars={} if reset_params else original.env_vars,
        parameters={} if reset_params else original.parameters,
        timeout_seconds=original.timeout_seconds,
        retries=original.retries,
        retry_delay_seconds=original.retry_delay_seconds,
    )
    context_vars = context_resolve(original.context_id) if reset_params else original.context
    run = _create_run(
        opts=opts, dag_id=original.dag_id, context_vars=context_vars, task_runs=task_runs,
        original_run=original, target_task_id=original.target_task_id,
    )  # fmt: skip
    carried = [tr for tr in task_runs if tr.carried_from]
    TaskLogLine.objects.bulk_create(
        [
            TaskLogLine(
                task_run=tr,
                at=run.start_time,
                line=f"[orchestrator] result carried over from {tr.carried_from}",
            )
            for tr in carried
        ]
    )
    lifecycle.run_start(run_id=run.run_id)
    return run
