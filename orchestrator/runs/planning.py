"""Turns definitions and a schedule request into task runs."""

from __future__ import annotations

import secrets
from dataclasses import dataclass, field, replace
from typing import Any

from orchestrator.definitions import environment
from orchestrator.definitions.models import ParameterSet, TaskDefinition
from orchestrator.runs.models import TaskRun
from shared.api.problems import Problems
from shared.bulkinsert import among


@dataclass
class ScheduleOptions:
    """The parts of a schedule body shared by schedule-task and schedule-dag."""

    run_id: str | None = None
    context: str | None = None
    env_vars: dict[str, str] = field(default_factory=dict)
    parameters: dict[str, Any] = field(default_factory=dict)
    timeout_seconds: int | None = None
    retries: int = 0
    retry_delay_seconds: int = 0
    parameter_set: str | None = None
    priority: int = 0  # higher is claimed first within a queue


def with_parameter_set(opts: ScheduleOptions, p: Problems) -> ScheduleOptions:
    """The named parameter set's values under the schedule's own `parameters` (which win)."""
    if not opts.parameter_set:
        return opts
    pset = ParameterSet.objects.filter(pk=opts.parameter_set).first()
    if pset is None:
        p.add("parameter_set", f"unknown parameter set: {opts.parameter_set}")
        return opts
    return replace(opts, parameters={**pset.parameters, **opts.parameters})


def split_parameters(
    p: Problems, raw: dict[str, Any], task_ids: set[str], *, default_task: str | None
) -> dict[str, dict[str, str]]:
    """`<task_id>.<PARAM>` keys (and, for schedule-task, plain keys for the scheduled task)."""
    per_task: dict[str, dict[str, str]] = {}
    for key, value in raw.items():
        task_id, dot, name = key.rpartition(".")
        if not dot:
            task_id, name = default_task or "", key
        field_name = f"parameters.{key}"
        if not task_id:
            p.add(field_name, "keys must have the form <task_id>.<PARAM>")
        elif task_id not in task_ids:
            p.add(field_name, f"task {task_id} is not part of this run")
        else:
            checked = environment.check_entry(p, name, value, field_name)
            if checked is not None:
                per_task.setdefault(task_id, {})[name] = checked
    return per_task


def new_task_run_ids(task_ids: list[str]) -> dict[str, str]:
    """`<task_id>_<8 lowercase hex>`, re-drawn on the rare clash with an existing id.
    The fixed-length suffix makes ids of distinct tasks distinct."""
    ids = {t: f"{t}_{secrets.token_hex(4)}" for t in task_ids}
    while clashes := set(TaskRun.objects.filter(pk__in=among(ids.values())).values_list("pk", flat=True)):
        ids = {t: (f"{t}_{secrets.token_hex(4)}" if v in clashes else v) for t, v in ids.items()}
    return ids


def build_task_runs(
    *,
    definitions: dict[str, TaskDefinition],
    dag_parameters: dict[str, dict[str, str]],
    context_vars: dict[str, str],
    schedule_parameters: dict[str, dict[str, str]],
    opts: ScheduleOptions,
    queue_override: dict[str, str] | None = None,
) -> list[TaskRun]:
    """Unsaved task runs. Precedence, later wins: env_vars, task defaults, DAG task parameters,
    context variables (through `extends`), schedule parameters."""
    ids = new_task_run_ids(sorted(definitions))
    runs = []
    for task_id, task in sorted(definitions.items()):
        env = {
            **opts.env_vars,
            **task.parameters,
            **dag_parameters.get(task_id, {}),
            **context_vars,
            **schedule_parameters.get(task_id, {}),
        }
        runs.append(
            TaskRun(
                id=ids[task_id],
                task_id=task_id,
                command=task.command,
                env=env,
                queue=(queue_override or {}).get(task_id) or task.queue,
                upstream=[ids[d] for d in task.dependencies],
                max_attempts=1 + opts.retries,
                retry_delay_seconds=opts.retry_delay_seconds,
                timeout_seconds=opts.timeout_seconds,
                priority=opts.priority,
                pool=task.pool,
            )
        )
    return mark_leaves(runs)


def versions_of(definitions: dict[str, TaskDefinition]) -> dict[str, int]:
    """{task_id: version}: what a run records it executes (its task runs copy those commands)."""
    return {task_id: task.version for task_id, task in sorted(definitions.items())}


def mark_leaves(task_runs: list[TaskRun]) -> list[TaskRun]:
    """Leaves (no task run waits for them) skip the dependents lookup when they complete."""
    waited_for = {u for tr in task_runs for u in tr.upstream}
    for tr in task_runs:
        tr.has_dependents = tr.id in waited_for
    return task_runs
