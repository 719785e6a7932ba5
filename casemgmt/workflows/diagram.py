"""A workflow definition drawn as its steps (the admin's read-only diagram of a version), laid out
by the shared graph layout the case console draws a case's workflow with."""

from __future__ import annotations

from typing import Any

from django.utils.translation import gettext as _

from casemgmt.workflows.definitions import steps_of
from shared.web.graph import Layout, Node, layout


def definition_graph(definition: dict[str, Any] | None) -> Layout | None:
    """Each step a node after the steps it depends on (default: the one before); None without
    steps. A task with rework routes is marked ↺, as on the case console."""
    steps = steps_of(definition or {})
    if not steps:
        return None
    nodes = []
    for step in steps:
        kind = str(step.get("type") or "")
        depends = step.get("dependsOn")
        nodes.append(
            Node(
                id=str(step.get("id")),
                label=str(step.get("name") or step.get("id")),
                status="pending",
                status_label=_("step %(id)s") % {"id": step.get("id")},
                kind=f"{kind} ↺" if kind == "task" and step.get("routes") else kind,
                upstream=[str(d) for d in depends] if isinstance(depends, list) else [],
            )
        )
    return layout(nodes)
