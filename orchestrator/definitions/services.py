"""Writes for task definitions, DAGs, contexts and parameter sets."""

from __future__ import annotations

from typing import Any, TypeVar

from django.conf import settings
from django.db import transaction

from orchestrator.definitions.models import Context, Dag, ParameterSet, TaskDefinition
from orchestrator.definitions.selectors import context_chain
from orchestrator.definitions.validation import check_id
from shared.api import errors
from shared.api.time import now_ms

Definition = TypeVar("Definition", TaskDefinition, Dag, Context, ParameterSet)


def _upsert(model: type[Definition], pk: str, fields: dict[str, Any]) -> tuple[Definition, bool]:
    now = now_ms()
    obj = model.objects.select_for_update().filter(pk=pk).first()
    if obj is None:
        return model.objects.create(pk=pk, created_at=now, updated_at=now, **fields), True
    for name, value in fields.items():
        setattr(obj, name, value)
    obj.updated_at = now
    obj.save()
    return obj, False


@transaction.atomic
def task_definition_put(
    *,
    task_id: str,
    name: str,
    description: str,
    command: str,
    dependencies: list[str],
    parameters: dict[str, str],
    queue: str,
) -> tuple[TaskDefinition, bool]:
    """Creates or replaces the task; an empty `name` means the id, an empty `queue` the default
    queue."""
    check_id(task_id, "task_id")
    _check_dependencies(task_id, dependencies)
    return _upsert(
        TaskDefinition,
        task_id,
        dict(
            name=name or task_id,
            description=description,
            command=command,
            dependencies=dependencies,
            parameters=parameters,
            queue=queue or settings.DEFAULT_TASK_QUEUE,
        ),
    )


def _check_dependencies(task_id: str, dependencies: list[str]) -> None:
    if len(set(dependencies)) != len(dependencies):
        raise errors.ValidationFailed("dependencies must not repeat a task", field="dependencies")
    known = set(TaskDefinition.objects.filter(pk__in=dependencies).values_list("id", flat=True))
    unknown = [d for d in dependencies if d not in known and d != task_id]
    if unknown:
        raise errors.ValidationFailed(f"unknown task(s): {', '.join(unknown)}", field="dependencies")
    # a PUT whose dependencies would form a cycle is a 400
    cycle = upstream_path_to(task_id, dependencies)
    if cycle:
        raise errors.ValidationFailed(f"dependency cycle: {' -> '.join(cycle)}", field="dependencies")


def upstream_path_to(task_id: str, dependencies: list[str]) -> list[str] | None:
    """Walks upstream from the new dependencies, one query per level; reaching `task_id` again
    means a cycle, returned as the path task_id -> ... -> task_id."""
    parent: dict[str, str] = {}  # task -> the task that depends on it (how the walk reached it)
    frontier: list[str] = []
    for dep in dependencies:
        parent.setdefault(dep, task_id)
        frontier.append(dep)
    while frontier and task_id not in parent:
        rows = TaskDefinition.objects.filter(pk__in=frontier).values_list("id", "dependencies")
        frontier = []
        for tid, deps in rows:
            for dep in deps:
                if dep not in parent:
                    parent[dep] = tid
                    frontier.append(dep)
    if task_id not in parent:
        return None
    path, node = [task_id], parent[task_id]
    while node != task_id:
        path.append(node)
        node = parent[node]
    path.append(task_id)
    return list(reversed(path))


@transaction.atomic
def task_definition_delete(*, task_id: str) -> None:
    task = TaskDefinition.objects.select_for_update().filter(pk=task_id).first()
    if task is None:
        raise errors.NotFound(f"Task {task_id} not found.")
    # DELETE of a task still referenced by a DAG or another task is a 409
    dependents = [
        t.id for t in TaskDefinition.objects.only("id", "dependencies") if task_id in t.dependencies
    ]
    dags = [d.id for d in Dag.objects.only("id", "tasks") if any(e["id"] == task_id for e in d.tasks)]
    if dependents or dags:
        users = [f"task {t}" for t in dependents] + [f"DAG {d}" for d in dags]
        raise errors.InvalidState(f"Task {task_id} is still referenced by {', '.join(users)}.")
    task.delete()


@transaction.atomic
def dag_put(
    *,
    dag_id: str,
    name: str,
    description: str,
    tasks: list[dict[str, Any]],
    context: str | None,
    tags: list[str],
) -> tuple[Dag, bool]:
    """`tasks` are `{id, parameters}` entries; an empty `name` means the id."""
    check_id(dag_id, "dag_id")
    ids = [t["id"] for t in tasks]
    if len(set(ids)) != len(ids):
        raise errors.ValidationFailed("tasks must not repeat a task", field="tasks")
    known = set(TaskDefinition.objects.filter(pk__in=ids).values_list("id", flat=True))
    unknown = [i for i in ids if i not in known]
    if unknown:
        # a DAG naming an unknown task is a 400
        raise errors.ValidationFailed(f"unknown task(s): {', '.join(unknown)}", field="tasks")
    if context and not Context.objects.filter(pk=context).exists():
        raise errors.ValidationFailed(f"unknown context: {context}", field="context")
    fields = dict(name=name or dag_id, description=description, tasks=tasks, context=context, tags=tags)
    return _upsert(Dag, dag_id, fields)


@transaction.atomic
def dag_delete(*, dag_id: str) -> None:
    deleted, _ = Dag.objects.filter(pk=dag_id).delete()
    if not deleted:
        raise errors.NotFound(f"DAG {dag_id} not found.")


@transaction.atomic
def context_put(*, context_id: str, variables: dict[str, str], extends: str | None) -> tuple[Context, bool]:
    check_id(context_id, "context_id")
    if extends and extends != context_id and not Context.objects.filter(pk=extends).exists():
        raise errors.ValidationFailed(f"unknown context: {extends}", field="extends")
    context, created = _upsert(Context, context_id, dict(variables=variables, extends=extends))
    context_chain(context_id)  # a cycle through `extends` is a 400 (and rolls the write back)
    return context, created


@transaction.atomic
def parameter_set_put(*, parameter_set_id: str, parameters: dict[str, str]) -> tuple[ParameterSet, bool]:
    """Keys are PARAM or <task_id>.<PARAM>; they are checked when a schedule uses the set."""
    check_id(parameter_set_id, "parameter_set_id")
    return _upsert(ParameterSet, parameter_set_id, dict(parameters=parameters))
