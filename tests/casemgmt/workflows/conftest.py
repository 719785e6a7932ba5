"""Helpers for workflow tests: everything is set up through the HTTP API, as a client would."""

from __future__ import annotations

import uuid
from typing import Any

import pytest

from casemgmt.audit.models import AuditEvent

FORM = {
    "type": "object",
    "required": ["approved"],
    "properties": {"approved": {"type": "boolean"}, "note": {"type": "string", "maxLength": 20}},
}
CASE_SCHEMA = {
    "type": "object",
    "properties": {"amount": {"type": "number"}, "title": {"type": "string"}, "kind": {"type": "string"}},
}


def ok(response, status: int = 200) -> Any:
    assert response.status_code == status, response.content
    return response.json()


class Flow:
    """Drives the case service's API as a tenant's designer/admin."""

    def __init__(self, api, admin) -> None:
        self.api = api
        self.admin = admin
        self.client = api(admin)
        self.key = f"claim_{uuid.uuid4().hex[:6]}"
        ok(
            self.client.post(
                "/case-types",
                {"key": self.key, "displayName": "Claim", "schema": CASE_SCHEMA},
                format="json",
            ),
            201,
        )

    def workflow(self, steps: list[dict[str, Any]], **extra: Any) -> dict[str, Any]:
        body = {"caseTypeKey": self.key, "name": "Flow", "steps": steps, **extra}
        draft = ok(self.client.post("/workflows", body, format="json"), 201)
        return ok(self.client.post(f"/workflows/{draft['id']}/publish"))

    def case(self, data: dict[str, Any] | None = None) -> dict[str, Any]:
        body = {"case_type_key": self.key, "case_data": data or {"amount": 10}}
        return ok(self.client.post("/cases", body, format="json"), 201)

    def steps(self, case_id: str) -> dict[str, dict[str, Any]]:
        detail = ok(self.client.get(f"/cases/{case_id}"))
        return {step["id"]: step for step in detail["workflow"]["steps"]}

    def statuses(self, case_id: str) -> dict[str, str]:
        return {step_id: step["status"] for step_id, step in self.steps(case_id).items()}


@pytest.fixture
def flow(api, admin_user) -> Flow:
    return Flow(api, admin_user)


def task_step(step_id: str, **extra: Any) -> dict[str, Any]:
    return {"id": step_id, "name": step_id.title(), "type": "task", "formSchema": FORM, **extra}


def audit_actions(tenant_id: Any, resource_prefix: str = "") -> list[str]:
    events = AuditEvent.objects.filter(tenant_id=tenant_id, resource__startswith=resource_prefix).order_by(
        "sequence"
    )
    return list(events.values_list("action", flat=True))
