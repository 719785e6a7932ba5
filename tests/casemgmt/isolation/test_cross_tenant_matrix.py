"""Every object route x method, called by an administrator of another tenant: 404, and no byte of
the object (its ids, its data values) in the answer.

The routes come from the URL resolver, so a new route is covered without touching this file: its
URL parameters must be named in OBJECT_PARAMS (the test fails on an unknown one). The objects are
made for the owning tenant through the API and the services, each carrying MARKER in its data."""

from __future__ import annotations

import hashlib
import json
import re
import uuid
from dataclasses import dataclass, field
from typing import Any

import pytest
from django.urls import URLPattern, URLResolver, get_resolver
from django.utils import timezone

from casemgmt.accounts.models import Role, User
from casemgmt.cases.models import Case
from casemgmt.connectors.models import ConnectorConfig, Delivery
from casemgmt.prompts.models import PromptTemplate
from casemgmt.reports.models import Report
from casemgmt.tenancy.models import Theme
from casemgmt.vault.models import Erasure
from casemgmt.webhooks.models import InboundWebhook
from tests.casemgmt.vault.conftest import file_of
from tests.casemgmt.workflows.conftest import Flow, ok, task_step

MARKER = "zq-secret-7f3a9"
METHODS = ("get", "post", "put", "patch", "delete")
# Routes keyed by a name the caller resolves in its *own* tenant (a connector type): the caller may
# get its own answer (200 about its own configuration), never the owner's data.
OWN_NAMESPACE = {"connector-config", "connector-test"}
# Inbound routes authenticated by a signature or a signed link, not by a tenant's principal: never a
# 2xx without the signature, never the owner's data.
SIGNED = {"orchestrator-callback", "webhook-receive", "vault-signed-download"}


# Valid bodies for write routes that check their body before finding the object (new routes
# default to `{}`; a 400 for the body then shows here and gets its body added).
BODIES: dict[tuple[str, str], dict[str, Any]] = {
    ("case-data", "patch"): {"data": {"amount": 1}, "version": 1},
    ("task-draft", "post"): {"data": {}},
    ("task-reassign", "post"): {"assignTo": str(uuid.uuid4())},
    ("task-escalate", "post"): {"reason": "late"},
    ("prompt-template-detail", "put"): {"template": "hello"},
    ("report-detail", "put"): {"name": "mine", "query": "SELECT 1 AS one"},
}


@dataclass
class World:
    values: dict[str, str] = field(default_factory=dict)  # URL parameter -> the owner's object
    secrets: set[str] = field(default_factory=set)  # ids and values that must never be answered


def object_routes() -> list[tuple[str, str, Any, str]]:
    """(name, route, callback, namespace) for every route with a URL parameter, the Django admin
    (platform operators only, no tenant) left out."""

    def walk(patterns: list[Any], prefix: str, namespace: str) -> Any:
        for pattern in patterns:
            if isinstance(pattern, URLResolver):
                yield from walk(
                    pattern.url_patterns, prefix + str(pattern.pattern), pattern.namespace or namespace
                )
            elif isinstance(pattern, URLPattern):
                yield pattern.name, prefix + str(pattern.pattern), pattern.callback, namespace

    return [r for r in walk(get_resolver().url_patterns, "", "") if "<" in r[1] and r[3] != "admin"]


def methods_of(callback: Any) -> list[str]:
    view = getattr(callback, "cls", None) or getattr(callback, "view_class", None)
    if view is not None:
        return [m for m in METHODS if hasattr(view, m)]
    return ["get", "post"]  # function views (console pages): both; a 405 is skipped


def fill(route: str, world: World) -> str:
    def value(match: re.Match[str]) -> str:
        name = match.group(2)
        assert name in world.values, f"route {route}: add URL parameter {name!r} to the matrix world"
        return world.values[name]

    return "/" + re.sub(r"<(?:(\w+):)?(\w+)>", value, route)


@pytest.fixture
def world(api, tenant, admin_user, make_user, django_capture_on_commit_callbacks) -> World:
    flow = Flow(api, admin_user)
    workflow = flow.workflow([task_step("review")])
    case = flow.case({"amount": 10, "title": MARKER})
    client = api(admin_user)
    document = ok(
        client.post(
            f"/cases/{case['id']}/documents", {"file": file_of(MARKER.encode(), "m.txt")}, format="multipart"
        ),
        201,
    )
    member = make_user(tenant, permissions=["cases:read"], display_name=MARKER)
    role = Role.objects.create(tenant=tenant, name=f"r-{MARKER}", display_name=MARKER, permissions=[])
    theme = Theme.objects.create(tenant=tenant, name=MARKER)
    report = Report.objects.create(tenant=tenant, name=MARKER, query="SELECT 1 AS one", created_by=admin_user)
    template = PromptTemplate.objects.create(tenant=tenant, name=f"t-{MARKER}", version=1, template=MARKER)
    ConnectorConfig.objects.create(tenant=tenant, key="http", config_encrypted=MARKER)
    delivery = Delivery.objects.create(
        tenant=tenant, connector="http", action=MARKER, next_attempt_at=timezone.now()
    )
    hook = InboundWebhook.objects.create(
        tenant=tenant,
        path=f"hook-{MARKER}",
        key_hash=hashlib.sha256(uuid.uuid4().bytes).hexdigest(),
        key_prefix="whk_x",
        case_type_key=flow.key,
        principal=admin_user,
    )
    erasure = Erasure.objects.create(
        tenant=tenant,
        subject=member,
        requested_by=admin_user,
        scope=Erasure.DOCUMENTS,
        requested_at=timezone.now(),
    )
    team = ok(client.post("/teams", {"name": f"team-{MARKER}"}, format="json"), 201)
    ok(client.post(f"/teams/{team['id']}/members", {"userId": str(member.id)}, format="json"), 201)
    values = {
        "team_id": team["id"],
        "user_id": str(member.id),
        "case_id": case["id"],
        "case_type_id": str(Case.objects.get(pk=case["id"]).case_type_id),
        "document_id": document["id"],
        "workflow_id": workflow["id"],
        "step_id": "review",
        "principal_id": str(member.id),
        "role_id": str(role.id),
        "theme_id": str(theme.id),
        "report_id": str(report.id),
        "name": template.name,
        "version": "1",
        "key": "http",
        "action": "request",
        "delivery_id": str(delivery.id),
        "webhook_id": str(hook.id),
        "erasure_id": str(erasure.id),
        "tenant_id": str(tenant.id),
        "path": hook.path,
    }
    secrets = {MARKER, case["caseNumber"], str(admin_user.id), str(admin_user.email)}
    secrets |= {v for k, v in values.items() if k not in {"step_id", "version", "key", "action"}}
    return World(values=values, secrets=secrets)


@pytest.fixture
def intruder(other_tenant) -> User:
    return User.objects.get(tenant=other_tenant, roles__name="admin")


def leaked(body: bytes, world: World, url: str) -> list[str]:
    # The caller's own URL may be echoed back; anything else of the owner's must not appear.
    text = body.decode("utf-8", "replace")
    return sorted(s for s in world.secrets if s and s in text and s not in url)


def test_every_object_route_answers_404_to_another_tenants_admin(world, intruder, api, client):
    client.force_login(intruder)  # console pages: the session; API routes: the bearer token
    bearer = api(intruder)
    checked, failures = 0, []
    for name, route, callback, namespace in object_routes():
        url = fill(route, world)
        for method in methods_of(callback):
            caller = client if namespace == "console" else bearer
            kwargs: dict[str, Any] = {}
            if method in {"post", "put", "patch"}:
                kwargs = {
                    "data": json.dumps(BODIES.get((name, method), {})),
                    "content_type": "application/json",
                }
            response = getattr(caller, method)(url, **kwargs)
            where = f"{method.upper()} {url} ({name})"
            status = response.status_code
            if status == 405 and namespace == "console":
                continue  # the page does not take this method
            if leaked(response.content, world, url):
                failures.append(f"{where} answered {leaked(response.content, world, url)}")
            expected = (
                status < 500
                if name in OWN_NAMESPACE
                else 400 <= status < 500
                if name in SIGNED
                else status == 404
            )
            if not expected:
                failures.append(f"{where}: {status} {response.content[:200]!r}")
            checked += 1
    assert failures == [], "\n".join(failures)
    assert checked > 50
