"""Turns definitions and a schedule request into task runs, and picks the task runs a rerun
executes again or carries over."""

from __future__ import annotations

import secrets
from dataclasses import dataclass, field, replace
from datetime import datetime
from typing import Any, NamedTuple

from orchestrator.definitions import environment
from orchestrator.definitions.models import ParameterSet
from orchestrator.definitions.selectors import TaskSource
from orchestrator.runs.models import COMPLETED, PENDING, Run, TaskRun
from shared.api import errors
from shared.api.problems import Problems


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
    """`<task_id>_<8 lowercase hex>`. The fixed-length suffix makes ids of distinct tasks distinct;
    the rare clash with an existing id is left to the insert to find (`redraw_ids`): looked up
    first, a 100,000-task DAG's ids cost a query of 0.4 s that nearly always finds none."""
    suffixes = secrets.token_bytes(4 * len(task_ids)).hex()
    return {task_id: f"{task_id}_{suffixes[8 * n : 8 * n + 8]}" for n, task_id in enumerate(task_ids)}


class NewTaskRun(NamedTuple):
    """A task run to insert: the columns a new run's task run sets (the others keep their
    defaults). A tuple, not a model instance: a 100,000-task DAG makes 100,000 of them."""

    id: str
    task_id: str
    command: str
    env: dict[str, str]
    queue: str
    upstream: list[str]  # task run ids this one waits for
    has_dependents: bool  # False: a leaf, nothing to queue after it
    max_attempts: int
    retry_delay_seconds: int
    timeout_seconds: int | None
    priority: int
    pool: str | None
    # a rerun's carried-over result
    status: str = PENDING
    carried_from: str | None = None
    start_time: datetime | None = None
    end_time: datetime | None = None
    exit_code: int | None = None


def redraw_ids(task_runs: list[NewTaskRun], taken: set[str]) -> list[NewTaskRun]:
    """The task runs with each id in `taken` drawn again, and the upstream lists that name it."""
    renamed = {tr.id: f"{tr.task_id}_{secrets.token_hex(4)}" for tr in task_runs if tr.id in taken}
    return [
        tr._replace(id=renamed.get(tr.id, tr.id), upstream=[renamed.get(u, u) for u in tr.upstream])
        for tr in task_runs
    ]


def build_task_runs(
    *,
    definitions: dict[str, TaskSource],
    dag_parameters: dict[str, dict[str, str]],
    context_vars: dict[str, str],
    schedule_parameters: dict[str, dict[str, str]],
    opts: ScheduleOptions,
    queue_override: dict[str, str] | None = None,
) -> list[NewTaskRun]:
    """In task id order. Precedence, later wins: env_vars, task defaults, DAG task parameters,
    context variables (through `extends`), schedule parameters. Leaves (no task run waits for
    them) skip the dependents lookup when they complete."""
    ids = new_task_run_ids(sorted(definitions))
    waited_for = {d for task in definitions.values() for d in task.dependencies}
    overrides = queue_override or {}
    max_attempts = 1 + opts.retries
    shared_env = {**opts.env_vars, **context_vars}
    return [
        NewTaskRun(
            id=ids[task_id],
            task_id=task_id,
            command=task.command,
            env=_task_env(task, opts, dag_parameters, context_vars, schedule_parameters, shared_env),
            queue=overrides.get(task_id) or task.queue,
            upstream=[ids[d] for d in task.dependencies],
            has_dependents=task_id in waited_for,
            max_attempts=max_attempts,
            retry_delay_seconds=opts.retry_delay_seconds,
            timeout_seconds=opts.timeout_seconds,
            priority=opts.priority,
            pool=task.pool,
        )
        for task_id, task in sorted(definitions.items())
    ]


def latest_sources(
    *,
    definitions: dict[str, TaskSource],
    dag_parameters: dict[str, dict[str, str]],
    context_vars: dict[str, str],
    schedule_parameters: dict[str, dict[str, str]],
    opts: ScheduleOptions,
) -> dict[str, TaskRun]:
    """{task_id: unsaved task run with only command, env, queue and pool}: what a rerun with the
    latest definitions takes from them. No ids and no upstream: the rerun keeps the original's
    graph, and a selected task's dependencies are usually outside the selection (carried over)."""
    return {
        task_id: TaskRun(
            task_id=task_id,
            command=task.command,
            env=_task_env(task, opts, dag_parameters, context_vars, schedule_parameters),
            queue=task.queue,
            pool=task.pool,
        )
        for task_id, task in sorted(definitions.items())
    }


def _task_env(
    task: TaskSource,
    opts: ScheduleOptions,
    dag_parameters: dict[str, dict[str, str]],
    context_vars: dict[str, str],
    schedule_parameters: dict[str, dict[str, str]],
    shared: dict[str, str] | None = None,
) -> dict[str, str]:
    """`shared`: the env of a task with no parameters of its own (the run's env_vars and context
    variables), one object for all such tasks."""
    own, in_dag, scheduled = task.parameters, dag_parameters.get(task.id), schedule_parameters.get(task.id)
    if shared is not None and not (own or in_dag or scheduled):
        return shared
    return {**opts.env_vars, **own, **(in_dag or {}), **context_vars, **(scheduled or {})}


def versions_of(definitions: dict[str, TaskSource]) -> dict[str, int]:
    """{task_id: version}: what a run records it executes (its task runs copy those commands)."""
    return {task_id: task.version for task_id, task in sorted(definitions.items())}


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


def rerun_task_runs(
    original: Run, execute: set[str], carry: set[str], fresh: dict[str, TaskRun]
) -> list[NewTaskRun]:
    """The selected task runs again, in task id order: what the original executed (its pinned
    versions), or for the task ids in `fresh` what their latest definitions make."""
    old = {tr.task_id: tr for tr in original.task_runs.all()}
    ids = new_task_run_ids(sorted(execute | carry))
    by_old_id = {tr.id: ids[t] for t, tr in old.items() if t in ids}
    upstream = {t: [by_old_id[u] for u in old[t].upstream] for t in ids}
    waited_for = {u for ups in upstream.values() for u in ups}
    out = []
    for task_id in sorted(ids):
        tr = old[task_id]
        source = fresh.get(task_id, tr)
        new = NewTaskRun(
            id=ids[task_id],
            task_id=task_id,
            command=source.command,
            env=source.env,
            queue=source.queue,
            upstream=upstream[task_id],
            has_dependents=ids[task_id] in waited_for,
            max_attempts=tr.max_attempts,
            retry_delay_seconds=tr.retry_delay_seconds,
            timeout_seconds=tr.timeout_seconds,
            priority=original.priority,
            pool=source.pool,
        )
        if task_id in carry:
            new = new._replace(status=COMPLETED, carried_from=tr.id, start_time=tr.start_time,
                               end_time=tr.end_time, exit_code=tr.exit_code)  # fmt: skip
        out.append(new)
    return out
