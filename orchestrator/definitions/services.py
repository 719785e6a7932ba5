"""Writes for task definitions, DAGs, contexts and parameter sets."""

from __future__ import annotations

from typing import Any, TypeVar

from django.conf import settings
from django.db import transaction
from django.db.models import Max

from orchestrator.audit.services import SYSTEM_ACTOR, record
from orchestrator.definitions import hooks
from orchestrator.definitions.models import (
    Context,
    Dag,
    DefinitionVersion,
    ParameterSet,
    Pool,
    TaskDefinition,
)  # fmt: skip
from orchestrator.definitions.selectors import context_chain
from orchestrator.definitions.validation import check_id
from shared.api import errors
from shared.api.time import now_ms
from shared.locks import lock_name

Definition = TypeVar("Definition", TaskDefinition, Dag, Context, ParameterSet)
Versioned = TypeVar("Versioned", TaskDefinition, Dag)
VERSION_KIND = {TaskDefinition: "task", Dag: "dag"}


def _record(actor: str, kind: str, created: bool, resource: str, changes: dict[str, Any]) -> None:
    record(
        actor=actor,
        action=f"{kind}.{'created' if created else 'updated'}",
        resource=resource,
        changes=changes,
    )


def _lock_id(model: type[Definition], pk: str) -> None:
    # Two PUTs of an id that does not exist yet would both find nothing to lock and both insert
    # (a duplicate-key 500 for the second): the id itself is locked first, so the second waits
    # and then updates what the first created.
    lock_name(f"{model._meta.db_table}:{pk}")


def _upsert(model: type[Definition], pk: str, fields: dict[str, Any]) -> tuple[Definition, bool]:
    now = now_ms()
    _lock_id(model, pk)
    obj = model.objects.select_for_update().filter(pk=pk).first()
    if obj is None:
        return model.objects.create(pk=pk, created_at=now, updated_at=now, **fields), True
    for name, value in fields.items():
        setattr(obj, name, value)
    obj.updated_at = now
    obj.save()
    return obj, False


def _versioned_upsert(model: type[Versioned], pk: str, fields: dict[str, Any]) -> tuple[Versioned, bool]:
    """Creates or replaces a task or DAG definition: a PUT that changes it makes a new version (its
    snapshot kept for the runs that executed it); a PUT that changes nothing keeps the version and
    touches nothing. A definition created again after a delete continues the numbering."""
    kind = VERSION_KIND[model]
    now = now_ms()
    _lock_id(model, pk)
    obj = model.objects.select_for_update().filter(pk=pk).first()
    if obj is not None and all(getattr(obj, name) == value for name, value in fields.items()):
        return obj, False
    created = obj is None
    if obj is None:
        last = DefinitionVersion.objects.filter(kind=kind, definition_id=pk).aggregate(v=Max("version"))["v"]
        obj = model(pk=pk, created_at=now, version=(last or 0) + 1, **fields)
    else:
        for name, value in fields.items():
            setattr(obj, name, value)
        obj.version += 1
    obj.updated_at = now
    obj.save()
    DefinitionVersion.objects.create(
        kind=kind, definition_id=pk, version=obj.version, snapshot=fields, created_at=now
    )
    return obj, created


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
    pool: str | None = None,
    allowed_env: list[str] | None = None,
    actor: str = SYSTEM_ACTOR,
) -> tuple[TaskDefinition, bool]:
    """Creates or replaces the task; an empty `name` means the id, an empty `queue` the default
    queue. `pool` names an existing pool (unknown: 400). `allowed_env` (null: not declared) lists
    the environment names scheduling may set for the task."""
    check_id(task_id, "task_id")
    _check_dependencies(task_id, dependencies)
    if pool and not Pool.objects.filter(pk=pool).exists():
        raise errors.ValidationFailed(f"unknown pool: {pool}", field="pool")
    task, created = _versioned_upsert(
        TaskDefinition,
        task_id,
        dict(
            name=name or task_id,
            description=description,
            command=command,
            dependencies=dependencies,
            parameters=parameters,
            allowed_env=allowed_env,
            queue=queue or settings.DEFAULT_TASK_QUEUE,
            pool=pool or None,
        ),
    )
    _record(
        actor,
        "task",
        created,
        f"tasks/{task_id}",
        {"version": task.version, "command": command, "queue": task.queue, "allowed_env": allowed_env},
    )
    return task, created


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
def task_definition_delete(*, task_id: str, actor: str = SYSTEM_ACTOR) -> None:
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
    record(actor=actor, action="task.deleted", resource=f"tasks/{task_id}")


@transaction.atomic
def dag_put(
    *,
    dag_id: str,
    name: str,
    description: str,
    tasks: list[dict[str, Any]],
    context: str | None,
    tags: list[str],
    max_active_runs: int | None = None,
    actor: str = SYSTEM_ACTOR,
) -> tuple[Dag, bool]:
    """`tasks` are `{id, parameters}` entries; an empty `name` means the id. `max_active_runs`
    (null: no limit) holds further runs of the DAG back, `pending`, until an active one ends."""
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
    fields = dict(
        name=name or dag_id, description=description, tasks=tasks, context=context, tags=tags,
        max_active_runs=max_active_runs,
    )  # fmt: skip
    dag, created = _versioned_upsert(Dag, dag_id, fields)
    _record(
        actor, "dag", created, f"dags/{dag_id}", {"version": dag.version, "tasks": ids, "context": context}
    )
    # a raised limit admits runs that were waiting for it (runs' hook)
    hooks.dag_saved(dag_id)
    return dag, created


@transaction.atomic
def dag_delete(*, dag_id: str, actor: str = SYSTEM_ACTOR) -> None:
    deleted, _ = Dag.objects.filter(pk=dag_id).delete()
    if not deleted:
        raise errors.NotFound(f"DAG {dag_id} not found.")
    record(actor=actor, action="dag.deleted", resource=f"dags/{dag_id}")


@transaction.atomic
def context_put(
    *, context_id: str, variables: dict[str, str], extends: str | None, actor: str = SYSTEM_ACTOR
) -> tuple[Context, bool]:
    check_id(context_id, "context_id")
    if extends and extends != context_id and not Context.objects.filter(pk=extends).exists():
        raise errors.ValidationFailed(f"unknown context: {extends}", field="extends")
    context, created = _upsert(Context, context_id, dict(variables=variables, extends=extends))
    context_chain(context_id)  # a cycle through `extends` is a 400 (and rolls the write back)
    # Variable names only: their values may be credentials handed to commands.
    _record(
        actor,
        "context",
        created,
        f"contexts/{context_id}",
        {"variables": sorted(variables), "extends": extends},
    )
    return context, created


@transaction.atomic
def parameter_set_put(
    *, parameter_set_id: str, parameters: dict[str, str], actor: str = SYSTEM_ACTOR
) -> tuple[ParameterSet, bool]:
    """Keys are PARAM or <task_id>.<PARAM>; they are checked when a schedule uses the set."""
    check_id(parameter_set_id, "parameter_set_id")
    parameter_set, created = _upsert(ParameterSet, parameter_set_id, dict(parameters=parameters))
    # Parameter names only: values may be credentials.
    _record(
        actor,
        "parameter_set",
        created,
        f"parameter-sets/{parameter_set_id}",
        {"parameters": sorted(parameters)},
    )
    return parameter_set, created


@transaction.atomic
def pool_put(*, name: str, slots: int, actor: str = SYSTEM_ACTOR) -> tuple[Pool, bool]:
    """Creates a pool or changes its slots; task runs waiting for a slot are woken when it grows."""
    check_id(name, "name")
    now = now_ms()
    pool, created = Pool.objects.update_or_create(
        pk=name, defaults={"slots": slots, "updated_at": now}, create_defaults={"slots": slots,
        "created_at": now, "updated_at": now},
    )  # fmt: skip
    _record(actor, "pool", created, f"pools/{name}", {"slots": slots})
    hooks.pool_saved(name)  # runs wakes task runs waiting for a slot
    return pool, created
