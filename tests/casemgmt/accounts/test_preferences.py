"""GET/PUT /auth/preferences."""

import pytest

from casemgmt.tenancy.models import Theme

DEFAULTS = {
    "theme": "Light",
    "language": "en",
    "timezone": "UTC",
    "itemsPerPage": 25,
    "emailNotifications": True,
}


@pytest.fixture
def user(make_user, tenant):
    return make_user(tenant, roles=["viewer"])


def test_preference_defaults(api, user):
    response = api(user).get("/auth/preferences")
    assert response.status_code == 200
    assert response.json() == DEFAULTS


def test_default_theme_is_the_tenants_default(api, user, tenant):
    Theme.objects.filter(tenant=tenant).update(is_default=False)
    Theme.objects.filter(tenant=tenant, name="Dark").update(is_default=True)
    assert api(user).get("/auth/preferences").json()["theme"] == "Dark"


def test_partial_update_keeps_other_values(api, user):
    client = api(user)
    first = client.put("/auth/preferences", {"timezone": "Europe/Lisbon", "itemsPerPage": 100}, format="json")
    assert first.status_code == 200, first.content
    assert first.json() == {**DEFAULTS, "timezone": "Europe/Lisbon", "itemsPerPage": 100}
    second = client.put(
        "/auth/preferences",
        {"theme": "High Contrast Dark", "emailNotifications": False, "language": "pt-BR"},
        format="json",
    )
    expected = {
        "theme": "High Contrast Dark",
        "language": "pt-BR",
        "timezone": "Europe/Lisbon",
        "itemsPerPage": 100,
        "emailNotifications": False,
    }
    assert second.json() == expected
    assert client.get("/auth/preferences").json() == expected


def test_preferences_are_per_user(api, user, make_user, tenant):
    api(user).put("/auth/preferences", {"itemsPerPage": 10}, format="json")
    other = make_user(tenant, roles=["viewer"])
    assert api(other).get("/auth/preferences").json()["itemsPerPage"] == 25


def test_deleted_theme_falls_back_to_default(api, user, tenant):
    client = api(user)
    client.put("/auth/preferences", {"theme": "Dark"}, format="json")
    Theme.objects.filter(tenant=tenant, name="Dark").delete()
    assert client.get("/auth/preferences").json()["theme"] == "Light"


@pytest.mark.parametrize(
    ("body", "field"),
    [
        ({"timezone": "Mars/Olympus"}, "timezone"),
        ({"timezone": 5}, "timezone"),
        ({"itemsPerPage": 0}, "itemsPerPage"),
        ({"itemsPerPage": 101}, "itemsPerPage"),
        ({"itemsPerPage": "25"}, "itemsPerPage"),
        ({"itemsPerPage": True}, "itemsPerPage"),
        ({"emailNotifications": "yes"}, "emailNotifications"),
        ({"theme": "Neon"}, "theme"),
        ({"language": "english please"}, "language"),
        ({"fontSize": 12}, "fontSize"),
    ],
)
def test_invalid_preferences_are_400_and_change_nothing(api, user, body, field):
    client = api(user)
    response = client.put("/auth/preferences", body, format="json")
    assert response.status_code == 400, response.content
    assert response.json()["details"]["field"] == field
    assert client.get("/auth/preferences").json() == DEFAULTS


def test_theme_of_another_tenant_is_rejected(api, user, other_tenant):
    Theme.objects.create(tenant=other_tenant, name="Globex Only", css_variables={})
    assert api(user).put("/auth/preferences", {"theme": "Globex Only"}, format="json").status_code == 400


def test_body_must_be_an_object(api, user):
    assert api(user).put("/auth/preferences", [1, 2], format="json").status_code == 400


def test_anonymous_is_401(api, db):
    assert api(None).get("/auth/preferences").status_code == 401
    assert api(None).put("/auth/preferences", {"itemsPerPage": 10}, format="json").status_code == 401
