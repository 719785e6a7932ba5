"""What the apps above cases do with a case: bind, start and halt its workflow (workflows), hear its
events (connectors: outbound webhooks), and what they read along with a case create.

Cases sits below workflows and connectors and cannot import them; they register here from their
`AppConfig.ready()`. Hooks run inside the case service's transaction, as direct calls would. With no
workflow binding registered a case write fails rather than leave a case without its steps.

A case create reads everything it needs in one SQL statement on PostgreSQL, before it takes its
number (under no lock; the number comes last, with the insert and the audit row): each app adds a
`CreateRead`, a scalar subquery over its own tables by their table names, and the same read on its
own for SQLite.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Protocol

from django.core.exceptions import ImproperlyConfigured

if TYPE_CHECKING:
    from uuid import UUID

    from django.db.models import QuerySet

    from casemgmt.cases.models import Case, CaseType


@dataclass(frozen=True)
class CreateRead:
    """One value read with a case create's number. `sql` is a scalar subquery that may use the
    parameters %(tenant)s, %(key)s (the case type's key) and %(workflow)s (the workflow version id
    asked for, or NULL); `decode` turns its column into what `read` (SQLite: the read alone)
    returns, and may raise to refuse the create."""

    name: str
    sql: str
    read: Callable[[UUID, CaseType, Any], Any]
    decode: Callable[[Any, Any], Any] = lambda value, workflow_version_id: value


class Listener(Protocol):
    """Hears `case:created`, `case:updated`, `case:closed` and `case:cancelled` after the change and
    its audit row. `reads` are the create's `CreateRead` values by name (None for other events)."""

    def __call__(self, *, case: Case, event: str, reads: Mapping[str, Any] | None) -> object: ...


@dataclass(frozen=True)
class WorkflowBinding:
    """The workflows app's side of a case: which published workflow a new case binds (`create_read`,
    `resolve`), starting and halting it, and the reads of its steps for the case lists and detail."""

    create_read: CreateRead
    resolve: Callable[..., Any]  # (tenant_id=, case_type=, workflow_version_id=) -> workflow or None
    start: Callable[..., object]  # (case=, actor=)
    halt: Callable[..., object]  # (case=, actor=)
    current_steps: Callable[[list[Any]], dict[Any, str]]  # case id -> name of its first active step
    # (step_id, name, type, status, activated_at, completed_at, iteration, fire_at, message,
    # child_case_id) of a case's steps, by position
    steps_of: Callable[[Case], list[tuple[Any, ...]]]
    assigned_case_ids: Callable[[Any, Any], QuerySet[Any, Any]]  # (tenant_id, user id) -> values("case_id")
    step_active: str  # the status of an active step, for the SQL over the steps table
    # case id -> {parentId, children: [{id, caseNumber, status}], history: [earlier step runs]}
    family_of: Callable[[Any], dict[str, Any]]


_bindings: list[WorkflowBinding] = []
CREATE_READS: list[CreateRead] = []
LISTENERS: list[Listener] = []


def workflow_binding_register(binding: WorkflowBinding) -> None:
    _bindings[:] = [binding]
    create_read_register(binding.create_read)


def workflows() -> WorkflowBinding:
    if not _bindings:
        raise ImproperlyConfigured("No workflow binding is registered: is casemgmt.workflows installed?")
    return _bindings[0]


def create_read_register(read: CreateRead) -> None:
    CREATE_READS[:] = [r for r in CREATE_READS if r.name != read.name] + [read]


def listener_register(listener: Listener) -> None:
    if listener not in LISTENERS:
        LISTENERS.append(listener)


def case_event(*, case: Case, event: str, reads: Mapping[str, Any] | None = None) -> None:
    for listener in LISTENERS:
        listener(case=case, event=event, reads=reads)
