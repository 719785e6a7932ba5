"""/admin/principals: create (human and agent), list, update, disable, enable."""

import uuid

import pytest
from django.core import mail

from casemgmt.accounts.models import User
from casemgmt.accounts.tasks import send_welcome_email
from casemgmt.audit.models import AuditEvent
from tests.casemgmt.conftest import PASSWORD

NEW_PASSWORD = "a-much-longer-new-passphrase-77"
PRINCIPAL_FIELDS = {"id", "email", "displayName", "roles", "isActive", "createdAt", "kind"}


def new_email() -> str:
    return f"p-{uuid.uuid4().hex[:10]}@example.test"


@pytest.fixture
def admin_api(api, admin_user):
    return api(admin_user)


def audit_actions(tenant, resource):
    return list(
        AuditEvent.objects.filter(tenant=tenant, resource=resource)
        .order_by("sequence")
        .values_list("action", flat=True)
    )


def test_create_human_principal(admin_api, admin_user, tenant, django_capture_on_commit_callbacks):
    email = new_email()
    with django_capture_on_commit_callbacks(execute=False) as callbacks:
        response = admin_api.post(
            "/admin/principals",
            {"email": email.upper(), "displayName": "Hana", "roles": ["viewer", "case_worker"]},
            format="json",
        )
    assert response.status_code == 201, response.content
    body = response.json()
    assert set(body) == PRINCIPAL_FIELDS
    assert body["email"] == email and body["displayName"] == "Hana" and body["kind"] == "human"
    assert body["isActive"] is True and body["createdAt"].endswith("Z")
    assert sorted(body["roles"]) == ["case_worker", "viewer"]
    uuid.UUID(body["id"])
    assert len(callbacks) == 1  # the welcome email is queued only once the row is committed
    event = AuditEvent.objects.get(tenant=tenant, action="user:created", resource=f"principals/{body['id']}")
    assert event.actor == str(admin_user.id)


def test_welcome_email_carries_a_working_one_time_link(admin_api, api):
    email = new_email()
    created = admin_api.post(
        "/admin/principals", {"email": email, "displayName": "Wendy", "roles": ["viewer"]}, format="json"
    ).json()
    send_welcome_email.apply(
        args=[created["id"]]
    )  # the task body, run here; the worker path is tested separately
    send_welcome_email.apply(args=[created["id"]])  # a redelivered task sends nothing more
    assert len(mail.outbox) == 1
    message = mail.outbox[0]
    assert message.to == [email]
    link = next(line for line in message.body.splitlines() if "/console/password/set?token=" in line)
    token = link.split("token=", 1)[1]
    anon = api(None)
    assert (
        anon.post(
            "/auth/password/set", {"token": token, "newPassword": NEW_PASSWORD}, format="json"
        ).status_code
        == 204
    )
    assert (
        anon.post("/auth/login", {"email": email, "password": NEW_PASSWORD}, format="json").status_code == 200
    )
    assert (
        anon.post(
            "/auth/password/set", {"token": token, "newPassword": NEW_PASSWORD}, format="json"
        ).status_code
        == 400
    )


def test_create_with_password_sends_welcome_without_link(admin_api, api):
    email = new_email()
    created = admin_api.post(
        "/admin/principals",
        {"email": email, "displayName": "Pat", "roles": [], "password": NEW_PASSWORD},
        format="json",
    )
    assert created.status_code == 201
    send_welcome_email.apply(args=[created.json()["id"]])
    assert len(mail.outbox) == 1 and "token=" not in mail.outbox[0].body
    assert (
        api(None).post("/auth/login", {"email": email, "password": NEW_PASSWORD}, format="json").status_code
        == 200
    )


def test_agent_principal_gets_api_key_once_and_authenticates_with_it(admin_api, api):
    response = admin_api.post(
        "/admin/principals",
        {"email": new_email(), "displayName": "Bot", "roles": ["admin"], "kind": "agent"},
        format="json",
    )
    assert response.status_code == 201
    body = response.json()
    assert set(body) == PRINCIPAL_FIELDS | {"apiKey"}
    assert body["kind"] == "agent" and body["apiKey"].startswith("cmk_")
    agent = User.objects.get(pk=body["id"])
    assert body["apiKey"] not in (agent.api_key_hash, agent.password)
    client = api(None)
    client.credentials(HTTP_AUTHORIZATION=f"Bearer {body['apiKey']}")
    assert client.get("/admin/principals").status_code == 200
    listed = admin_api.get("/admin/principals", {"search": body["email"]}).json()["data"][0]
    assert "apiKey" not in listed
    client.credentials(HTTP_AUTHORIZATION=f"Bearer {body['apiKey']}x")
    assert client.get("/admin/principals").status_code == 401


def test_agent_with_password_is_400(admin_api):
    response = admin_api.post(
        "/admin/principals",
        {"email": new_email(), "displayName": "Bot", "kind": "agent", "password": NEW_PASSWORD},
        format="json",
    )
    assert response.status_code == 400 and response.json()["details"]["field"] == "password"


@pytest.mark.parametrize(
    ("body", "field"),
    [
        ({"displayName": "X"}, "email"),
        ({"email": "not-an-email", "displayName": "X"}, "email"),
        ({"email": "ok@x.test"}, "displayName"),
        ({"email": "ok@x.test", "displayName": "X", "roles": ["no_such_role"]}, "roles"),
        ({"email": "ok@x.test", "displayName": "X", "roles": "viewer"}, "roles"),
        ({"email": "ok@x.test", "displayName": "X", "kind": "robot"}, "kind"),
        ({"email": "ok@x.test", "displayName": "X", "password": "short"}, "password"),
        ({"email": "ok@x.test", "displayName": "X", "colour": "red"}, "colour"),
    ],
)
def test_create_bad_input_is_400(admin_api, body, field):
    response = admin_api.post("/admin/principals", body, format="json")
    assert response.status_code == 400, response.content
    assert response.json()["details"]["field"] == field


def test_create_duplicate_email_is_409_even_across_tenants(admin_api, make_user, other_tenant):
    outsider = make_user(other_tenant, roles=["viewer"])
    response = admin_api.post(
        "/admin/principals", {"email": outsider.email, "displayName": "Dup"}, format="json"
    )
    assert response.status_code == 409 and response.json()["code"] == "already_exists"


def test_roles_of_another_tenant_cannot_be_assigned(admin_api, other_tenant):
    from casemgmt.accounts.models import Role

    Role.objects.create(tenant=other_tenant, name="globex_only", display_name="G", permissions=["*"])
    response = admin_api.post(
        "/admin/principals",
        {"email": new_email(), "displayName": "X", "roles": ["globex_only"]},
        format="json",
    )
    assert response.status_code == 400


def test_list_pages_searches_and_filters(admin_api, make_user, tenant, other_tenant, admin_user):
    for n in range(3):
        make_user(tenant, roles=["viewer"], display_name=f"Zed Person {n}")
    make_user(
        tenant,
        roles=["case_worker"],
        display_name="Carla Worker",
        email=f"carla-{uuid.uuid4().hex[:6]}@example.test",
    )
    make_user(other_tenant, roles=["viewer"], display_name="Zed Outsider")

    everything = admin_api.get("/admin/principals").json()
    assert set(everything) == {"data", "total", "next"}
    assert everything["total"] == 5 and everything["next"] is None
    assert all(set(item) == PRINCIPAL_FIELDS for item in everything["data"])

    first = admin_api.get("/admin/principals", {"limit": 2}).json()
    assert len(first["data"]) == 2 and first["total"] == 5
    assert first["next"].startswith("http://") and "offset=2" in first["next"]
    last = admin_api.get("/admin/principals", {"limit": 2, "offset": 4}).json()
    assert len(last["data"]) == 1 and last["next"] is None

    zed = admin_api.get("/admin/principals", {"search": "zed per"}).json()
    assert zed["total"] == 3 and all(i["displayName"].startswith("Zed Person") for i in zed["data"])
    assert admin_api.get("/admin/principals", {"search": "carla-"}).json()["total"] == 1
    workers = admin_api.get("/admin/principals", {"roleFilter": "case_worker"}).json()
    assert [i["displayName"] for i in workers["data"]] == ["Carla Worker"]
    admins = admin_api.get("/admin/principals", {"roleFilter": "admin"}).json()
    assert [i["id"] for i in admins["data"]] == [str(admin_user.id)]
    assert admin_api.get("/admin/principals", {"roleFilter": "nope"}).json() == {
        "data": [],
        "total": 0,
        "next": None,
    }


@pytest.mark.parametrize(
    "query",
    [{"limit": 0}, {"limit": 101}, {"limit": "x"}, {"offset": -1},
     # int() reads these, the documents' integer does not
     {"limit": "5_0"}, {"limit": " 5"}, {"limit": "\u0665"}, {"offset": "1" + "0" * 5000}],
)  # fmt: skip
def test_list_bad_paging_is_400(admin_api, query):
    assert admin_api.get("/admin/principals", query).status_code == 400


def test_an_empty_limit_or_offset_is_the_default_as_documented(admin_api):
    assert admin_api.get("/admin/principals", {"limit": "", "offset": ""}).status_code == 200
    document = admin_api.get("/openapi.json").json()
    limit = next(
        p for p in document["paths"]["/admin/principals"]["get"]["parameters"] if p["name"] == "limit"
    )
    assert {"type": "string", "enum": [""]} in limit["schema"]["anyOf"]


def test_list_limit_100_is_allowed(admin_api):
    assert admin_api.get("/admin/principals", {"limit": 100}).status_code == 200


def test_update_display_name_and_roles(admin_api, make_user, tenant):
    user = make_user(tenant, roles=["viewer"])
    response = admin_api.put(
        f"/admin/principals/{user.id}",
        {"displayName": "Renamed", "roles": ["case_worker", "viewer"]},
        format="json",
    )
    assert response.status_code == 200, response.content
    body = response.json()
    assert set(body) == PRINCIPAL_FIELDS
    assert body["displayName"] == "Renamed" and sorted(body["roles"]) == ["case_worker", "viewer"]
    assert audit_actions(tenant, f"principals/{user.id}") == [
        "user:created",
        "user:updated",
        "user:role_assigned",
    ]
    # Roles alone; the same set again records nothing new.
    assert (
        admin_api.put(
            f"/admin/principals/{user.id}", {"roles": ["viewer", "case_worker"]}, format="json"
        ).status_code
        == 200
    )
    assert audit_actions(tenant, f"principals/{user.id}").count("user:role_assigned") == 1


@pytest.mark.parametrize(
    "body", [{"roles": ["ghost"]}, {"displayName": 7}, {"roles": [1]}, {"email": "x@y.test"}]
)
def test_update_bad_input_is_400(admin_api, make_user, tenant, body):
    user = make_user(tenant, roles=["viewer"])
    assert admin_api.put(f"/admin/principals/{user.id}", body, format="json").status_code == 400


def test_disable_stops_tokens_at_once_and_enable_restores(admin_api, api, make_user, tenant):
    user = make_user(tenant, roles=["viewer"])
    client = api(user)
    assert client.get("/auth/preferences").status_code == 200
    assert admin_api.post(f"/admin/principals/{user.id}/disable").status_code == 204
    assert client.get("/auth/preferences").status_code == 401
    anon = api(None)
    assert (
        anon.post("/auth/login", {"email": user.email, "password": PASSWORD}, format="json").status_code
        == 401
    )
    listed = admin_api.get("/admin/principals", {"search": user.email}).json()["data"][0]
    assert listed["isActive"] is False
    assert admin_api.post(f"/admin/principals/{user.id}/disable").status_code == 204  # idempotent
    assert admin_api.post(f"/admin/principals/{user.id}/enable").status_code == 204
    assert client.get("/auth/preferences").status_code == 200
    assert audit_actions(tenant, f"principals/{user.id}") == ["user:created", "user:disabled", "user:enabled"]


def test_disabled_agent_key_stops_working(admin_api, api):
    body = admin_api.post(
        "/admin/principals",
        {"email": new_email(), "displayName": "Bot", "roles": ["viewer"], "kind": "agent"},
        format="json",
    ).json()
    client = api(None)
    client.credentials(HTTP_AUTHORIZATION=f"Bearer {body['apiKey']}")
    assert client.get("/auth/preferences").status_code == 200
    assert admin_api.post(f"/admin/principals/{body['id']}/disable").status_code == 204
    assert client.get("/auth/preferences").status_code == 401


def test_cannot_disable_yourself(admin_api, admin_user):
    response = admin_api.post(f"/admin/principals/{admin_user.id}/disable")
    assert response.status_code == 409 and response.json()["code"] == "invalid_state"


@pytest.mark.parametrize(
    ("method", "suffix", "body"),
    [("put", "", {"displayName": "x"}), ("post", "/disable", None), ("post", "/enable", None)],
)
def test_other_tenants_principal_is_404(admin_api, make_user, other_tenant, method, suffix, body):
    outsider = make_user(other_tenant, roles=["viewer"])
    response = getattr(admin_api, method)(f"/admin/principals/{outsider.id}{suffix}", body, format="json")
    assert response.status_code == 404
    outsider.refresh_from_db()
    assert outsider.is_active and outsider.display_name == "Test User"
    assert (
        admin_api.put(f"/admin/principals/{uuid.uuid4()}", {"displayName": "x"}, format="json").status_code
        == 404
    )


@pytest.mark.parametrize(
    ("method", "path"),
    [
        ("get", "/admin/principals"),
        ("post", "/admin/principals"),
        ("put", "/admin/principals/{id}"),
        ("post", "/admin/principals/{id}/disable"),
        ("post", "/admin/principals/{id}/enable"),
    ],
)
def test_principal_endpoints_need_admin_users(api, make_user, tenant, admin_user, method, path):
    url = path.format(id=admin_user.id)
    lacking = make_user(tenant, permissions=["admin:roles", "cases:read"])
    denied = getattr(api(lacking), method)(url, {}, format="json")
    assert denied.status_code == 403 and denied.json()["code"] == "permission_denied"
    assert getattr(api(None), method)(url, {}, format="json").status_code == 401
    scoped = make_user(tenant, permissions=["admin:*"])
    assert getattr(api(scoped), method)(url, {}, format="json").status_code not in (401, 403)
