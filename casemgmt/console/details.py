"""What the case and task pages show besides the forms: case data labelled with the schema's
titles, each step with its result, the workflow drawn as a graph, and audit actors by name."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from django.urls import reverse
from django.utils import timezone
from django.utils.translation import gettext as _

from casemgmt.accounts.selectors import display_names
from casemgmt.cases.schema_words import label_of, ordered_properties
from casemgmt.workflows.definitions import steps_of
from shared.web.graph import Layout, Node, layout
from shared.web.templatetags.design import status_label

if TYPE_CHECKING:
    from casemgmt.cases.models import Case
    from casemgmt.workflows.models import CaseStep


@dataclass
class Item:
    """One labelled value; a nested object has `children` instead of a `value`."""

    label: str
    value: Any = None
    children: list[Item] = field(default_factory=list)


def _shown(value: Any) -> Any:
    if isinstance(value, bool):
        return _("Yes") if value else _("No")
    if isinstance(value, list):
        return ", ".join(str(_shown(v)) for v in value)
    return "—" if value is None or value == "" else value


def labelled(schema: Any, data: Any) -> list[Item]:
    """`data`'s properties in the form's order, then any the schema does not name, each labelled
    with its `title` (else its name made readable); nested objects become groups."""
    if not isinstance(data, dict):
        return []
    properties = dict(ordered_properties(schema))
    names = [n for n in properties if n in data] + sorted(n for n in data if n not in properties)
    items = []
    for name in names:
        sub, value = properties.get(name), data[name]
        if isinstance(value, dict):
            items.append(Item(label_of(name, sub), children=labelled(sub or {}, value)))
        else:
            items.append(Item(label_of(name, sub), _shown(value)))
    return items


@dataclass
class StepView:
    row: CaseStep
    status_label: str
    result: list[Item]
    completed_by: str = ""


def step_views(case: Case, steps: list[CaseStep]) -> list[StepView]:
    """Each step with its result labelled by its form's titles (a task) or as stored (others)."""
    definitions = (
        {s["id"]: s for s in steps_of(case.workflow_version.definition)} if case.workflow_version else {}
    )
    names = display_names(
        tenant_id=case.tenant_id, ids=[s.completed_by_id for s in steps if s.completed_by_id]
    )
    return [
        StepView(
            row=s,
            status_label=status_label(s.status),
            result=labelled((definitions.get(s.step_id) or {}).get("formSchema") or {}, s.result or {})
            if isinstance(s.result, dict)
            else ([Item(_("Result"), _shown(s.result))] if s.result is not None else []),
            completed_by=names.get(str(s.completed_by_id), "") if s.completed_by_id else "",
        )
        for s in steps
    ]


def step_kind(step: dict[str, Any], row: CaseStep | None) -> str:
    """What the diagram writes under a step's name: its type, and for the workflow control types
    what it waits for (a timer's time, a wait's message, a sub-case's child), a task's rework loop
    (↺ and its round) — so loops, timers, waits and child cases show in the drawing."""
    base = str(step.get("type") or "")
    kind = f"{base} ↺" if base == "task" and step.get("routes") else base
    if row is None:
        return kind
    if base == "timer" and row.fire_at and row.status == "active":
        kind = f"{kind} {timezone.localtime(row.fire_at):%H:%M}"
    elif base == "wait" and row.message:
        kind = f"{kind}: {row.message}"
    elif base == "case" and row.child_case_id and row.child_case:
        kind = f"{kind} {row.child_case.case_number}"
    if row.iteration > 1:
        kind = f"{kind} · {_('round %(round)s') % {'round': row.iteration}}"
    return kind


def workflow_graph(case: Case, steps: list[CaseStep]) -> Layout | None:
    """The case's workflow as a left-to-right graph, each step in its state; None without one."""
    if case.workflow_version is None:
        return None
    rows = {s.step_id: s for s in steps}
    nodes = []
    previous: str | None = None
    for step in steps_of(case.workflow_version.definition):
        row = rows.get(step["id"])
        status = row.status if row else "pending"
        depends = step.get("dependsOn")
        upstream = (
            [str(d) for d in depends] if isinstance(depends, list) else ([previous] if previous else [])
        )
        href = ""
        if row is not None and row.is_task and status in ("active", "completed"):
            href = reverse("console:task", args=[case.id, step["id"]])
        nodes.append(
            Node(
                id=str(step["id"]),
                label=str(step.get("name") or step["id"]),
                status=status,
                status_label=status_label(status),
                kind=step_kind(step, row),
                href=href,
                upstream=upstream,
            )
        )
        previous = str(step["id"])
    return layout(nodes)


def ready_to_close(case: Case, steps: list[CaseStep]) -> bool:
    """An active case whose workflow has nothing left to do: every step finished (completed or
    skipped). It waits for a person to close it with an outcome (unless its workflow closes it
    on its own with `autoClose`)."""
    return (
        case.status == "active"
        and case.workflow_version is not None
        and bool(steps)
        and all(s.status in ("completed", "skipped") for s in steps)
    )


@dataclass
class EventView:
    sequence: int
    timestamp: Any
    actor: str
    action: str


def event_views(tenant_id: Any, events: list[Any]) -> list[EventView]:
    """Audit events with the actor named (display name or email); actors that are not people of
    the tenant (the system, a connector) keep their identifier."""
    names = display_names(tenant_id=tenant_id, ids=[e.actor for e in events])
    return [
        EventView(e.sequence, e.timestamp, names.get(str(e.actor), str(e.actor)), e.action) for e in events
    ]
