"""The spread create phase's principals: 4 tenants, each with an Admin and 2 case types.

bench/case_floor.sh runs it with the server's environment (production settings, its database) and
gives wrk the lines it prints: one `<token> <case type id>` per case type, 8 in all. The case types
carry the case-floor harness's schema, so a spread create validates and stores what the harness's
create does; only the tenant and the case type (its counter row, its tenant's audit chain) differ
from one request to the next.

    .venv/bin/python bench/case_spread_setup.py > pairs     # DJANGO_SETTINGS_MODULE etc. set

Idempotent: tenants and case types that exist are reused (an existing key is not registered
again, which would add a version), and each run logs the Admins in afresh (a token lives an hour).
Everything goes through the services the API and `create_tenant` use.
"""

from __future__ import annotations

import sys
from pathlib import Path

from benchlib import CLAIM_SCHEMA

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

TENANTS = 4
KEYS = ("claim", "permit")
PASSWORD = "Spread-passw0rd-not-secret!"
# The harness's case type schema (its run.sh registers it through POST /case-types).
SCHEMA = CLAIM_SCHEMA


def main() -> None:
    import django

    django.setup()
    from casemgmt.accounts.models import User
    from casemgmt.accounts.services import auth_login
    from casemgmt.accounts.tenants import tenant_create
    from casemgmt.cases.models import CaseType
    from casemgmt.cases.services import case_type_create
    from casemgmt.tenancy.models import Tenant

    lines: dict[str, list[str]] = {key: [] for key in KEYS}
    for n in range(1, TENANTS + 1):
        email = f"spread{n}@floor.test"
        if not Tenant.objects.filter(name=f"Spread {n}").exists():
            tenant_create(name=f"Spread {n}", admin_email=email, admin_password=PASSWORD)
        admin = User.objects.get(email=email)
        issued, _ = auth_login(email=email, password=PASSWORD)
        for key in KEYS:
            versions = CaseType.objects.filter(tenant_id=admin.tenant_id, key=key).order_by("-version")
            case_type = versions.first() or case_type_create(
                user=admin, key=key, display_name=key.title(), schema=SCHEMA
            )
            lines[key].append(f"{issued.token} {case_type.id}")
    # Key by key, so that consecutive lines (wrk's consecutive requests) are of different tenants.
    for key in KEYS:
        print("\n".join(lines[key]))


if __name__ == "__main__":
    main()
