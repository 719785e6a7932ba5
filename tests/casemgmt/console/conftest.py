"""A tenant with one case waiting at a human task, made through the API as a designer would."""

from __future__ import annotations

from typing import Any

import pytest
from django.test import Client

from tests.casemgmt.conftest import PASSWORD
from tests.casemgmt.workflows.conftest import Flow

FORM = {
    "type": "object",
    "required": ["approved", "amount"],
    "properties": {
        "approved": {"type": "boolean", "title": "Approved"},
        "amount": {"type": "integer", "minimum": 1, "title": "Amount"},
        "channel": {"type": "string", "enum": ["mail", "phone"]},
        "note": {"type": "string", "maxLength": 20},
    },
}


@pytest.fixture
def waiting_case(api, admin_user) -> dict[str, Any]:
    flow = Flow(api, admin_user)
    flow.workflow([{"id": "review", "name": "Review claim", "type": "task", "formSchema": FORM}])
    return flow.case({"amount": 10, "title": "Broken window"})


def signed_in(user) -> Client:
    client = Client()
    response = client.post("/console/login", {"email": user.email, "password": PASSWORD})
    assert response.status_code == 302, response.content
    return client
