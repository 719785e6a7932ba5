"""The orchestrator's OpenAPI document reads well for people (operation ids that say what they do,
operations grouped by resource rather than all under `api`, an introduction) and documents what the
routes take and answer."""

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
def document(api):
    response = api.get("/openapi.json")
    assert response.status_code == 200
    return response.json()


def test_operation_ids_are_human_and_unique(document):
    assert_operation_ids_human_and_unique(document)
    assert operation_named(document, "scheduleTask")[:2] == ("post", "/api/schedule-task")
    assert operation_named(document, "rerunRun")[:2] == ("post", "/api/rerun/{run_id}")
    assert operation_named(document, "listDags")[:2] == ("get", "/api/dags")
    assert operation_named(document, "deleteSchedule")[:2] == ("delete", "/api/schedules/{schedule_id}")


def test_operations_are_grouped_by_resource(document):
    assert_tagged_by_declared_resources(document)
    assert "api" not in {tag["name"] for tag in document["tags"]}
    assert operation_named(document, "getTaskRunLogs")[2]["tags"] == ["Runs"]
    assert operation_named(document, "getTask")[2]["tags"] == ["Tasks"]


def test_introduction_explains_authentication_errors_paging_and_idempotency(document):
    assert_introduction(
        document, must_mention=["X-API-Key", "Authorization: Bearer", "create_api_key", "Idempotency-Key"]
    )


def test_the_log_route_documents_tail_and_since(document):
    parameters = {p["name"] for p in document["paths"]["/api/tasks/{task_run_id}/logs"]["get"]["parameters"]}
    assert {"tail", "since"} <= parameters


def test_schedule_delete_is_documented_as_the_200_it_answers(document):
    responses = document["paths"]["/api/schedules/{schedule_id}"]["delete"]["responses"]
    assert "204" not in responses
    schema = responses["200"]["content"]["application/json"]["schema"]
    assert schema == {"$ref": "#/components/schemas/ScheduleDeleted"}
    assert set(document["components"]["schemas"]["ScheduleDeleted"]["properties"]) == {"success", "message"}
