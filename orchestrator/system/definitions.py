"""Definitions as code: a folder of YAML documents (tasks, DAGs, schedules, pools, contexts)
planned against the stored definitions, applied in one transaction, and exported back.

Each document is `kind`, `id` and the body of that kind's API PUT. It is read by the same input
serializer as the API and written by the same service, so a file is valid exactly when the API
would take it. A plan compares each document, normalised as the service would store it, with what
is stored: only real changes are applied, so a re-sync of an unchanged folder makes no version and
no audit row. A sync applies the whole plan or nothing (one transaction); it holds an advisory lock
while it applies, and the state its plan was made from must still be the stored one (a
fingerprint), so of two concurrent syncs one wins and the other reports a conflict.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable, Iterable
from dataclasses import asdict, dataclass, field
from typing import Any

from django.conf import settings
from django.db import models, transaction

from orchestrator.audit.services import SYSTEM_ACTOR, record
from orchestrator.definitions import services as definitions
from orchestrator.definitions.apis import ContextDetailApi, DagDetailApi, TaskDetailApi
from orchestrator.definitions.models import Context, Dag, Pool, TaskDefinition
from orchestrator.definitions.validation import check_id
from orchestrator.runs.apis import PoolDetailApi
from orchestrator.schedules import services as schedules
from orchestrator.schedules.apis import ScheduleDetailApi
from orchestrator.schedules.models import Schedule
from shared.api import errors
from shared.api.time import iso
from shared.definitions.files import Document, located, validated_items
from shared.definitions.plan import Change, field_diff, plan_body
from shared.locks import try_lock_name

LOCK = "orchestrator:definitions-sync"


@dataclass(frozen=True)
class Kind:
    name: str
    serializer: Callable[..., Any]  # the API's input serializer class
    rows: Callable[[], Iterable[Any]]  # every stored object
    stored: Callable[[Any], dict[str, Any]]  # an object's fields as a document holds them
    desired: Callable[[str, Any], dict[str, Any]]  # validated input, normalised like `stored`
    put: Callable[[str, Any, str, bool], None]  # (id, validated input, actor, exists)
    delete: Callable[[str, str], None] | None = None  # None: never pruned
    defaults: dict[str, Any] = field(default_factory=dict)  # left out of an export
    validate: Callable[[Any], Any] = lambda serializer: serializer.validated_data


# --- how each kind is read, compared and written ---------------------------------------------


def _task_stored(task: TaskDefinition) -> dict[str, Any]:
    return {
        "name": task.name, "description": task.description, "command": task.command,
        "dependencies": task.dependencies, "parameters": task.parameters, "allowed_env": task.allowed_env,
        "queue": task.queue, "pool": task.pool,
    }  # fmt: skip


def _task_desired(task_id: str, data: dict[str, Any]) -> dict[str, Any]:
    # As task_definition_put stores it: an empty name is the id, an empty queue the default one.
    return {
        **_task_stored(TaskDefinition(**data)),
        "name": data["name"] or task_id,
        "queue": data["queue"] or settings.DEFAULT_TASK_QUEUE,
        "pool": data["pool"] or None,
    }


def _dag_stored(dag: Dag) -> dict[str, Any]:
    return {
        "name": dag.name, "description": dag.description, "tasks": dag.tasks, "context": dag.context,
        "tags": dag.tags, "max_active_runs": dag.max_active_runs,
    }  # fmt: skip


def _dag_desired(dag_id: str, data: dict[str, Any]) -> dict[str, Any]:
    return {**_dag_stored(Dag(**data)), "name": data.get("name") or dag_id}


def _context_stored(context: Context) -> dict[str, Any]:
    return {"variables": context.variables, "extends": context.extends}


SCHEDULE_FIELDS = [f for f in asdict(schedules.ScheduleSpec())]


def _schedule_stored(schedule: Schedule | schedules.ScheduleSpec) -> dict[str, Any]:
    values = {name: getattr(schedule, name) for name in SCHEDULE_FIELDS}
    values.update(start_date=iso(values["start_date"]), end_date=iso(values["end_date"]))
    return values


def _pool_put(name: str, data: dict[str, Any], actor: str, _exists: bool) -> None:
    definitions.pool_put(name=name, actor=actor, **data)


def _context_put(context_id: str, data: dict[str, Any], actor: str, _exists: bool) -> None:
    definitions.context_put(context_id=context_id, actor=actor, **data)


def _task_put(task_id: str, data: dict[str, Any], actor: str, _exists: bool) -> None:
    definitions.task_definition_put(task_id=task_id, actor=actor, **data)


def _dag_put(dag_id: str, data: dict[str, Any], actor: str, _exists: bool) -> None:
    definitions.dag_put(dag_id=dag_id, actor=actor, **data)


def _schedule_put(schedule_id: str, spec: schedules.ScheduleSpec, actor: str, exists: bool) -> None:
    if exists:
        schedules.schedule_update(schedule_id=schedule_id, spec=spec, actor=actor)
    else:
        schedules.schedule_create(schedule_id=schedule_id, spec=spec, actor=actor)


KINDS = [  # in the order a sync writes them: each kind may name the ones before it
    Kind(
        name="pool", serializer=PoolDetailApi.InputSerializer, rows=lambda: Pool.objects.order_by("name"),
        stored=lambda pool: {"slots": pool.slots}, desired=lambda _id, data: {"slots": data["slots"]},
        put=_pool_put,
    ),
    Kind(
        name="context", serializer=ContextDetailApi.InputSerializer, rows=lambda: Context.objects.order_by("id"),
        stored=_context_stored, desired=lambda _id, data: _context_stored(Context(**data)),
        put=_context_put,
        defaults={"variables": {}, "extends": None},
    ),
    Kind(
        name="task", serializer=TaskDetailApi.InputSerializer,
        rows=lambda: TaskDefinition.objects.order_by("id"), stored=_task_stored, desired=_task_desired,
        put=_task_put,
        delete=lambda pk, actor: definitions.task_definition_delete(task_id=pk, actor=actor),
        defaults={"description": "", "dependencies": [], "parameters": {}, "allowed_env": None, "pool": None},
    ),
    Kind(
        name="dag", serializer=DagDetailApi.InputSerializer, rows=lambda: Dag.objects.order_by("id"),
        stored=_dag_stored, desired=_dag_desired,
        put=_dag_put,
        delete=lambda pk, actor: definitions.dag_delete(dag_id=pk, actor=actor),
        defaults={"description": "", "context": None, "tags": [], "max_active_runs": None},
    ),
    Kind(
        name="schedule", serializer=ScheduleDetailApi.InputSerializer,
        rows=lambda: Schedule.objects.order_by("id"), stored=_schedule_stored,
        desired=lambda _id, spec: _schedule_stored(spec), put=_schedule_put,
        delete=lambda pk, actor: schedules.schedule_delete(schedule_id=pk, actor=actor),
        validate=lambda serializer: serializer.spec(),
        defaults={
            "dag_id": None, "task_id": None, "cron": None, "interval_seconds": None, "timezone": "UTC",
            "parameters": {}, "context": None, "start_date": None, "end_date": None, "catchup": "latest",
            "max_catchup": 10, "paused": False, "priority": 0,
        },
    ),
]  # fmt: skip
BY_NAME = {kind.name: kind for kind in KINDS}


def _pk(obj: models.Model) -> str:
    return str(obj.pk)


# --- plan ------------------------------------------------------------------------------------


@dataclass
class Item:
    """One document, validated: what the plan applies for it."""

    kind: Kind
    id: str
    document: Document
    data: Any  # the service's input
    desired: dict[str, Any]


@dataclass
class Plan:
    changes: list[Change]
    items: dict[tuple[str, str], Item]
    fingerprint: str  # of the stored state the plan was made from

    def body(self, *, applied: bool) -> dict[str, Any]:
        return plan_body(self.changes, applied=applied)


def _item(document: Document) -> Item:
    kind = BY_NAME.get(document.kind)
    if kind is None:
        raise errors.ValidationFailed(f"kind must be one of {', '.join(BY_NAME)}", field="kind")
    body = {k: v for k, v in document.body.items() if k not in ("kind", "id")}
    object_id = document.body.get("id")
    if not isinstance(object_id, str):
        raise errors.ValidationFailed("id is required: a string", field="id")
    check_id(object_id, "id")
    serializer = kind.serializer(data=body)
    serializer.is_valid(raise_exception=True)
    data = kind.validate(serializer)
    return Item(kind, object_id, document, data, kind.desired(object_id, data))


def _items(documents: list[Document]) -> dict[tuple[str, str], Item]:
    """Every document validated, every problem of every file in one error."""
    return validated_items(documents, _item, kind_of=lambda item: item.kind.name, id_field_of=lambda _: "id")


def stored_state() -> dict[str, dict[str, dict[str, Any]]]:
    """Every stored definition of every kind, as documents hold them: {kind: {id: fields}}."""
    return {kind.name: {_pk(obj): kind.stored(obj) for obj in kind.rows()} for kind in KINDS}


def _fingerprint(state: dict[str, Any]) -> str:
    return hashlib.sha256(json.dumps(state, sort_keys=True, default=str).encode()).hexdigest()


def sync_plan(documents: list[Document], *, prune: bool = False) -> Plan:
    """What a sync of these documents would do (validated like the API; nothing written)."""
    items = _items(documents)
    state = stored_state()
    changes = []
    for (kind_name, object_id), item in items.items():
        before = state[kind_name].get(object_id)
        if before is None:
            changes.append(
                Change(kind_name, object_id, "create", item.document.where, field_diff(None, item.desired))
            )
        elif before == item.desired:
            changes.append(Change(kind_name, object_id, "unchanged", item.document.where))
        else:
            changes.append(
                Change(kind_name, object_id, "update", item.document.where, field_diff(before, item.desired))
            )
    if prune:
        for kind in KINDS:
            if kind.delete is not None:
                changes += [
                    Change(kind.name, pk, "delete") for pk in state[kind.name] if (kind.name, pk) not in items
                ]
    order = {kind.name: n for n, kind in enumerate(KINDS)}
    changes.sort(key=lambda c: (order[c.kind], c.id))
    return Plan(changes, items, _fingerprint(state))


# --- apply -----------------------------------------------------------------------------------


def _ordered(changes: list[Change], items: dict[tuple[str, str], Item]) -> list[Change]:
    """Writes in kind order, and within a kind a context after the one it extends and a task after
    the tasks it depends on (when those are in the plan too)."""
    writes = [c for c in changes if c.action in ("create", "update")]
    done: set[tuple[str, str]] = set()
    ordered: list[Change] = []

    def visit(change: Change, path: tuple[tuple[str, str], ...]) -> None:
        key = (change.kind, change.id)
        if key in done or key in path:  # a cycle is left to the service to report
            return
        for upstream in _upstream(items[key]):
            found = next((c for c in writes if (c.kind, c.id) == (change.kind, upstream)), None)
            if found is not None:
                visit(found, (*path, key))
        done.add(key)
        ordered.append(change)

    for change in writes:
        visit(change, ())
    return ordered


def _upstream(item: Item) -> list[str]:
    if item.kind.name == "task":
        return list(item.desired["dependencies"])
    if item.kind.name == "context" and item.desired["extends"]:
        return [item.desired["extends"]]
    return []


def _deletions(changes: list[Change]) -> list[Change]:
    """Schedules, then DAGs, then tasks, a task before the tasks it depends on."""
    deletes = [c for c in changes if c.action == "delete"]
    order = {kind.name: -n for n, kind in enumerate(KINDS)}
    tasks = {c.id for c in deletes if c.kind == "task"}
    deps = dict(TaskDefinition.objects.filter(pk__in=tasks).values_list("id", "dependencies"))
    depth: dict[str, int] = {}

    def downstream_depth(task_id: str) -> int:
        # How many pruned tasks depend on it, transitively: the deepest are deleted last.
        if task_id not in depth:
            depth[task_id] = 0  # stored dependencies have no cycle; this only guards the walk
            users = [u for u, d in deps.items() if task_id in d]
            depth[task_id] = max([downstream_depth(u) + 1 for u in users] or [0])
        return depth[task_id]

    return sorted(deletes, key=lambda c: (order[c.kind], downstream_depth(c.id) if c.kind == "task" else 0))


def _write(plan: Plan, actor: str) -> None:
    for change in _ordered(plan.changes, plan.items):
        item = plan.items[(change.kind, change.id)]
        try:
            item.kind.put(item.id, item.data, actor, change.action == "update")
        except errors.ApplicationError as exc:
            raise located(exc, item.document.where) from None
    for change in _deletions(plan.changes):
        kind = BY_NAME[change.kind]
        assert kind.delete is not None  # noqa: S101 - only kinds with a delete are pruned
        try:
            kind.delete(change.id, actor)
        except errors.ApplicationError as exc:
            raise located(exc, f"--prune {change.kind} {change.id}") from None


def _lock_or_conflict() -> None:
    """The sync lock, held until the transaction ends; taken by another sync: a 409 now rather
    than a wait (that sync's plan would make ours stale anyway)."""
    if not try_lock_name(LOCK):
        raise errors.VersionConflict("Another definitions sync is being applied; plan again when it is done.")


class _DryRun(Exception):
    pass


def sync_apply(
    plan: Plan, *, actor: str = SYSTEM_ACTOR, source: str = "", dry_run: bool = False
) -> dict[str, Any]:
    """Applies the plan in one transaction, or (dry run) applies it and rolls it back, so that
    references between documents and to stored definitions are checked by the services exactly as
    a real sync would. A real sync refuses (409 version_conflict) when another sync is being applied
    or the definitions changed since the plan was made. Audited: the services' events for each
    change, and one `definitions.synced` naming the source and each change's file."""
    try:
        with transaction.atomic():
            if not dry_run:
                _lock_or_conflict()
                if _fingerprint(stored_state()) != plan.fingerprint:
                    raise errors.VersionConflict(
                        "The definitions changed since this plan was made; plan again."
                    )
            _write(plan, actor)
            changed = [c for c in plan.changes if c.action != "unchanged"]
            if changed and not dry_run:
                record(
                    actor=actor, action="definitions.synced", resource="definitions",
                    changes={"source": source, "changes": [
                        {"kind": c.kind, "id": c.id, "action": c.action, "file": c.file} for c in changed
                    ]},
                )  # fmt: skip
            if dry_run:
                raise _DryRun
    except _DryRun:
        pass
    return plan.body(applied=not dry_run)


# --- export ----------------------------------------------------------------------------------


def export_documents() -> dict[str, list[dict[str, Any]]]:
    """Every stored definition as a document, grouped by kind (a file per kind), fields at their
    default left out, so that a sync of the export changes nothing."""
    exported: dict[str, list[dict[str, Any]]] = {}
    state = stored_state()
    for kind in KINDS:
        documents = []
        for object_id, fields in state[kind.name].items():
            document: dict[str, Any] = {"kind": kind.name, "id": object_id}
            for name, value in fields.items():
                if kind.defaults.get(name, ...) == value or (name == "name" and value == object_id):
                    continue
                document[name] = _compact(kind.name, name, value)
            documents.append(document)
        exported[kind.name] = documents
    return exported


def _compact(kind: str, name: str, value: Any) -> Any:
    # A DAG's task without parameters is written as its id, as people write it.
    if kind == "dag" and name == "tasks":
        return [t["id"] if not t.get("parameters") else t for t in value]
    return value
