"""Work for `make run`'s demo tenant, so its console has something to do from the first sign-in:
the case types and published workflow of examples/casemgmt/claim.yaml (a rework loop, a site
inspection as a sub-case for large claims, an objection-period timer) and three cases waiting at
their first task. Made through the services (audited like anything else)."""

from __future__ import annotations

from pathlib import Path

from casemgmt.accounts.models import User
from casemgmt.cases.models import CaseType
from casemgmt.cases.services import case_create
from casemgmt.ops.definitions import sync_apply, sync_plan
from casemgmt.tenancy.models import Tenant
from shared.definitions.files import read_documents

# The repository's examples/ folder (make run runs from a checkout).
CLAIM_EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "casemgmt" / "claim.yaml"

CASES = [
    {"title": "Broken window", "amount": 450, "policy": "HOME-1042"},
    {"title": "Water damage in the kitchen", "amount": 3200, "policy": "HOME-2210"},
    {"title": "Stolen bicycle", "amount": 780, "policy": "CONT-0831"},
]


def demo_work_seed(*, admin: User) -> None:
    # Through the definitions sync, as a user would apply the example folder (published).
    tenant = Tenant.objects.get(pk=admin.member_tenant_id)
    sync_apply(sync_plan(tenant, read_documents(CLAIM_EXAMPLE), publish=True), as_email=admin.email)
    case_type = CaseType.objects.get(tenant=tenant, key="insurance_claim")
    for data in CASES:
        case_create(user=admin, case_type=case_type, data=data, display_name=str(data["title"]))
