"""`Idempotency-Key` on schedule-task, schedule-dag and rerun: a retried request with the same key
answers the first response and creates nothing more; the key is the caller's own and lasts 24 h."""

from __future__ import annotations

import threading
from datetime import timedelta

import pytest
from django.db import close_old_connections
from django.utils import timezone
from rest_framework.test import APIClient

from orchestrator.runs.models import IdempotencyKey, Run
from tests.orchestrator.helpers import api_key, assert_error, put_dag, put_task

pytestmark = pytest.mark.django_db


@pytest.fixture(autouse=True)
def security_on(settings):
    settings.ORCH_SECURITY_ENABLED = True


def client_with(key: str) -> APIClient:
    client = APIClient()
    client.credentials(HTTP_X_API_KEY=key)
    return client


@pytest.fixture
def operator():
    return client_with(api_key("operator"))


@pytest.fixture
def admin():
    return client_with(api_key("admin"))


def schedule(client, key, body=None, path="/api/schedule-task"):
    return client.post(path, body or {"task_id": "idem"}, format="json", HTTP_IDEMPOTENCY_KEY=key)


def test_a_retried_schedule_task_makes_one_run_and_answers_the_same(operator, admin):
    put_task(admin, "idem")
    first = schedule(operator, "retry-1")
    second = schedule(operator, "retry-1")
    assert first.status_code == second.status_code == 201, second.content
    assert second.json() == first.json()
    assert Run.objects.count() == 1
    # Without a key, or with another key, each request is a new run.
    assert schedule(operator, "retry-2").json()["run_id"] != first.json()["run_id"]
    assert operator.post("/api/schedule-task", {"task_id": "idem"}, format="json").status_code == 201
    assert Run.objects.count() == 3


def test_schedule_dag_and_rerun_take_a_key_too(operator, admin):
    put_task(admin, "idem")
    put_dag(admin, "idem-dag", ["idem"])
    dag = [schedule(operator, "dag-1", {"dag_id": "idem-dag"}, "/api/schedule-dag") for _ in range(2)]
    assert dag[0].status_code == dag[1].status_code == 201 and dag[0].json() == dag[1].json()
    source = dag[0].json()["run_id"]
    assert operator.post(f"/api/cancel-run/{source}", {"force": True}, format="json").status_code == 200
    reruns = [schedule(operator, "rerun-1", {}, f"/api/rerun/{source}") for _ in range(2)]
    assert reruns[0].status_code == reruns[1].status_code == 201, reruns[1].content
    assert reruns[0].json() == reruns[1].json()
    assert Run.objects.count() == 2


def test_the_same_key_with_another_body_is_422(operator, admin):
    put_task(admin, "idem")
    put_task(admin, "other")
    put_dag(admin, "idem-dag", ["idem"])
    assert schedule(operator, "k").status_code == 201
    assert_error(schedule(operator, "k", {"task_id": "other"}), 422, "idempotency_key_reused")
    assert_error(
        schedule(operator, "k", {"dag_id": "idem-dag"}, "/api/schedule-dag"), 422, "idempotency_key_reused"
    )
    assert Run.objects.count() == 1


def test_keys_belong_to_their_caller_and_expire_after_a_day(operator, admin):
    put_task(admin, "idem")
    other = client_with(api_key("operator"))
    mine = schedule(operator, "shared-name").json()["run_id"]
    theirs = schedule(other, "shared-name").json()["run_id"]
    assert mine != theirs
    IdempotencyKey.objects.update(created_at=timezone.now() - timedelta(hours=24, seconds=1))
    assert schedule(operator, "shared-name").json()["run_id"] != mine
    assert Run.objects.count() == 3


def test_a_failed_request_is_not_remembered(operator, admin):
    assert_error(schedule(operator, "early"), 404, "not_found")
    put_task(admin, "idem")
    assert schedule(operator, "early").status_code == 201


@pytest.mark.parametrize("key", ["", "x" * 256, "bad\tkey"])
def test_a_malformed_key_is_400(operator, admin, key):
    put_task(admin, "idem")
    assert_error(schedule(operator, key), 400, "validation_error", field="Idempotency-Key")
    assert Run.objects.count() == 0


@pytest.mark.django_db(transaction=True)
def test_concurrent_requests_with_one_key_make_one_run():
    key = api_key("operator")
    put_task(client_with(api_key("admin")), "idem")
    answers: list = []
    barrier = threading.Barrier(4)

    def call():
        barrier.wait()
        try:
            answers.append(schedule(client_with(key), "race"))
        finally:
            close_old_connections()

    threads = [threading.Thread(target=call) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert {r.status_code for r in answers} == {201}
    assert len({r.json()["run_id"] for r in answers}) == 1
    assert Run.objects.count() == 1
