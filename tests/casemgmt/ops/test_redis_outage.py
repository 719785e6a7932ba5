"""While Redis (cache, channel layer and broker) is down, the case service under daphne never
answers 500: authentication and logout work from the database, and a write either happens in full
(its WebSocket broadcast and queued work are left to the periodic scans) or is refused."""

from __future__ import annotations

import uuid

import httpx
import pytest

from casemgmt.accounts.models import User
from casemgmt.cases.models import Case
from casemgmt.notifications.models import Notification
from casemgmt.vault.models import Erasure
from casemgmt.workflows.models import CaseStep
from tests.casemgmt.conftest import PASSWORD
from tests.casemgmt.workflows.conftest import Flow, ok, task_step
from tests.support.processes import start_ready_asgi_server
from tests.support.redis_server import running_private_redis

pytestmark = [pytest.mark.worker, pytest.mark.django_db(transaction=True)]


@pytest.fixture
def redis_server():
    with running_private_redis() as server:
        yield server


@pytest.fixture
def service(subprocess_env, redis_server):
    """The case service under daphne whose cache, channel layer and broker are the private Redis."""
    server, base = start_ready_asgi_server(
        name="case-asgi-outage",
        application="casemgmt.config.asgi:application",
        env={**subprocess_env, "CASE_REDIS_URL": redis_server.url},
        health_path="/healthz",
    )
    try:
        yield base
    finally:
        server.stop()


def publish_agent_workflow(flow: Flow) -> None:
    name = f"p{uuid.uuid4().hex[:6]}"
    template = {"name": name, "template": "Summarise {{ case.caseNumber }}", "maxTokens": 20}
    ok(flow.client.post("/prompt-templates", template, format="json"), 201)
    agent = {"id": "summary", "name": "Summary", "type": "agent", "promptTemplate": name}
    flow.workflow([agent, task_step("review")])


def test_no_500_while_redis_is_down(service, redis_server, api, admin_user, make_user, tenant):
    flow = Flow(api, admin_user)
    publish_agent_workflow(flow)
    # A second case type whose first task is assigned at once: the assignee's email is queued on commit.
    assigned_flow = Flow(api, admin_user)
    assignee = make_user(tenant, roles=["case_worker"])
    assigned_flow.workflow([task_step("review", assignTo=str(assignee.id))])
    with httpx.Client(base_url=service, timeout=30) as http:
        login = http.post("/auth/login", json={"email": admin_user.email, "password": PASSWORD})
        assert login.status_code == 200, login.text
        auth = {"Authorization": f"Bearer {login.json()['token']}"}
        redis_server.stop()

        answers = {}
        answers["read"] = http.get("/auth/preferences", headers=auth)
        answers["list"] = http.get("/cases", headers=auth)
        # A case whose first step is an agent step: broadcast and worker message on commit.
        answers["case"] = http.post(
            "/cases", headers=auth, json={"case_type_key": flow.key, "case_data": {"amount": 3}}
        )
        answers["assigned-case"] = http.post(
            "/cases", headers=auth, json={"case_type_key": assigned_flow.key, "case_data": {"amount": 4}}
        )
        # A human principal: the welcome email is queued on commit.
        email = f"new-{uuid.uuid4().hex[:8]}@example.test"
        answers["principal"] = http.post(
            "/admin/principals", headers=auth, json={"email": email, "displayName": "N", "roles": ["viewer"]}
        )
        # An erasure job: its worker message is queued on commit.
        subject = answers["principal"].json().get("id") if answers["principal"].status_code == 201 else None
        answers["erasure"] = http.post(
            "/admin/erasure", headers=auth, json={"userId": subject, "reason": "outage test"}
        )
        answers["bad-login"] = http.post("/auth/login", json={"email": email, "password": "wrong-password-1"})
        answers["logout"] = http.post("/auth/logout", headers=auth)
        answers["after-logout"] = http.get("/auth/preferences", headers=auth)

    statuses = {name: r.status_code for name, r in answers.items()}
    assert all(code < 500 or code == 503 for code in statuses.values()), statuses
    for name, response in answers.items():
        if response.status_code == 503:
            assert response.json()["code"] == "service_unavailable", (name, response.text)
    assert statuses["read"] == statuses["list"] == 200, statuses
    assert statuses["bad-login"] == 401 and statuses["logout"] == 204, statuses
    assert statuses["after-logout"] == 401, statuses
    # Writes that answered happened in full; the agent step waits for the sweep to send it again.
    assert statuses["case"] == 201, answers["case"].text
    case = Case.objects.get(id=answers["case"].json()["id"])
    assert CaseStep.objects.get(case=case, step_id="summary").status == "active"
    assert statuses["assigned-case"] == 201, answers["assigned-case"].text
    assert Notification.objects.filter(recipient=assignee, status=Notification.PENDING).exists()
    assert statuses["principal"] == 201, answers["principal"].text
    assert User.objects.filter(email=email).exists()
    assert statuses["erasure"] == 202, answers["erasure"].text
    assert Erasure.objects.filter(id=answers["erasure"].json()["id"]).exists()
