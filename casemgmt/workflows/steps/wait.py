"""`wait` steps: wait for a message (`message`, a name). `POST /cases/{id}/messages/{name}`, or an
inbound webhook configured with that message, completes the active wait step of that name with the
message's data as its result."""

from __future__ import annotations

import re
from typing import TYPE_CHECKING, Any

from casemgmt.workflows.steps import register

if TYPE_CHECKING:
    from casemgmt.cases.models import Case
    from casemgmt.workflows.models import CaseStep

# The name is a URL path segment (`/messages/{name}`).
MESSAGE_RE = re.compile(r"^[A-Za-z][A-Za-z0-9_.-]{0,99}$")


class WaitStep:
    type = "wait"

    def check(self, step: dict[str, Any], *, field: str, tenant_id: Any) -> list[dict[str, str]]:
        message = step.get("message")
        if not isinstance(message, str) or not MESSAGE_RE.match(message):
            return [
                {
                    "field": f"{field}.message",
                    "error": "must be a letter followed by up to 99 of A-Z a-z 0-9 _ . -",
                }
            ]
        return []

    def activate(self, *, row: CaseStep, step: dict[str, Any], case: Case, actor: str) -> None:
        row.message = step["message"]
        row.save(update_fields=["message"])


register(WaitStep())
