"""Reads over definitions: lists, dependency closure and cycle checks, context resolution."""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable
from typing import Any, NamedTuple, TypeVar

from django.db import connection
from django.db.models import QuerySet

from orchestrator.definitions.models import (
    Context,
    Dag,
    DefinitionVersion,
    ParameterSet,
    TaskDefinition,
)
from shared.api import errors
from shared.api.querying import Sort, pattern_filter
from shared.bulkinsert import among, text_array

TASK_SORTS = {
    "id": "id",
    "name": "name",
    "queue": "queue",
    "created_at": "created_at",
    "updated_at": "updated_at",
}
Definition = TypeVar("Definition", TaskDefinition, Dag, Context, ParameterSet)
DAG_SORTS = {"id": "id", "name": "name", "created_at": "created_at", "updated_at": "updated_at"}


def task_list(
    *, pattern: str | None = None, queue: str | None = None, sort: Sort | None = None
) -> QuerySet[TaskDefinition]:
    """`pattern` matches ids or names (`pattern_filter`); `sort` is over `TASK_SORTS`."""
    qs = TaskDefinition.objects.filter(pattern_filter(pattern, "id", "name"))
    if queue:
        qs = qs.filter(queue=queue)
    return qs.order_by(*(sort.order_by(TASK_SORTS) if sort else ["id"]))


def dag_list(*, pattern: str | None = None, sort: Sort | None = None) -> QuerySet[Dag]:
    """`pattern` matches ids or names (`pattern_filter`); `sort` is over `DAG_SORTS`."""
    qs = Dag.objects.filter(pattern_filter(pattern, "id", "name"))
    return qs.order_by(*(sort.order_by(DAG_SORTS) if sort else ["id"]))


def get_or_404(model: type[Definition], pk: str, label: str) -> Definition:
    obj = model.objects.filter(pk=pk).first()
    if obj is None:
        raise errors.NotFound(f"{label} {pk} not found.")
    return obj


def dependency_closure(task_ids: list[str]) -> dict[str, TaskDefinition]:
    """The named tasks and every task they depend on, transitively (outcome-based scheduling)."""
    return _closure(task_ids, lambda ids: TaskDefinition.objects.filter(pk__in=among(ids)))


class TaskSource(NamedTuple):
    """What a run takes from a task definition, and only that: scheduling a 100,000-task DAG reads
    its closure as tuples, where model instances cost it seconds."""

    id: str
    command: str
    dependencies: list[str]
    parameters: dict[str, Any]
    allowed_env: list[str] | None
    queue: str
    pool: str | None
    version: int


def source_closure(task_ids: list[str]) -> dict[str, TaskSource]:
    """`dependency_closure` as `TaskSource`s (what scheduling reads)."""
    return _closure(task_ids, _sources)


def task_sources(task_ids: Iterable[str]) -> dict[str, TaskSource]:
    """{task id: its `TaskSource`} of those of `task_ids` that exist."""
    return {source.id: source for source in _sources(list(task_ids))}


# PostgreSQL: the rows as one JSON document, decoded by one call (row by row, the JSON columns cost
# a decoder call each, most of a second for a 100,000-task DAG).
SOURCES_SQL = f"""
SELECT coalesce(json_agg(json_build_array({", ".join(f"t.{name}" for name in TaskSource._fields)})), '[]')::text
  FROM orch_definitions_taskdefinition t WHERE t.id = ANY({{ids}})
"""  # noqa: S608 - column names


def _sources(task_ids: list[str]) -> Iterable[TaskSource]:
    if connection.vendor != "postgresql":
        rows = TaskDefinition.objects.filter(pk__in=task_ids).values_list(*TaskSource._fields)
        return map(TaskSource._make, rows)
    ids_sql, ids = text_array(task_ids)
    with connection.cursor() as cursor:
        cursor.execute(SOURCES_SQL.format(ids=ids_sql), [ids])
        return map(TaskSource._make, json.loads(cursor.fetchone()[0]))


Loaded = TypeVar("Loaded", TaskDefinition, TaskSource)


def _closure(task_ids: list[str], load: Callable[[list[str]], Iterable[Loaded]]) -> dict[str, Loaded]:
    """Breadth first: one query per level of dependencies not loaded yet (a DAG naming all its
    tasks takes one)."""
    found: dict[str, Loaded] = {}
    frontier = list(dict.fromkeys(task_ids))
    while frontier:
        batch = {t.id: t for t in load(frontier)}
        missing = [t for t in frontier if t not in batch]
        if missing:
            raise errors.ValidationFailed(f"unknown task(s): {', '.join(missing)}", field="dependencies")
        found.update(batch)
        frontier = sorted({d for t in batch.values() for d in t.dependencies if d not in found})
    return found


def context_chain(context_id: str) -> list[Context]:
    """The context and its ancestors through `extends`, nearest first. Cycles are a 400."""
    chain: list[Context] = []
    seen: set[str] = set()
    current: str | None = context_id
    while current:
        if current in seen:
            names = " -> ".join([c.id for c in chain] + [current])
            raise errors.ValidationFailed(f"context inheritance cycle: {names}", field="extends")
        seen.add(current)
        context = Context.objects.filter(pk=current).first()
        if context is None:
            raise errors.ValidationFailed(f"unknown context: {current}", field="context")
        chain.append(context)
        current = context.extends
    return chain


def context_resolve(context_id: str | None) -> dict[str, str]:
    """Variables with inheritance applied: a context's own variables override its parent's."""
    if not context_id:
        return {}
    resolved: dict[str, str] = {}
    for context in reversed(context_chain(context_id)):
        resolved.update(context.variables)
    return resolved


def _version(kind: str, definition_id: str, version: int, label: str) -> DefinitionVersion:
    found = DefinitionVersion.objects.filter(kind=kind, definition_id=definition_id, version=version).first()
    if found is None:
        raise errors.NotFound(f"{label} {definition_id} has no version {version}.")
    return found


def task_version(*, task_id: str, version: int) -> TaskDefinition:
    """That version of the task as it was saved (unsaved instance; kept after a delete too)."""
    found = _version("task", task_id, version, "Task")
    first = DefinitionVersion.objects.filter(kind="task", definition_id=task_id).order_by("version").first()
    created = first.created_at if first else found.created_at
    return TaskDefinition(id=task_id, version=version, created_at=created, updated_at=found.created_at,
                          **found.snapshot)  # fmt: skip


def dag_version(*, dag_id: str, version: int) -> Dag:
    found = _version("dag", dag_id, version, "DAG")
    first = DefinitionVersion.objects.filter(kind="dag", definition_id=dag_id).order_by("version").first()
    created = first.created_at if first else found.created_at
    return Dag(id=dag_id, version=version, created_at=created, updated_at=found.created_at, **found.snapshot)


def definition_versions(*, kind: str, definition_id: str) -> QuerySet[DefinitionVersion]:
    """Every saved version of a task or DAG, newest first (the console's version list)."""
    return DefinitionVersion.objects.filter(kind=kind, definition_id=definition_id).order_by("-version")
