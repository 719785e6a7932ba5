"""Prompt templates: create, version by PUT, read every version, permissions."""

from __future__ import annotations

import pytest

from casemgmt.audit.models import AuditEvent

pytestmark = pytest.mark.django_db

BODY = {
    "name": "summarise",
    "description": "Summarise a claim",
    "template": "Summarise {{case_number}}: {{json case_data}}",
    "model": "gpt-test",
    "temperature": 0.2,
    "maxTokens": 300,
}


def test_create_version_and_read(api, admin_user, tenant):
    client = api(admin_user)
    created = client.post("/prompt-templates", BODY, format="json")
    assert created.status_code == 201, created.content
    body = created.json()
    assert body == {
        **BODY,
        "version": 1,
        "latestVersion": 1,
        "createdAt": body["createdAt"],
        "updatedAt": body["updatedAt"],
    }
    assert body["createdAt"].endswith("Z") and body["updatedAt"] == body["createdAt"]

    updated = client.put(
        "/prompt-templates/summarise",
        {**BODY, "template": "v2 {{case_number}}", "temperature": 0.5},
        format="json",
    )
    assert updated.status_code == 200, updated.content
    v2 = updated.json()
    assert v2["version"] == 2 and v2["latestVersion"] == 2 and v2["template"] == "v2 {{case_number}}"
    assert v2["createdAt"] == body["createdAt"] and v2["updatedAt"] >= body["updatedAt"]

    v1 = client.get("/prompt-templates/summarise/versions/1").json()
    assert v1["template"] == BODY["template"] and v1["version"] == 1 and v1["latestVersion"] == 2
    assert client.get("/prompt-templates/summarise/versions/2").json()["temperature"] == 0.5
    assert client.get("/prompt-templates/summarise/versions/3").status_code == 404
    assert client.get("/prompt-templates/summarise").json()["version"] == 2

    client.post("/prompt-templates", {**BODY, "name": "another"}, format="json")
    listing = client.get("/prompt-templates").json()
    assert [(t["name"], t["latestVersion"]) for t in listing] == [("another", 1), ("summarise", 2)]
    assert "template" not in listing[0] and listing[1]["description"] == "Summarise a claim"
    actions = AuditEvent.objects.filter(
        tenant_id=tenant.id, resource="prompt-templates/summarise"
    ).values_list("action", flat=True)
    assert list(actions) == ["prompt_template:created", "prompt_template:versioned"]


def test_validation(api, admin_user):
    client = api(admin_user)
    assert client.post("/prompt-templates", BODY, format="json").status_code == 201
    dup = client.post("/prompt-templates", BODY, format="json")
    assert dup.status_code == 409 and dup.json()["code"] == "already_exists"
    bad = client.post(
        "/prompt-templates", {**BODY, "name": "bad name!", "template": "{{#if x}}"}, format="json"
    )
    assert bad.status_code == 400
    assert {e["field"] for e in bad.json()["details"]["errors"]} == {"name", "template"}
    missing = client.post("/prompt-templates", {}, format="json")
    assert {e["field"] for e in missing.json()["details"]["errors"]} == {"name", "template"}
    assert (
        client.post("/prompt-templates", {**BODY, "name": "t", "temperature": 9}, format="json").status_code
        == 400
    )
    assert client.put("/prompt-templates/nothing", BODY, format="json").status_code == 404
    assert (
        client.put(
            "/prompt-templates/summarise", {**BODY, "template": "{{/each}}"}, format="json"
        ).status_code
        == 400
    )


def test_permissions_and_tenancy(api, admin_user, make_user, tenant, other_tenant):
    api(admin_user).post("/prompt-templates", BODY, format="json")
    reader = make_user(tenant, permissions=["agents:read"])
    nobody = make_user(tenant, permissions=["cases:read"])
    outsider = make_user(other_tenant, roles=["admin"])
    reads = ["/prompt-templates", "/prompt-templates/summarise", "/prompt-templates/summarise/versions/1"]
    for url in reads:
        assert api(None).get(url).status_code == 401
        assert api(nobody).get(url).status_code == 403
        assert api(reader).get(url).status_code == 200
    assert api(outsider).get("/prompt-templates").json() == []
    assert api(outsider).get(reads[1]).status_code == 404 and api(outsider).get(reads[2]).status_code == 404
    assert api(outsider).put(reads[1], BODY, format="json").status_code == 404
    for method, url in [("post", "/prompt-templates"), ("put", "/prompt-templates/summarise")]:
        assert getattr(api(None), method)(url, BODY, format="json").status_code == 401
        assert getattr(api(reader), method)(url, BODY, format="json").status_code == 403
    # another tenant may use the same name independently
    assert api(outsider).post("/prompt-templates", BODY, format="json").status_code == 201
