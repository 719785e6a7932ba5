"""Definition upserts on SQLite: `select_for_update` finds no row to lock for a new id, and SQLite
ignores it anyway; immediate transactions make concurrent PUTs of one new id create it once."""

from __future__ import annotations

import pytest
from rest_framework.test import APIClient

from orchestrator.definitions.models import TaskDefinition
from tests.sqlite.threads import race


@pytest.mark.django_db(transaction=True)
def test_concurrent_puts_of_a_new_task_create_it_once():
    def put(index: int):
        response = APIClient().put("/api/tasks/fresh", {"command": f"echo {index}"}, format="json")
        return response.status_code

    codes = race([lambda i=i: put(i) for i in range(5)])
    assert sorted(codes) == [200, 200, 200, 200, 201], codes
    assert TaskDefinition.objects.filter(pk="fresh").count() == 1
