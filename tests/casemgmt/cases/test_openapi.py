"""The OpenAPI document describes exactly the fields the case and audit endpoints answer with."""

import pytest

pytestmark = pytest.mark.django_db


@pytest.fixture
def components(api, admin_user):
    response = api(None).get("/openapi.json")
    assert response.status_code == 200
    return response.json()["components"]["schemas"]


def documented(components, name):
    return set(components[name]["properties"])


def test_documented_fields_match_real_responses(api, admin_user, make_case, components):
    client = api(admin_user)
    case = make_case()
    client.patch(f"/cases/{case.id}/data", {"data": {"amount": 3}}, format="json")
    detail = client.get(f"/cases/{case.id}").json()
    assert set(detail) == documented(components, "CaseDetailOut")
    listing = client.get("/cases").json()
    assert set(listing) == documented(components, "CasePageOut")
    assert set(listing["data"][0]) == documented(components, "CaseListItemOut")
    hits = client.get("/cases/search?q=hail").json()
    assert set(hits["data"][0]) == documented(components, "SearchHitOut")
    assert set(client.get("/cases/dashboard").json()) == documented(components, "DashboardOut")
    assert set(client.get("/case-types").json()[0]) == documented(components, "CaseTypeOut")
    events = client.get(f"/cases/{case.id}/events").json()
    # `erased` and `deleted` appear only when true (documented as optional).
    assert set(events["data"][0]) == documented(components, "AuditEventOut") - {"erased", "deleted"}
    assert not {"erased", "deleted"} & set(components["AuditEventOut"].get("required", []))
    assert set(client.post(f"/cases/{case.id}/events/verify").json()) == documented(
        components, "CaseVerifyOut"
    )
    assert set(client.get("/audit/verify-chain").json()) == documented(components, "ChainVerifyOut")
    closed = client.post(f"/cases/{case.id}/close", {}, format="json").json()
    assert set(closed) == documented(components, "CaseOut")
