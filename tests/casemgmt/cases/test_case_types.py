"""POST/GET /case-types: draft-07 check, versioning by key, prefixes, permissions."""

import uuid

import pytest

from tests.casemgmt.cases.conftest import CLAIM_SCHEMA

pytestmark = pytest.mark.django_db


def post_type(client, **body):
    payload = {"key": "insurance_claim", "displayName": "Insurance claim", "schema": CLAIM_SCHEMA, **body}
    return client.post("/case-types", payload, format="json")


def test_register_returns_the_case_type_with_every_field(api, admin_user):
    response = post_type(api(admin_user), description="Claims", slaHours=24)
    assert response.status_code == 201, response.json()
    body = response.json()
    uuid.UUID(body["id"])
    assert body["createdAt"].endswith("Z")
    assert {
        k: body[k] for k in ("key", "version", "displayName", "description", "schema", "prefix", "slaHours")
    } == {
        "key": "insurance_claim",
        "version": 1,
        "displayName": "Insurance claim",
        "description": "Claims",
        "schema": CLAIM_SCHEMA,
        "prefix": "IC",
        "slaHours": 24,
    }


@pytest.mark.parametrize(
    ("key", "prefix"), [("insurance_claim", "IC"), ("complaint", "COM"), ("a_b_c", "ABC")]
)
def test_default_prefix_is_initials_else_first_three_letters(api, admin_user, key, prefix):
    assert post_type(api(admin_user), key=key).json()["prefix"] == prefix


def test_two_keys_never_share_a_prefix_so_case_numbers_stay_unique(api, admin_user):
    client = api(admin_user)
    first = post_type(client, key="insurance_claim").json()
    second = post_type(client, key="income_check").json()  # the same initials
    assert (first["prefix"], second["prefix"]) == ("IC", "IC2")
    numbers = set()
    for key in ("insurance_claim", "income_check"):
        data = {"applicant": {"name": "Ann"}, "amount": 1}
        created = client.post("/cases", {"case_type_key": key, "case_data": data}, format="json")
        assert created.status_code == 201, created.content
        numbers.add(created.json()["caseNumber"])
    assert len(numbers) == 2
    taken = post_type(client, key="internal_claim", prefix="IC")
    assert taken.status_code == 400 and taken.json()["details"]["field"] == "prefix"


def test_existing_key_registers_the_next_version_and_keeps_the_prefix(api, admin_user):
    client = api(admin_user)
    first = post_type(client, prefix="CLM").json()
    second = post_type(client, schema={"type": "object"})
    assert second.status_code == 201
    assert (
        second.json()["version"] == 2
        and second.json()["prefix"] == "CLM"
        and second.json()["id"] != first["id"]
    )
    # the first version's schema is unchanged
    assert client.get(f"/case-types/{first['id']}").json()["schema"] == CLAIM_SCHEMA
    changed = post_type(client, prefix="XYZ")
    assert changed.status_code == 400 and changed.json()["details"]["field"] == "prefix"


def test_invalid_draft7_schema_is_400_with_every_problem(api, admin_user):
    response = post_type(api(admin_user), schema={"type": "wrong", "properties": {"a": {"minimum": "x"}}})
    assert response.status_code == 400
    body = response.json()
    assert body["code"] == "validation_error"
    fields = {e["field"] for e in body["details"]["errors"]}
    assert fields == {"schema.type", "schema.properties.a.minimum"}


@pytest.mark.parametrize(
    "body",
    [
        {"key": "Bad Key"},
        {"prefix": "x"},
        {"prefix": "TOOLONGPREFIX"},
        {"schema": [1, 2]},
        {"slaHours": 0},
        {"displayName": ""},
    ],
)
def test_bad_input_is_400(api, admin_user, body):
    response = post_type(api(admin_user), **body)
    assert response.status_code == 400 and response.json()["code"] == "validation_error"


def test_missing_fields_are_all_listed(api, admin_user):
    response = api(admin_user).post("/case-types", {}, format="json")
    assert response.status_code == 400
    assert {e["field"] for e in response.json()["details"]["errors"]} == {"key", "displayName", "schema"}


def test_list_filters_by_key_and_latest(api, admin_user, reader):
    client = api(admin_user)
    post_type(client)
    post_type(client)
    post_type(client, key="complaint")
    listing = api(reader).get("/case-types").json()
    assert [(t["key"], t["version"]) for t in listing] == [  # newest first
        ("complaint", 1),
        ("insurance_claim", 2),
        ("insurance_claim", 1),
    ]
    assert [t["version"] for t in api(reader).get("/case-types?key=insurance_claim").json()] == [2, 1]
    latest = api(reader).get("/case-types?latest=true").json()
    assert [(t["key"], t["version"]) for t in latest] == [("complaint", 1), ("insurance_claim", 2)]
    assert api(reader).get("/case-types?latest=maybe").status_code == 400


def test_schema_is_immutable_put_and_patch_are_405(api, admin_user, case_type):
    client = api(admin_user)
    for method in (client.put, client.patch):
        response = method(f"/case-types/{case_type.id}", {"schema": {}}, format="json")
        assert response.status_code == 405 and response.json()["code"] == "method_not_allowed"


def test_permissions_and_tenancy(api, admin_user, reader, outsider, case_type, make_user, tenant):
    assert post_type(api(reader)).status_code == 403
    assert post_type(api(None)).status_code == 401
    assert api(None).get("/case-types").status_code == 401
    assert api(make_user(tenant, permissions=["tasks:read"])).get("/case-types").status_code == 403
    assert api(reader).get(f"/case-types/{case_type.id}").status_code == 200
    assert api(outsider).get(f"/case-types/{case_type.id}").status_code == 404
    assert api(outsider).get("/case-types").json() == []
    assert api(reader).get(f"/case-types/{uuid.uuid4()}").status_code == 404
