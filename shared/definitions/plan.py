"""The plan of a definitions sync: what it creates, updates (with a field diff), leaves unchanged
and deletes (with prune). The same JSON body leaves the API's plan route and the management
command's `--json`, and `render` prints it for people (the command and `caseflow ... diff`)."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

ACTIONS = ("create", "update", "delete", "unchanged")


@dataclass
class Change:
    kind: str
    id: str
    action: str  # one of ACTIONS
    file: str | None = None  # where the document came from (None for a delete)
    diff: dict[str, dict[str, Any]] = field(default_factory=dict)  # field -> {before, after}

    def body(self) -> dict[str, Any]:
        return {"kind": self.kind, "id": self.id, "action": self.action, "file": self.file, "diff": self.diff}


def field_diff(before: dict[str, Any] | None, after: dict[str, Any]) -> dict[str, dict[str, Any]]:
    """The fields whose values differ (all of `after`'s for a create)."""
    before = before or {}
    return {
        name: {"before": before.get(name), "after": value}
        for name, value in after.items()
        if name not in before or before[name] != value
    }


def plan_body(changes: list[Change], *, applied: bool) -> dict[str, Any]:
    counts = {action: sum(1 for c in changes if c.action == action) for action in ACTIONS}
    return {"applied": applied, "summary": counts, "changes": [c.body() for c in changes]}


def has_changes(body: dict[str, Any]) -> bool:
    return any(body["summary"][a] for a in ("create", "update", "delete"))


def _value(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, sort_keys=True)


def render(body: dict[str, Any], *, verbose: bool = False) -> str:
    """One line per change (unchanged ones only when `verbose`), update diffs indented, then the
    counts."""
    lines = []
    for change in body["changes"]:
        if change["action"] == "unchanged" and not verbose:
            continue
        where = f"  ({change['file']})" if change.get("file") else ""
        lines.append(f"{change['action']:<9} {change['kind']} {change['id']}{where}")
        if change["action"] == "update":
            for name, values in change["diff"].items():
                lines.append(f"    {name}: {_value(values['before'])} -> {_value(values['after'])}")
    counts = body["summary"]
    verb = "Applied" if body.get("applied") else "Plan"
    lines.append(
        f"{verb}: {counts['create']} to create, {counts['update']} to update, "
        f"{counts['delete']} to delete, {counts['unchanged']} unchanged."
    )
    return "\n".join(lines)
