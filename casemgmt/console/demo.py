"""Work for `make run`'s demo tenant, so its console has something to do from the first sign-in:
a case type, a published two-task workflow and three cases waiting at their first task. Made
through the services (audited like anything else)."""

from __future__ import annotations

from casemgmt.accounts.models import User
from casemgmt.cases.services import case_create, case_type_create
from casemgmt.workflows.services.workflows import workflow_create, workflow_publish

CASE_SCHEMA = {
    "type": "object",
    "required": ["title"],
    "properties": {
        "title": {"type": "string", "title": "Title"},
        "amount": {"type": "number", "title": "Amount claimed"},
        "policy": {"type": "string", "title": "Policy number"},
    },
}
REVIEW_FORM = {
    "type": "object",
    "required": ["approved", "assessed"],
    "properties": {
        "approved": {"type": "boolean", "title": "Documents complete"},
        "assessed": {"type": "integer", "minimum": 1, "title": "Assessed amount"},
        "channel": {"type": "string", "enum": ["mail", "phone", "visit"], "title": "Contact channel"},
        "note": {"type": "string", "maxLength": 500, "title": "Note"},
    },
}
STEPS = [
    {"id": "review", "name": "Review claim", "type": "task", "formSchema": REVIEW_FORM, "slaHours": 48},
    {
        "id": "decide",
        "name": "Decide",
        "type": "task",
        "formSchema": {"type": "object", "properties": {"reason": {"type": "string", "title": "Reason"}}},
        "outcomes": ["approve", "reject"],
        "slaHours": 24,
    },
]
CASES = [
    {"title": "Broken window", "amount": 450, "policy": "HOME-1042"},
    {"title": "Water damage in the kitchen", "amount": 3200, "policy": "HOME-2210"},
    {"title": "Stolen bicycle", "amount": 780, "policy": "CONT-0831"},
]


def demo_work_seed(*, admin: User) -> None:
    case_type = case_type_create(
        user=admin, key="insurance_claim", display_name="Insurance claim", schema=CASE_SCHEMA, prefix="CLM"
    )
    workflow = workflow_create(user=admin, case_type_key=case_type.key, name="Claim handling", steps=STEPS)
    workflow_publish(user=admin, workflow=workflow)
    for data in CASES:
        case_create(user=admin, case_type=case_type, data=data, display_name=str(data["title"]))
