"""Concurrent PUTs of one id that does not exist yet: one creates it, the others update it (never
a duplicate-key 500), for every definition kind."""

from __future__ import annotations

import threading

import pytest
from django.db import close_old_connections
from rest_framework.test import APIClient

from orchestrator.definitions.models import Context, Dag, DefinitionVersion, ParameterSet, TaskDefinition
from tests.orchestrator.helpers import put_task

pytestmark = pytest.mark.django_db(transaction=True)

CALLERS = 6


def put_at_once(path: str, bodies: list[dict]) -> list[int]:
    statuses: list[int] = []
    barrier = threading.Barrier(len(bodies))

    def call(body: dict) -> None:
        barrier.wait()
        try:
            statuses.append(APIClient().put(path, body, format="json").status_code)
        finally:
            close_old_connections()

    threads = [threading.Thread(target=call, args=(body,)) for body in bodies]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    return statuses


def test_tasks_are_created_once_and_versioned_by_each_change():
    statuses = put_at_once("/api/tasks/raced", [{"command": f"echo {n}"} for n in range(CALLERS)])
    assert sorted(statuses) == [200] * (CALLERS - 1) + [201]
    assert TaskDefinition.objects.get(pk="raced").version == CALLERS
    versions = DefinitionVersion.objects.filter(definition_id="raced").values_list("version", flat=True)
    assert sorted(versions) == list(range(1, CALLERS + 1))


def test_dags_contexts_and_parameter_sets_are_created_once(api):
    put_task(api, "member")
    cases = [
        ("/api/dags/raced-dag", {"tasks": ["member"]}, Dag),
        ("/api/contexts/raced-ctx", {"variables": {"A": "1"}}, Context),
        ("/api/parameter-sets/raced-params", {"parameters": {"a": "1"}}, ParameterSet),
    ]
    for path, body, model in cases:
        statuses = put_at_once(path, [body] * CALLERS)
        assert sorted(statuses) == [200] * (CALLERS - 1) + [201], path
        assert model.objects.count() == 1, path
