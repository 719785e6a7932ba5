"""Case types and cases made through the real services."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

from casemgmt.cases.models import Case, CaseType
from casemgmt.cases.services import case_create, case_type_create

CLAIM_SCHEMA: dict[str, Any] = {
    "type": "object",
    "required": ["applicant", "amount"],
    "properties": {
        "applicant": {
            "type": "object",
            "required": ["name"],
            "properties": {"name": {"type": "string", "minLength": 1}, "email": {"type": "string"}},
        },
        "amount": {"type": "number", "minimum": 0},
        "description": {"type": "string"},
        "tags": {"type": "array", "items": {"type": "string"}},
    },
}

VALID_DATA: dict[str, Any] = {
    "applicant": {"name": "Ada Lovelace"},
    "amount": 120,
    "description": "hail damage",
}


@pytest.fixture
def case_type(admin_user) -> CaseType:
    return case_type_create(
        user=admin_user,
        key="insurance_claim",
        display_name="Insurance claim",
        schema=CLAIM_SCHEMA,
        sla_hours=48,
    )


@pytest.fixture
def permit_type(admin_user) -> CaseType:
    """A case type with an open schema and the key `permit`, for workflows bound by that key."""
    return case_type_create(user=admin_user, key="permit", display_name="Permit", schema={"type": "object"})


@pytest.fixture
def make_case(admin_user, case_type) -> Callable[..., Case]:
    def make(
        *, user: Any = None, data: dict[str, Any] | None = None, of_type: CaseType | None = None
    ) -> Case:
        return case_create(
            user=user or admin_user, case_type=of_type or case_type, data=data or dict(VALID_DATA)
        )

    return make


@pytest.fixture
def reader(tenant, make_user):
    return make_user(tenant, permissions=["cases:read"])


@pytest.fixture
def outsider(other_tenant, make_user):
    """An all-powerful user of another tenant: must see 404 for this tenant's resources."""
    return make_user(other_tenant, permissions=["*"])
