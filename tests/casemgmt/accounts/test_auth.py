"""POST /auth/login, /auth/logout, /auth/password, /auth/password/set; brute-force lockout."""

import uuid

import pytest

from casemgmt.accounts.models import User
from casemgmt.accounts.services import password_set_token
from shared.web.clientip import trusted_networks
from tests.casemgmt.conftest import PASSWORD
from tests.support.processes import wait_for

NEW_PASSWORD = "a-much-longer-new-passphrase-77"


def login(client, email, password, **extra):
    return client.post("/auth/login", {"email": email, "password": password}, format="json", **extra)


@pytest.fixture
def client(api):
    return api(None)


def test_login_answers_token_expiry_and_user(client, make_user, tenant):
    user = make_user(tenant, roles=["viewer", "case_worker"], display_name="Vera Viewer")
    response = login(client, user.email.upper(), PASSWORD)
    assert response.status_code == 200, response.content
    body = response.json()
    assert set(body) == {"token", "expiresAt", "user"}
    assert isinstance(body["token"], str) and body["expiresAt"].endswith("Z")
    assert body["user"]["id"] == str(user.id)
    assert body["user"]["email"] == user.email
    assert body["user"]["displayName"] == "Vera Viewer"
    assert sorted(body["user"]["roles"]) == ["case_worker", "viewer"]
    assert client.get("/auth/preferences", HTTP_AUTHORIZATION=f"Bearer {body['token']}").status_code == 200


@pytest.mark.parametrize(
    "body", [{}, {"email": "a@b.test"}, {"password": "x"}, {"email": 5, "password": "x"}]
)
def test_login_missing_or_bad_fields_is_400(client, db, body):
    response = client.post("/auth/login", body, format="json")
    assert response.status_code == 400
    assert response.json()["code"] == "validation_error"


def test_login_malformed_json_is_400(client, db):
    response = client.post("/auth/login", data="{not json", content_type="application/json")
    assert response.status_code == 400


def test_wrong_password_and_unknown_email_look_the_same(client, admin_user):
    wrong = login(client, admin_user.email, "wrong-password-123")
    unknown = login(client, f"nobody-{uuid.uuid4().hex}@x.test", "wrong-password-123")
    assert wrong.status_code == unknown.status_code == 401
    assert wrong.json() == unknown.json()
    assert wrong.json()["code"] == "invalid_credentials"


def test_agents_and_disabled_users_cannot_log_in(client, make_user, tenant):
    agent = make_user(tenant, roles=["viewer"], kind=User.KIND_AGENT)
    assert login(client, agent.email, PASSWORD).status_code == 401
    user = make_user(tenant, roles=["viewer"])
    User.objects.filter(pk=user.pk).update(is_active=False)
    assert login(client, user.email, PASSWORD).status_code == 401


def test_logout_revokes_only_that_token(client, admin_user):
    first = login(client, admin_user.email, PASSWORD).json()["token"]
    second = login(client, admin_user.email, PASSWORD).json()["token"]
    assert client.post("/auth/logout", HTTP_AUTHORIZATION=f"Bearer {first}").status_code == 204
    assert client.get("/auth/preferences", HTTP_AUTHORIZATION=f"Bearer {first}").status_code == 401
    assert client.get("/auth/preferences", HTTP_AUTHORIZATION=f"Bearer {second}").status_code == 200


def test_logout_anonymous_is_401(client, db):
    response = client.post("/auth/logout")
    assert response.status_code == 401
    assert response.json()["code"] == "not_authenticated"


def test_garbage_bearer_is_401(client, db):
    assert client.get("/auth/preferences", HTTP_AUTHORIZATION="Bearer not-a-token").status_code == 401
    assert client.get("/auth/preferences", HTTP_AUTHORIZATION="Basic abc").status_code == 401


def test_login_then_logout_revokes_the_token(client, admin_user):
    response = login(client, admin_user.email, PASSWORD)
    assert response.status_code == 200, response.content
    body = response.json()
    assert body["expiresAt"].endswith("Z")
    assert body["user"] == {
        "id": str(admin_user.id),
        "email": admin_user.email,
        "displayName": "Administrator",
        "roles": ["admin"],
    }
    auth = {"HTTP_AUTHORIZATION": f"Bearer {body['token']}"}
    assert client.post("/auth/logout", **auth).status_code == 204
    assert client.post("/auth/logout", **auth).status_code == 401


def test_disabled_user_token_stops_working(client, admin_user):
    token = login(client, admin_user.email, PASSWORD).json()["token"]
    User.objects.filter(pk=admin_user.pk).update(is_active=False)
    assert client.post("/auth/logout", HTTP_AUTHORIZATION=f"Bearer {token}").status_code == 401


# --- brute force ----------------------------------------------------------------------------------


def test_five_failures_lock_the_email_even_with_the_right_password(client, admin_user):
    for _ in range(5):
        assert login(client, admin_user.email, "wrong-password-123").status_code == 401
    locked = login(client, admin_user.email, PASSWORD)
    assert locked.status_code == 429
    assert locked.json()["code"] == "rate_limited"
    assert 1 <= int(locked["Retry-After"]) <= 15 * 60


def test_unknown_email_is_locked_the_same_way(client, db):
    email = f"ghost-{uuid.uuid4().hex}@x.test"
    for _ in range(5):
        assert login(client, email, "wrong-password-123").status_code == 401
    assert login(client, email, "wrong-password-123").status_code == 429


def test_success_before_the_threshold_forgives_earlier_failures(client, admin_user):
    for _ in range(4):
        login(client, admin_user.email, "wrong-password-123")
    assert login(client, admin_user.email, PASSWORD).status_code == 200
    for _ in range(4):
        assert login(client, admin_user.email, "wrong-password-123").status_code == 401
    assert login(client, admin_user.email, PASSWORD).status_code == 200


def test_ip_threshold_locks_every_email_from_that_ip(client, admin_user, settings):
    settings.AUTH_LOCKOUT_IP_FAILURES = 3
    ip = {"REMOTE_ADDR": "203.0.113.9"}
    for n in range(3):
        assert (
            login(client, f"probe{n}-{uuid.uuid4().hex}@x.test", "wrong-password-123", **ip).status_code
            == 401
        )
    assert login(client, admin_user.email, PASSWORD, **ip).status_code == 429
    assert login(client, admin_user.email, PASSWORD, REMOTE_ADDR="203.0.113.10").status_code == 200


def test_behind_a_trusted_proxy_the_lockout_keys_on_the_client(client, admin_user, settings):
    """The client is the right-most untrusted hop: addresses it writes itself further left neither
    move its failures elsewhere nor lock anyone else out; other clients of the proxy are unaffected."""
    settings.AUTH_LOCKOUT_IP_FAILURES = 2
    settings.TRUSTED_PROXIES = trusted_networks(["10.0.0.0/8"], setting="test")
    via_proxy = {"REMOTE_ADDR": "10.0.0.1"}
    for n, chain in enumerate(["198.51.100.7", "203.0.113.66, 198.51.100.7, 10.0.0.2"]):
        login(
            client,
            f"p{n}-{uuid.uuid4().hex}@x.test",
            "bad-password-123",
            HTTP_X_FORWARDED_FOR=chain,
            **via_proxy,
        )
    locked = login(
        client, admin_user.email, PASSWORD, HTTP_X_FORWARDED_FOR="1.2.3.4, 198.51.100.7", **via_proxy
    )
    assert locked.status_code == 429
    assert (
        login(
            client, admin_user.email, PASSWORD, HTTP_X_FORWARDED_FOR="198.51.100.8", **via_proxy
        ).status_code
        == 200
    )
    assert (
        login(
            client, admin_user.email, PASSWORD, HTTP_X_FORWARDED_FOR="203.0.113.66", **via_proxy
        ).status_code
        == 200
    )


def test_forwarded_for_from_an_untrusted_peer_is_ignored(client, admin_user, settings):
    settings.AUTH_LOCKOUT_IP_FAILURES = 2
    settings.TRUSTED_PROXIES = trusted_networks(["10.0.0.0/8"], setting="test")
    direct = {"REMOTE_ADDR": "203.0.113.5"}
    for n in range(2):  # a new forged address each time cannot dodge the count
        login(
            client,
            f"p{n}-{uuid.uuid4().hex}@x.test",
            "bad-password-123",
            HTTP_X_FORWARDED_FOR=f"198.51.100.{n}",
            **direct,
        )
    assert (
        login(client, admin_user.email, PASSWORD, HTTP_X_FORWARDED_FOR="198.51.100.99", **direct).status_code
        == 429
    )
    assert login(client, admin_user.email, PASSWORD, REMOTE_ADDR="203.0.113.6").status_code == 200


def test_console_login_lockout_keys_on_the_client_behind_a_trusted_proxy(client, admin_user, settings):
    settings.AUTH_LOCKOUT_IP_FAILURES = 2
    settings.TRUSTED_PROXIES = trusted_networks(["10.0.0.1"], setting="test")
    via_proxy = {"REMOTE_ADDR": "10.0.0.1"}
    for n in range(2):
        form = {"email": f"p{n}-{uuid.uuid4().hex}@x.test", "password": "bad-password-123"}
        client.post("/console/login", form, HTTP_X_FORWARDED_FOR="198.51.100.7", **via_proxy)
    form = {"email": admin_user.email, "password": PASSWORD}
    assert (
        client.post("/console/login", form, HTTP_X_FORWARDED_FOR="198.51.100.7", **via_proxy).status_code
        == 429
    )
    assert (
        client.post("/console/login", form, HTTP_X_FORWARDED_FOR="198.51.100.8", **via_proxy).status_code
        == 302
    )


def test_lockout_ends_when_the_window_passes(client, admin_user, settings):
    settings.AUTH_LOCKOUT_WINDOW_SECONDS = 1
    for _ in range(5):
        login(client, admin_user.email, "wrong-password-123")
    locked = login(client, admin_user.email, PASSWORD)
    assert locked.status_code == 429 and locked["Retry-After"] == "1"
    wait_for(
        lambda: login(client, admin_user.email, PASSWORD).status_code == 200, timeout=5, what="lockout to end"
    )


# --- password change ------------------------------------------------------------------------------


def test_password_change_revokes_older_tokens(client, api, make_user, tenant):
    user = make_user(tenant, roles=["viewer"])
    old = login(client, user.email, PASSWORD).json()["token"]
    response = client.post(
        "/auth/password",
        {"currentPassword": PASSWORD, "newPassword": NEW_PASSWORD},
        format="json",
        HTTP_AUTHORIZATION=f"Bearer {old}",
    )
    assert response.status_code == 204, response.content
    assert client.get("/auth/preferences", HTTP_AUTHORIZATION=f"Bearer {old}").status_code == 401
    assert login(client, user.email, PASSWORD).status_code == 401
    fresh = login(client, user.email, NEW_PASSWORD)
    assert fresh.status_code == 200
    assert (
        client.get("/auth/preferences", HTTP_AUTHORIZATION=f"Bearer {fresh.json()['token']}").status_code
        == 200
    )


def test_password_change_wrong_current_is_401(api, make_user, tenant):
    user = make_user(tenant, roles=["viewer"])
    response = api(user).post(
        "/auth/password", {"currentPassword": "nope-nope-nope", "newPassword": NEW_PASSWORD}, format="json"
    )
    assert response.status_code == 401
    assert response.json()["code"] == "invalid_credentials"
    user.refresh_from_db()
    assert user.check_password(PASSWORD)


@pytest.mark.parametrize(
    "body",
    [
        {"currentPassword": PASSWORD, "newPassword": "short"},
        {"currentPassword": PASSWORD, "newPassword": "123456789012345"},
        {"currentPassword": PASSWORD, "newPassword": "password12345"},
        {"currentPassword": PASSWORD},
        {"newPassword": NEW_PASSWORD},
        {"currentPassword": PASSWORD, "newPassword": NEW_PASSWORD, "extra": 1},
    ],
)
def test_password_change_bad_input_is_400(api, make_user, tenant, body):
    user = make_user(tenant, roles=["viewer"])
    response = api(user).post("/auth/password", body, format="json")
    assert response.status_code == 400, response.content
    assert response.json()["code"] == "validation_error"


def test_password_change_anonymous_is_401(client, db):
    response = client.post(
        "/auth/password", {"currentPassword": PASSWORD, "newPassword": NEW_PASSWORD}, format="json"
    )
    assert response.status_code == 401


# --- password set (welcome link) ------------------------------------------------------------------


def test_password_set_with_combined_token_is_one_time(client, make_user, tenant):
    user = make_user(tenant, roles=["viewer"], password=None)
    token = password_set_token(user)
    response = client.post("/auth/password/set", {"token": token, "newPassword": NEW_PASSWORD}, format="json")
    assert response.status_code == 204, response.content
    assert login(client, user.email, NEW_PASSWORD).status_code == 200
    again = client.post(
        "/auth/password/set", {"token": token, "newPassword": NEW_PASSWORD + "x"}, format="json"
    )
    assert again.status_code == 400
    assert again.json()["details"]["field"] == "token"


def test_password_set_with_separate_uid_and_token(client, make_user, tenant):
    user = make_user(tenant, roles=["viewer"], password=None)
    uid, _, token = password_set_token(user).partition(".")
    response = client.post(
        "/auth/password/set", {"uid": uid, "token": token, "newPassword": NEW_PASSWORD}, format="json"
    )
    assert response.status_code == 204


@pytest.mark.parametrize("token", ["", "garbage", "Zm9v.1-abc", "!!!.abc"])
def test_password_set_invalid_token_is_400(client, make_user, tenant, token):
    make_user(tenant, roles=["viewer"], password=None)
    response = client.post("/auth/password/set", {"token": token, "newPassword": NEW_PASSWORD}, format="json")
    assert response.status_code == 400


def test_password_set_weak_password_is_400_and_token_survives(client, make_user, tenant):
    user = make_user(tenant, roles=["viewer"], password=None)
    token = password_set_token(user)
    weak = client.post("/auth/password/set", {"token": token, "newPassword": "short"}, format="json")
    assert weak.status_code == 400 and weak.json()["details"]["field"] == "newPassword"
    assert (
        client.post(
            "/auth/password/set", {"token": token, "newPassword": NEW_PASSWORD}, format="json"
        ).status_code
        == 204
    )


def test_password_set_for_disabled_user_is_400(client, make_user, tenant):
    user = make_user(tenant, roles=["viewer"], password=None)
    token = password_set_token(user)
    User.objects.filter(pk=user.pk).update(is_active=False)
    assert (
        client.post(
            "/auth/password/set", {"token": token, "newPassword": NEW_PASSWORD}, format="json"
        ).status_code
        == 400
    )
