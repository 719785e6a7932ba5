"""Work for `make run`'s demo tenant, so its console has something to do from the first sign-in:
the case types and published workflow of examples/casemgmt/claim.yaml (a rework loop, a site
inspection as a sub-case for large claims, an objection-period timer) and three cases waiting at
their first task. Made through the services (audited like anything else)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from casemgmt.accounts.models import User
from casemgmt.cases.services import case_create, case_type_create
from casemgmt.workflows.services.workflows import workflow_create, workflow_publish
from shared.definitions.files import read_documents

# The repository's examples/ folder (make run runs from a checkout).
CLAIM_EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "casemgmt" / "claim.yaml"

CASES = [
    {"title": "Broken window", "amount": 450, "policy": "HOME-1042"},
    {"title": "Water damage in the kitchen", "amount": 3200, "policy": "HOME-2210"},
    {"title": "Stolen bicycle", "amount": 780, "policy": "CONT-0831"},
]


def _examples(kind: str) -> list[dict[str, Any]]:
    return [d.body for d in read_documents(CLAIM_EXAMPLE) if d.kind == kind]


def demo_work_seed(*, admin: User) -> None:
    # The claim first (its cases are the demo's), then the types its steps use (the inspection).
    case_types = [
        case_type_create(
            user=admin, key=spec["key"], display_name=spec["displayName"], schema=spec["schema"],
            prefix=spec.get("prefix"),
        )
        for spec in _examples("case_type")
    ]  # fmt: skip
    case_type = case_types[0]
    flow = _examples("workflow")[0]
    workflow = workflow_create(
        user=admin, case_type_key=case_type.key, name=flow["name"], steps=flow["steps"]
    )
    workflow_publish(user=admin, workflow=workflow)
    for data in CASES:
        case_create(user=admin, case_type=case_type, data=data, display_name=str(data["title"]))
