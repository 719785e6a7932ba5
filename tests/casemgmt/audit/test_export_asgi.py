"""Exports served by daphne (ASGI) take the asynchronous keyset-paged path: complete, in chain order."""

import csv
import io

import httpx
import pytest
from django.db import transaction

from casemgmt.accounts.tokens import issue_for
from casemgmt.audit import exports
from casemgmt.audit.models import AuditEvent
from casemgmt.audit.services import record

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.worker]


def test_audit_export_over_asgi_spans_several_pages(asgi_server, tenant, admin_user):
    with transaction.atomic():
        for n in range(exports.CHUNK + 20):
            record(tenant_id=tenant.id, actor="bench", action="connector:tested", resource=f"connectors/{n}")
    expected = list(
        AuditEvent.objects.filter(chain=str(tenant.id)).order_by("sequence").values_list("id", flat=True)
    )
    headers = {"Authorization": f"Bearer {issue_for(admin_user).token}"}

    with httpx.stream(
        "GET", f"{asgi_server}/audit/export?format=csv", headers=headers, timeout=30
    ) as response:
        assert response.status_code == 200
        assert response.headers["content-type"].startswith("text/csv")
        text = response.read().decode()
    rows = list(csv.reader(io.StringIO(text)))
    assert rows[0][0] == "id" and [r[0] for r in rows[1 : len(expected) + 1]] == [str(i) for i in expected]
    assert rows[-1][3] == "audit:exported"  # recorded before the stream started

    as_json = httpx.get(f"{asgi_server}/audit/export?format=json", headers=headers, timeout=30).json()
    assert len(as_json) == len(expected) + 2 and as_json[0]["id"] == str(expected[0])
