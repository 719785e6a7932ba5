from casemgmt.accounts.models import User
from tests.casemgmt.conftest import PASSWORD


def test_login_then_logout_revokes_the_token(client, admin_user):
    response = client.post(
        "/auth/login", {"email": admin_user.email, "password": PASSWORD}, content_type="application/json"
    )
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
    token = client.post(
        "/auth/login", {"email": admin_user.email, "password": PASSWORD}, content_type="application/json"
    ).json()["token"]
    User.objects.filter(pk=admin_user.pk).update(is_active=False)
    assert client.post("/auth/logout", HTTP_AUTHORIZATION=f"Bearer {token}").status_code == 401
