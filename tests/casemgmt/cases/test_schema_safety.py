"""Tenant-written JSON schemas are never a way to reach the network or to break later writes:
remote `$ref`s are refused (SSRF), unusable schemas are rejected at registration, and a stored schema
that still cannot be applied is a 400 on every write, never a 500. Also: strict input types."""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest

from casemgmt.cases.models import CaseType
from casemgmt.workflows.services.inbox import form_errors
from shared.api.errors import ValidationFailed
from tests.casemgmt.cases.conftest import VALID_DATA

pytestmark = pytest.mark.django_db


class SchemaServer:
    """A real HTTP server on 127.0.0.1 that serves a valid schema and counts every request."""

    def __init__(self) -> None:
        self.hits: list[str] = []
        owner = self

        class Handler(BaseHTTPRequestHandler):
            def do_GET(self) -> None:  # noqa: N802 - the stdlib's name
                owner.hits.append(self.path)
                body = json.dumps({"type": "object"}).encode()
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def log_message(self, *args: object) -> None:
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}/x.json"


@pytest.fixture
def schema_server() -> Iterator[SchemaServer]:
    server = SchemaServer()
    thread = threading.Thread(target=server.server.serve_forever, daemon=True)
    thread.start()
    yield server
    server.server.shutdown()
    server.server.server_close()
    thread.join()


def post_type(client, schema, **body):
    payload = {"key": "permit", "displayName": "Permit", "schema": schema, **body}
    return client.post("/case-types", payload, format="json")


def stored_type(admin_user, schema) -> CaseType:
    """A case type whose schema got past registration (e.g. stored before these checks existed)."""
    return CaseType.objects.create(
        tenant_id=admin_user.tenant_id,
        key="legacy",
        version=1,
        display_name="Legacy",
        schema=schema,
        prefix="LG",
        created_by=admin_user,
    )


def errors_of(response) -> dict[str, str]:
    return {e["field"]: e["error"] for e in response.json()["details"]["errors"]}


# --- item 1: no remote $ref retrieval -----------------------------------------------------------


def test_remote_ref_is_rejected_at_registration_without_fetching(api, admin_user, schema_server):
    schema = {"type": "object", "properties": {"a": {"$ref": schema_server.url}}}
    response = post_type(api(admin_user), schema)
    assert response.status_code == 400, response.json()
    assert "schema.properties.a.$ref" in errors_of(response)
    assert schema_server.hits == []


def test_case_writes_never_fetch_a_stored_remote_ref(api, admin_user, schema_server):
    case_type = stored_type(admin_user, {"$ref": schema_server.url})
    response = api(admin_user).post("/cases", {"caseTypeId": str(case_type.id), "data": {}}, format="json")
    assert response.status_code == 400, response.json()
    assert response.json()["details"]["field"] == "schema"
    assert schema_server.hits == []


def test_unreachable_remote_ref_is_400_not_500(api, admin_user):
    case_type = stored_type(admin_user, {"$ref": "http://127.0.0.1:9/x.json"})
    response = api(admin_user).post("/cases", {"caseTypeId": str(case_type.id), "data": {}}, format="json")
    assert response.status_code == 400 and response.json()["code"] == "validation_error"


def test_task_form_schema_never_fetches_a_remote_ref(schema_server):
    with pytest.raises(ValidationFailed) as raised:
        form_errors({"$ref": schema_server.url}, {"approved": True})
    assert raised.value.status_code == 400
    assert schema_server.hits == []


def test_task_form_schema_with_bad_pattern_is_400():
    with pytest.raises(ValidationFailed):
        form_errors({"properties": {"a": {"pattern": "("}}}, {"a": "x"})
    assert form_errors({"properties": {"a": {"type": "string"}}}, {"a": 1})[0]["field"] == "data.a"


def test_local_refs_and_the_draft7_meta_schema_still_resolve(api, admin_user):
    schema = {
        "type": "object",
        "definitions": {"money": {"type": "number", "minimum": 0}},
        "properties": {
            "amount": {"$ref": "#/definitions/money"},
            "nested": {"$ref": "#"},
            "spec": {"$ref": "http://json-schema.org/draft-07/schema#"},
        },
        "enum": [{"$ref": "http://example.invalid/only-data"}, {"amount": 1}],
    }
    client = api(admin_user)
    created = post_type(client, {k: v for k, v in schema.items() if k != "enum"})
    assert created.status_code == 201, created.json()
    case_type_id = created.json()["id"]
    ok = client.post(
        "/cases", {"caseTypeId": case_type_id, "data": {"amount": 3, "nested": {"amount": 1}}}, format="json"
    )
    assert ok.status_code == 201, ok.json()
    bad = client.post(
        "/cases", {"caseTypeId": case_type_id, "data": {"nested": {"amount": -1}}}, format="json"
    )
    assert bad.status_code == 400 and "data.nested.amount" in errors_of(bad)
    # a "$ref" inside enum/const is data, not a reference
    assert post_type(client, schema).status_code == 201


# --- item 2: schemas that cannot work are refused up front; stored ones never 500 ---------------


@pytest.mark.parametrize(
    ("schema", "field"),
    [
        ({"properties": {"code": {"type": "string", "pattern": "("}}}, "schema.properties.code.pattern"),
        ({"patternProperties": {"[a-": {"type": "string"}}}, "schema.patternProperties.[a-"),
        ({"properties": {"a": {"$ref": "#/definitions/missing"}}}, "schema.properties.a.$ref"),
        ({"items": [{"$ref": "other.json"}]}, "schema.items[0].$ref"),
        ({"properties": {"a": {"$ref": "#/required"}}, "required": ["a"]}, "schema.properties.a.$ref"),
    ],
)
def test_unusable_schema_is_400_at_registration_with_its_path(api, admin_user, schema, field):
    response = post_type(api(admin_user), {"type": "object", **schema})
    assert response.status_code == 400, response.json()
    assert field in errors_of(response)


def test_ref_loop_is_400_at_registration(api, admin_user):
    response = post_type(
        api(admin_user), {"definitions": {"a": {"$ref": "#/definitions/a"}}, "$ref": "#/definitions/a"}
    )
    assert response.status_code == 400 and response.json()["details"]["field"] == "schema"


@pytest.mark.parametrize(
    "schema",
    [
        {"properties": {"code": {"pattern": "("}}},
        {"properties": {"code": {"$ref": "#/definitions/missing"}}},
        {"properties": {"code": {"$ref": "#/properties/code"}}},
    ],
)
def test_stored_unusable_schema_is_400_on_create_and_patch(api, admin_user, schema):
    case_type = stored_type(admin_user, schema)
    client = api(admin_user)
    created = client.post("/cases", {"caseTypeId": str(case_type.id), "data": {"code": "x"}}, format="json")
    assert created.status_code == 400 and created.json()["details"]["field"] == "schema", created.json()
    ok = client.post("/cases", {"caseTypeId": str(case_type.id), "data": {}}, format="json")
    if ok.status_code == 201:  # the empty object never reaches the broken part; a patch that does is a 400
        patched = client.patch(f"/cases/{ok.json()['id']}/data", {"data": {"code": "x"}}, format="json")
        assert patched.status_code == 400 and patched.json()["details"]["field"] == "schema"


# --- item 3: strict input types -----------------------------------------------------------------


@pytest.mark.parametrize(
    "body", [{"key": 5}, {"displayName": 7}, {"displayName": True}, {"prefix": 12}, {"description": 1}]
)
def test_case_type_strings_are_not_coerced(api, admin_user, body):
    response = post_type(api(admin_user), {"type": "object"}, **body)
    assert response.status_code == 400 and response.json()["code"] == "validation_error"
    assert set(errors_of(response)) == set(body)


@pytest.mark.parametrize("version", ["1", True, 1.5])
def test_patch_version_must_be_an_integer(api, admin_user, case_type, version):
    case = (
        api(admin_user)
        .post("/cases", {"caseTypeId": str(case_type.id), "data": VALID_DATA}, format="json")
        .json()
    )
    response = api(admin_user).patch(
        f"/cases/{case['id']}/data", {"data": {"description": "x"}, "version": version}, format="json"
    )
    assert response.status_code == 400 and "version" in errors_of(response)
    assert api(admin_user).get(f"/cases/{case['id']}").json()["version"] == 1
