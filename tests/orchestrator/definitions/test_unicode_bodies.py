"""A lone surrogate escape ("\\ud800" not followed by a low surrogate) is not Unicode text: anywhere
in a JSON body it is a 400 validation error, never a 500 from the database."""

from __future__ import annotations

import pytest

from orchestrator.definitions.models import Dag, TaskDefinition
from tests.orchestrator.helpers import assert_error, put_task

pytestmark = pytest.mark.django_db

LONE = r'"x\ud800y"'  # the JSON escape itself, as a client sends it


def test_task_command_with_a_lone_surrogate_is_a_400(api):
    response = api.put("/api/tasks/extract", data=f'{{"command": {LONE}}}', content_type="application/json")
    body = assert_error(response, 400, "validation_error")
    assert "surrogate" in body["message"]
    assert not TaskDefinition.objects.filter(id="extract").exists()


def test_dag_description_with_a_lone_surrogate_is_a_400(api):
    put_task(api, "t1")
    body = f'{{"description": {LONE}, "tasks": [{{"id": "t1"}}]}}'
    response = api.put("/api/dags/pipeline", data=body, content_type="application/json")
    assert "surrogate" in assert_error(response, 400, "validation_error")["message"]
    assert not Dag.objects.filter(id="pipeline").exists()


def test_a_surrogate_pair_is_one_astral_character_and_is_kept(api):
    response = api.put(
        "/api/tasks/emoji", data=r'{"command": "echo \ud83d\ude00"}', content_type="application/json"
    )
    assert response.status_code == 201, response.content
    assert api.get("/api/tasks/emoji").json()["command"] == "echo \U0001f600"
