"""Console users of each role and a small DAG (extract -> transform, load), made through the
services as the API would."""

from __future__ import annotations

import pytest
from django.test import Client

from orchestrator.definitions import services as definitions
from orchestrator.security.services import user_create

PASSWORD = "console-pass-1"  # noqa: S105 - test accounts


@pytest.fixture
def users(db) -> dict[str, object]:
    return {
        role: user_create(username=f"{role}-user", password=PASSWORD, role=role)
        for role in ("viewer", "operator", "admin")
    }


def signed_in(user) -> Client:
    client = Client()
    response = client.post("/console/login", {"username": user.get_username(), "password": PASSWORD})
    assert response.status_code == 302, response.content
    return client


def put_task(task_id: str, command: str, *, dependencies=(), parameters=None, queue: str = "default") -> None:
    definitions.task_definition_put(
        task_id=task_id, name=task_id.title(), description="", command=command,
        dependencies=list(dependencies), parameters=parameters or {}, queue=queue,
    )  # fmt: skip


def put_dag(dag_id: str, tasks: list[str], **fields) -> None:
    definitions.dag_put(
        dag_id=dag_id, name=fields.pop("name", dag_id), description="", tasks=[{"id": t, "parameters": {}} for t in tasks],
        context=None, tags=fields.pop("tags", []), **fields,
    )  # fmt: skip


@pytest.fixture
def etl(db) -> str:
    put_task("extract", "echo extract $SOURCE", parameters={"SOURCE": "db"})
    put_task("transform", "echo transform", dependencies=["extract"])
    put_task("load", "echo load", dependencies=["extract"])
    put_dag("etl", ["transform", "load"], tags=["nightly"])
    return "etl"
