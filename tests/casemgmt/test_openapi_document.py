"""The case service's OpenAPI document reads well for people (operation ids that say what they do,
operations grouped by resource, an introduction) and describes the routes served outside DRF."""

from __future__ import annotations

import pytest

from tests.support.openapi_document import (
    assert_introduction,
    assert_operation_ids_human_and_unique,
    assert_tagged_by_declared_resources,
    operation_named,
)

pytestmark = pytest.mark.django_db


@pytest.fixture
def document(client):
    response = client.get("/openapi.json")
    assert response.status_code == 200
    return response.json()


def test_operation_ids_are_human_and_unique(document):
    assert_operation_ids_human_and_unique(document)
    assert operation_named(document, "listCases")[:2] == ("get", "/cases")
    assert operation_named(document, "createCase")[:2] == ("post", "/cases")
    assert operation_named(document, "cancelCase")[:2] == ("post", "/cases/{case_id}/cancel")
    assert operation_named(document, "searchCases")[:2] == ("get", "/cases/search")
    assert operation_named(document, "claimTask")[:2] == ("post", "/tasks/{case_id}/{step_id}/claim")


def test_operations_are_grouped_by_resource(document):
    assert_tagged_by_declared_resources(document)
    tags = {tag["name"] for tag in document["tags"]}
    assert "manifest.json" not in tags and {"Cases", "Tasks", "Documents", "Operations"} <= tags
    assert operation_named(document, "getWebAppManifest")[2]["tags"] == ["Tenant"]


def test_introduction_explains_authentication_errors_and_paging(document):
    assert_introduction(document, must_mention=["/auth/login", "Authorization: Bearer", "cmk_", "/ws/ticket"])


def test_probes_metrics_and_the_websocket_are_documented(document):
    for path in ("/health", "/healthz", "/readyz", "/metrics", "/ws"):
        get = document["paths"][path]["get"]
        assert get["security"] == [{}], path  # public
    assert set(document["paths"]["/readyz"]["get"]["responses"]) >= {"200", "503"}
    websocket = document["paths"]["/ws"]["get"]
    assert {p["name"] for p in websocket["parameters"] if p["in"] == "query"} == {"token", "ticket"}
    assert {"101", "426"} <= set(websocket["responses"])
    assert "Upgrade: websocket" in websocket["description"]


def test_the_websocket_route_over_plain_http_is_426(client):
    response = client.get("/ws?token=x")
    assert response.status_code == 426
    body = response.json()
    assert body["error"] is True and body["code"] == "upgrade_required"


@pytest.mark.parametrize("path", ["/health", "/healthz", "/readyz", "/metrics", "/ws"])
def test_routes_outside_drf_refuse_other_methods_in_the_error_shape(client, path):
    response = client.post(path)
    assert response.status_code == 405
    assert response.json()["code"] == "method_not_allowed" and "GET" in response["Allow"]
